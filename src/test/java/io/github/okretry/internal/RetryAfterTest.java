package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
  // Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example instant.
  static final Instant NOW = Instant.parse("1994-11-06T08:49:37Z");
  static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  static final long S = TimeUnit.SECONDS.toNanos(1);

  static long parse(String value) {
    return RetryAfter.parse(value, Headers.of(), CLOCK::millis);
  }

  @ParameterizedTest(name = "\"{0}\" -> {1} s")
  @CsvSource(
      delimiter = '|',
      value = {
        "0|0",
        "1|1",
        "120|120",
        "  7|7",
        "7 \t|7",
        "007|7",
      })
  void deltaSeconds(String value, long seconds) {
    assertThat(parse(value)).isEqualTo(seconds * S);
  }

  @Test
  void tabsAroundDeltaSeconds() {
    assertThat(parse("\t3\t")).isEqualTo(3 * S);
  }

  @Test
  void hugeDeltaSecondsSaturateInsteadOfOverflowing() {
    long max = (Long.MAX_VALUE / 1_000_000_000L) * 1_000_000_000L;
    assertThat(parse("9223372036854775807")).isEqualTo(max);
    assertThat(parse("99999999999999999999999999999999999")).isEqualTo(max);
    assertThat(parse("9223372036")).isEqualTo(9_223_372_036L * S);
  }

  @ParameterizedTest(name = "invalid: \"{0}\"")
  @ValueSource(strings = {"", " ", "-1", "1.5", "soon", "10s", "+5", "1 2", "0x10", "١٢", "Sun, 06 Nov"})
  void invalidValuesAreAbsent(String value) {
    assertThat(parse(value)).isEqualTo(RetryAfter.ABSENT);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "Sun, 06 Nov 1994 08:50:07 GMT", // IMF-fixdate
        "Sunday, 06-Nov-94 08:50:07 GMT", // obsolete RFC 850
        "Sun Nov  6 08:50:07 1994", // ANSI C asctime()
      })
  void allThreeHttpDateFormats(String value) {
    assertThat(parse(value)).isEqualTo(30 * S);
  }

  @Test
  void pastDateMeansZero() {
    assertThat(parse("Sun, 06 Nov 1994 08:00:00 GMT")).isZero();
  }

  @Test
  void dateIsMeasuredAgainstTheServersDateHeaderNotTheLocalClock() {
    // The local clock is an hour fast; the server says "now" is 08:49:37 and "retry at 08:49:47".
    Clock skewed = Clock.fixed(NOW.plusSeconds(3600), ZoneOffset.UTC);
    Headers headers = Headers.of("Date", "Sun, 06 Nov 1994 08:49:37 GMT");
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", headers, skewed::millis)).isEqualTo(10 * S);
    // Without a Date header, the local clock is all there is.
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", Headers.of(), skewed::millis)).isZero();
  }

  @Test
  void severalFieldsTakeTheLongestValidOne() {
    Response response =
        response(
            new Headers.Builder()
                .add("Retry-After", "2")
                .add("Retry-After", "soon")
                .add("Retry-After", "5")
                .build());
    assertThat(RetryAfter.delayNanos(response, CLOCK::millis)).isEqualTo(5 * S);
    assertThat(RetryAfter.delayNanos(response(Headers.of()), CLOCK::millis)).isEqualTo(RetryAfter.ABSENT);
  }

  @Test
  void nonAsciiGarbageIsAbsentNotAnException() {
    Response response =
        response(new Headers.Builder().addUnsafeNonAscii("Retry-After", "Sün, 06 Növ \u0000").build());
    assertThat(RetryAfter.delayNanos(response, CLOCK::millis)).isEqualTo(RetryAfter.ABSENT);
    assertThat(RetryAfter.parse(null, Headers.of(), CLOCK::millis)).isEqualTo(RetryAfter.ABSENT);
  }

  static Response response(Headers headers) {
    return new Response.Builder()
        .request(new Request.Builder().url("http://example.com/").build())
        .protocol(Protocol.HTTP_1_1)
        .code(503)
        .message("Service Unavailable")
        .headers(headers)
        .build();
  }
}
