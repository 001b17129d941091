package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import okhttp3.Request;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Issues 14.4 and 15.3/15.6: key blankness, the wording of the final debug line, descriptions. */
class HardeningUnitsTest {

  @ParameterizedTest(name = "[{0}] blank: {1}")
  @CsvSource(delimiter = '|', value = {
    "''         | true",
    "' '        | true",
    "'\t \t'    | true",
    "'\"\"'     | true",
    "'\" \t\"'  | true",
    "' \"\" '   | true",
    "'\"'       | false",
    "'a'        | false",
    "' a '      | false",
    "'\"a\"'    | false",
    "'\"\"\"\"' | false",
  })
  void blankKeys(String value, boolean blank) {
    assertThat(IdempotencyKeys.isBlank(value)).isEqualTo(blank);
  }

  @Test
  void aBlankHeaderIsNoKeyAndIsLeftAsTheCallerSetIt() {
    IdempotencyKeys keys = new IdempotencyKeys("Idempotency-Key", false, true, () -> "generated");
    Request blank = new Request.Builder().url("http://example.test/").header("Idempotency-Key", "").post(okhttp3.RequestBody.create(new byte[0])).build();
    assertThat(keys.hasKey(blank)).isFalse();
    assertThat(keys.stamp(blank)).isSameAs(blank);
    Request keyed = blank.newBuilder().header("Idempotency-Key", "k").build();
    assertThat(keys.hasKey(keyed)).isTrue();
    assertThat(keys.hasKey(keys.stamp(blank.newBuilder().removeHeader("Idempotency-Key").build()))).isTrue();
  }

  @ParameterizedTest(name = "HTTP {0} on attempt {1}")
  @CsvSource(delimiter = '|', value = {
    "200 | 2 | succeeded on attempt 2 (HTTP 200)",
    "204 | 3 | succeeded on attempt 3 (HTTP 204)",
    "500 | 2 | returned HTTP 500 from attempt 2 (not retryable)",
    "404 | 4 | returned HTTP 404 from attempt 4 (not retryable)",
    "304 | 2 | returned HTTP 304 from attempt 2 (not retryable)",
  })
  void theFinalDebugLineSaysWhatHappened(int code, int attempts, String line) {
    assertThat(Events.returnedAfterRetries(code, attempts)).isEqualTo(line);
  }

  @Test
  void descriptionsEscapeAndNameAnonymousExceptions() {
    assertThat(Events.describe(null, new IOException("a\rb"))).isEqualTo("IOException: a\\rb");
    assertThat(Events.describe(null, new IOException())).isEqualTo("IOException");
    IOException anonymous = new IOException("x") {};
    assertThat(Events.describe(null, anonymous)).isEqualTo(anonymous.getClass().getName() + ": x");
  }
}
