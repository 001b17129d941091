package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.SeededProperties;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.stream.Stream;
import okhttp3.Headers;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code retry-after-ms} and {@code x-ms-retry-after-ms} in {@link RetryAfter}: decimal
 * milliseconds (a fraction rounds up to the next nanosecond), saturating, "absent" for anything
 * else; a valid one takes precedence over {@code Retry-After}, an invalid one leaves {@code
 * Retry-After} in charge. Through the interceptor: {@code RetryAfterMillisIntegrationTest}.
 */
@Tag("unit")
class RetryAfterMillisTest {
  static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

  static long delay(String... headers) {
    Response response =
        new Response.Builder()
            .request(new Request.Builder().url("http://example.com/").build())
            .protocol(Protocol.HTTP_1_1)
            .code(429)
            .message("Too Many Requests")
            .headers(RetryAfterValues.headers(headers))
            .build();
    return RetryAfter.delayNanos(response, CLOCK::millis);
  }

  @ParameterizedTest(name = "\"{0}\" -> {1} ns")
  @CsvSource(
      delimiter = '|',
      value = {
        "0|0",
        "1500|1500000000",
        "' 1500\t'|1500000000",
        "0001|1000000",
        "1.5|1500000",
        "0.000001|1",
        "0.0000001|1",
        "0.0000000000001|1",
        "2.5000000|2500000",
        "1.0000001|1000001",
        "9223372036853|9223372036853000000",
        "9223372036853.9999999|9223372036854000000",
        "9223372036854|9223372036854775807",
        "9223372036855|9223372036854775807",
        "99999999999999999999999999999999|9223372036854775807"
      })
  void decimalMillisecondsRoundUpAndSaturate(String value, long nanos) {
    assertThat(RetryAfter.parseMillis(value)).isEqualTo(nanos);
  }

  @ParameterizedTest(name = "hostile: \"{0}\" is absent")
  @ValueSource(
      strings = {
        "",
        " ",
        "-1",
        "-0",
        "+5",
        "1e3",
        "1E3",
        "5.",
        ".5",
        "1.5.2",
        "10ms",
        "1 2",
        "0x10",
        "NaN",
        "inf",
        "Infinity",
        "soon",
        "١٢",
        "1,5",
        "Thu, 01 Jan 2026 00:00:05 GMT",
        "\u0000"
      })
  void hostileValuesAreAbsent(String value) {
    assertThat(RetryAfter.parseMillis(value)).isEqualTo(RetryAfter.ABSENT);
    assertThat(RetryAfter.parseMillis(null)).isEqualTo(RetryAfter.ABSENT);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // headers as name=value pairs separated by ';'            | nanos
        "retry-after-ms=1500                                        | 1500000000",
        "x-ms-retry-after-ms=250                                    | 250000000",
        "retry-after-ms=1500;Retry-After=30                         | 1500000000",
        "x-ms-retry-after-ms=10;Retry-After=30                      | 10000000",
        "retry-after-ms=0;Retry-After=30                            | 0",
        "retry-after-ms=-1;Retry-After=3                            | 3000000000",
        "retry-after-ms=soon;Retry-After=3                          | 3000000000",
        "x-ms-retry-after-ms=1e3;retry-after-ms=-5;Retry-After=2    | 2000000000",
        "retry-after-ms=100;x-ms-retry-after-ms=400                 | 400000000",
        "x-ms-retry-after-ms=400;retry-after-ms=100                 | 400000000",
        "retry-after-ms=100;retry-after-ms=x;retry-after-ms=300     | 300000000",
        "Retry-After=4                                              | 4000000000",
        "RETRY-AFTER-MS=7                                           | 7000000",
      })
  void precedenceOverRetryAfterAndBetweenTheTwoNames(String spec, long nanos) {
    String[] pairs = spec.trim().split(";");
    String[] headers = new String[pairs.length * 2];
    for (int i = 0; i < pairs.length; i++) {
      headers[2 * i] = pairs[i].substring(0, pairs[i].indexOf('='));
      headers[2 * i + 1] = pairs[i].substring(pairs[i].indexOf('=') + 1);
    }
    assertThat(delay(headers)).isEqualTo(nanos);
  }

  @Test
  void noMillisecondFieldLeavesRetryAfterAsItWas() {
    assertThat(RetryAfter.millisDelayNanos(Headers.of())).isEqualTo(RetryAfter.ABSENT);
    assertThat(delay()).isEqualTo(RetryAfter.ABSENT);
    assertThat(delay("Retry-After", "x", "retry-after-ms", "x")).isEqualTo(RetryAfter.ABSENT);
  }

  /**
   * Seeded: any string never throws and is absent or ≥ 0; any decimal reads exactly, rounded up.
   */
  @TestFactory
  Stream<DynamicTest> arbitraryValuesNeverThrowAndDecimalsReadExactly() {
    BigDecimal max = BigDecimal.valueOf(Long.MAX_VALUE);
    return SeededProperties.forSeeds(
        "retry-after-ms",
        r -> {
          for (int i = 0; i < 50; i++) {
            String garbage = RetryAfterValues.garbage(r);
            long got = RetryAfter.parseMillis(garbage);
            assertThat(got).as("\"%s\"", garbage).matches(v -> v == RetryAfter.ABSENT || v >= 0);
            String whole = RetryAfterValues.bigNumber(r).toString();
            String value = r.nextBoolean() ? whole : whole + "." + RetryAfterValues.bigNumber(r);
            BigDecimal nanos =
                new BigDecimal(value).movePointRight(6).setScale(0, RoundingMode.CEILING);
            long expected = nanos.min(max).longValueExact();
            // Saturation starts at the last whole millisecond Long.MAX_VALUE holds.
            if (new BigDecimal(whole).compareTo(BigDecimal.valueOf(Long.MAX_VALUE / 1_000_000L))
                >= 0) {
              expected = Long.MAX_VALUE;
            }
            assertThat(RetryAfter.parseMillis(RetryAfterValues.spaces(r) + value))
                .as("\"%s\"", value)
                .isEqualTo(expected);
          }
        });
  }
}
