package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Per-request overrides: a {@link RetryOverrides} tag replaces the policy's {@code maxRetries} and
 * deadline for that one call; and the value type itself.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class RetryOverridesTest extends ScriptedTest {

  RetryOverridesTest(Driver driver) {
    this.driver = driver;
  }

  static Request with(RetryOverrides overrides) {
    return get().newBuilder().tag(RetryOverrides.class, overrides).build();
  }

  @Nested
  class PerRequest {
    @Test
    void overridesReplaceTheDeadlineAndTheRetryCount() throws IOException {
      script.status(503).status(503).status(200);
      RetryOverrides overrides =
          RetryOverrides.builder().maxRetries(1).deadline(Duration.ofMillis(700)).build();
      try (Response r = client(retry().maxRetries(5)).newCall(with(overrides)).execute()) {
        assertThat(r.code()).isEqualTo(503);
      }
      assertThat(script.attempts()).isEqualTo(2);
      assertThat(script.seen().get(0).readTimeoutMillis()).isEqualTo(700);
    }

    @Test
    void noRetriesAndATightDeadlineEachEndTheCallAfterOneAttempt() throws IOException {
      script.status(503).status(503);
      Call.Factory client = client(quietRetry().jitter(Jitter.NONE).maxRetries(5));
      assertThat(code(client, with(RetryOverrides.builder().maxRetries(0).build()))).isEqualTo(503);
      assertThat(script.attempts()).isEqualTo(1);
      // A per-request deadline replaces the interceptor's: base delay 200 ms does not fit in 150
      // ms.
      assertThat(
              code(client, with(RetryOverrides.builder().deadline(Duration.ofMillis(150)).build())))
          .isEqualTo(503);
      assertThat(script.attempts()).isEqualTo(2);
      assertThat(time.sleeps()).isEmpty();
    }

    @Test
    void anOverrideOfTheRetryCountAloneKeepsThePolicysDeadline() throws IOException {
      script.status(503).status(200);
      Call.Factory client = client(retry().jitter(Jitter.NONE).deadline(Duration.ofMillis(150)));
      assertThat(code(client, with(RetryOverrides.builder().maxRetries(5).build()))).isEqualTo(503);
      assertThat(script.seen().get(0).readTimeoutMillis()).isEqualTo(150);
      assertThat(events.lines("gaveUp")).containsExactly("gaveUp 1 DEADLINE_EXCEEDED HTTP 503");
    }

    @Test
    void aPerRequestDeadlineBoundsTheFirstAttemptEvenWithoutAPolicyDeadline() throws IOException {
      script.status(503).status(200);
      Call.Factory client = client(quietRetry().jitter(Jitter.NONE));
      assertThat(
              code(client, with(RetryOverrides.builder().deadline(Duration.ofMillis(700)).build())))
          .isEqualTo(200);
      assertThat(script.seen().get(0).readTimeoutMillis())
          .as("the call starts with its deadline")
          .isEqualTo(700);
      assertThat(script.seen().get(1).readTimeoutMillis()).as("200 ms later").isEqualTo(500);
    }
  }

  @Nested
  class Values {
    @Test
    void overridesApplyWhatTheySetAndThePolicysValueOtherwise() {
      RetryPolicy policy =
          RetryPolicy.builder().maxRetries(4).deadline(9, TimeUnit.SECONDS).build();
      RetryOverrides o =
          RetryOverrides.builder().maxRetries(2).deadline(1500, TimeUnit.MILLISECONDS).build();
      assertThat(LogicalCall.maxRetries(o, policy)).isEqualTo(2);
      assertThat(LogicalCall.deadlineNanos(o, policy)).isEqualTo(1_500_000_000L);
      assertThat(o)
          .isEqualTo(
              RetryOverrides.builder().maxRetries(2).deadline(Duration.ofMillis(1500)).build())
          .hasSameHashCodeAs(
              RetryOverrides.builder().maxRetries(2).deadline(Duration.ofMillis(1500)).build())
          .isNotEqualTo(RetryOverrides.builder().maxRetries(0).build())
          .isNotEqualTo("RetryOverrides");
      assertThat(o.toString()).isEqualTo("RetryOverrides{maxRetries=2, deadlineNanos=1500000000}");
      RetryOverrides none = RetryOverrides.builder().build();
      assertThat(none.toString()).isEqualTo("RetryOverrides{maxRetries=null, deadlineNanos=null}");
      assertThat(LogicalCall.maxRetries(none, policy)).isEqualTo(4);
      assertThat(LogicalCall.deadlineNanos(none, policy)).isEqualTo(9_000_000_000L);
      assertThat(LogicalCall.maxRetries(null, policy)).isEqualTo(4);
      assertThat(LogicalCall.maxRetries(RetryOverrides.builder().maxRetries(0).build(), policy))
          .isEqualTo(0);
      assertThat(RetryOverrides.builder().maxRetries(1).build().hashCode())
          .isNotEqualTo(RetryOverrides.builder().maxRetries(2).build().hashCode());
    }

    static Stream<Arguments> badOverrides() {
      return Stream.of(
          bad(
              "negative retries",
              () -> RetryOverrides.builder().maxRetries(-2),
              "maxRetries",
              "-2"),
          bad(
              "overlong deadline",
              () -> RetryOverrides.builder().deadline(Duration.ofDays(3)),
              "deadline",
              "PT72H"),
          bad(
              "zero deadline",
              () -> RetryOverrides.builder().deadline(Duration.ZERO),
              "deadline",
              "PT0S"),
          bad(
              "zero deadline in a TimeUnit",
              () -> RetryOverrides.builder().deadline(0, TimeUnit.SECONDS),
              "deadline",
              "0 SECONDS"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badOverrides")
    void badValuesAreRejectedNamingThem(Executable setting, String field, String value) {
      assertRejectedNaming(setting, field, value);
    }
  }
}
