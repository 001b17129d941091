package io.github.okretry.internal;

import static io.github.okretry.internal.RetryAfterValues.ASCTIME;
import static io.github.okretry.internal.RetryAfterValues.IMF_FIXDATE;
import static io.github.okretry.internal.RetryAfterValues.MAX_SECONDS;
import static io.github.okretry.internal.RetryAfterValues.RFC_1123_ZONED;
import static io.github.okretry.internal.RetryAfterValues.RFC_850;
import static io.github.okretry.internal.RetryAfterValues.anyValue;
import static io.github.okretry.internal.RetryAfterValues.bigNumber;
import static io.github.okretry.internal.RetryAfterValues.clock;
import static io.github.okretry.internal.RetryAfterValues.count;
import static io.github.okretry.internal.RetryAfterValues.garbage;
import static io.github.okretry.internal.RetryAfterValues.headers;
import static io.github.okretry.internal.RetryAfterValues.instant;
import static io.github.okretry.internal.RetryAfterValues.spaces;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.Diagnostics;
import io.github.okretry.SeededProperties;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import okhttp3.Headers;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RetryAfter}: delta-seconds (saturating, never overflowing), the three HTTP-date formats
 * measured against the response's own {@code Date}, the longest of several fields, and "absent" for
 * anything else, never an exception; then seeded properties over hostile values. Through the
 * interceptor: {@code DelaysTest}.
 */
@Tag("unit")
class RetryAfterTest {
  // Sun, 06 Nov 1994 08:49:37 GMT, the RFC's own example instant.
  static final Instant NOW = Instant.parse("1994-11-06T08:49:37Z");
  static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  static final Clock NEW_YEAR_2026 =
      Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  static final long S = TimeUnit.SECONDS.toNanos(1);

  static long parse(String value) {
    return RetryAfter.parse(value, Headers.of(), CLOCK::millis);
  }

  static Response response(int code, String... headers) {
    return response(code, Headers.of(headers));
  }

  static Response response(int code, Headers headers) {
    return new Response.Builder()
        .request(new Request.Builder().url("http://example.com/").build())
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("Service Unavailable")
        .headers(headers)
        .build();
  }

  @Nested
  class DeltaSeconds {
    @ParameterizedTest(name = "\"{0}\" -> {1} ns")
    @CsvSource(
        delimiter = '|',
        value = {
          "0|0",
          "1|1000000000",
          "7|7000000000",
          "120|120000000000",
          "007|7000000000",
          "'  7'|7000000000",
          "'7 \t'|7000000000",
          "' 10 '|10000000000",
          "'\t3\t'|3000000000",
          "9223372036|9223372036000000000",
          "9223372037|9223372036000000000",
          "9223372036854775807|9223372036000000000",
          "99999999999999999999999999|9223372036000000000",
          "99999999999999999999999999999999999|9223372036000000000"
        })
    void valuesSaturateInsteadOfOverflowing(String value, long nanos) {
      assertThat(parse(value)).isEqualTo(nanos);
    }

    @ParameterizedTest(name = "invalid: \"{0}\"")
    @ValueSource(
        strings = {
          "",
          " ",
          "\t",
          " \t ",
          "-1",
          "1.5",
          "soon",
          "10s",
          "+3",
          "+5",
          "1 2",
          "0x10",
          "١٢",
          "Sun, 06 Nov",
          "Thu, 01 Xyz 2026 00:00:00 GMT"
        })
    void invalidValuesAreAbsent(String value) {
      assertThat(parse(value)).isEqualTo(RetryAfter.ABSENT);
    }
  }

  @Nested
  class Dates {
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

    @ParameterizedTest(name = "\"{0}\" -> {1} ns")
    @CsvSource(
        delimiter = '|',
        value = {
          "'Thu, 01 Jan 2026 00:00:05 GMT'|5000000000", "'Wed, 31 Dec 2025 23:59:59 GMT'|0",
          "'Thu, 01 Jan 2026 00:00:00 GMT'|0", "'Thursday, 01-Jan-26 00:01:00 GMT'|60000000000",
          "'Thu Jan  1 00:00:02 2026'|2000000000"
        })
    void aPastDateIsZeroAndAFutureOneTheTimeUntilIt(String value, long nanos) {
      assertThat(RetryAfter.parse(value, Headers.of(), NEW_YEAR_2026::millis)).isEqualTo(nanos);
    }

    @Test
    void dateIsMeasuredAgainstTheServersDateHeaderNotTheLocalClock() {
      // The local clock is an hour fast; the server says "now" is 08:49:37 and "retry at 08:49:47".
      Clock skewed = Clock.fixed(NOW.plusSeconds(3600), ZoneOffset.UTC);
      Headers headers = Headers.of("Date", "Sun, 06 Nov 1994 08:49:37 GMT");
      assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", headers, skewed::millis))
          .isEqualTo(10 * S);
      // Without a Date header, the local clock is all there is.
      assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", Headers.of(), skewed::millis))
          .isZero();
    }

    @Test
    void theSystemWallClockIsTheLocalClock() {
      String inAnHour =
          java.time.format.DateTimeFormatter.ofPattern(
                  "EEE, dd MMM yyyy HH:mm:ss 'GMT'", java.util.Locale.US)
              .format(Instant.now().plusSeconds(3_600).atZone(ZoneOffset.UTC)); // IMF-fixdate
      assertThat(RetryAfter.parse(inAnHour, Headers.of(), WallClock.SYSTEM))
          .isBetween(3_590 * S, 3_600 * S);
    }

    @Test
    void serverDateWinsOverTheLocalClockUnlessItIsGarbage() {
      Headers h = Headers.of("Date", "Thu, 01 Jan 2026 00:00:10 GMT");
      assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:15 GMT", h, NEW_YEAR_2026::millis))
          .isEqualTo(5_000_000_000L);
      assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:10 GMT", h, NEW_YEAR_2026::millis))
          .isEqualTo(0);
      assertThat(
              RetryAfter.parse(
                  "Thu, 01 Jan 2026 00:00:11 GMT",
                  Headers.of("Date", "garbage"),
                  NEW_YEAR_2026::millis))
          .isEqualTo(11_000_000_000L);
      assertThat(
              RetryAfter.parse(
                  "Fri, 01 Jan 2300 00:00:00 GMT",
                  Headers.of("Date", "Thu, 01 Jan 1970 00:00:00 GMT"),
                  NEW_YEAR_2026::millis))
          .isEqualTo(Long.MAX_VALUE);
      assertThat(RetryAfter.parse(null, h, NEW_YEAR_2026::millis)).isEqualTo(RetryAfter.ABSENT);
    }

    @Test
    void saturatesExactlyAtTheLastRepresentableMillisecond() {
      long date = Instant.parse("2300-01-01T00:00:00Z").toEpochMilli();
      long limit = Long.MAX_VALUE / 1_000_000L; // 9 223 372 036 854 ms, about 292 years
      String value = "Mon, 01 Jan 2300 00:00:00 GMT";
      Clock atLimit = Clock.fixed(Instant.ofEpochMilli(date - limit), ZoneOffset.UTC);
      Clock justUnder = Clock.fixed(Instant.ofEpochMilli(date - limit + 1), ZoneOffset.UTC);
      assertThat(RetryAfter.parse(value, Headers.of(), atLimit::millis)).isEqualTo(Long.MAX_VALUE);
      assertThat(RetryAfter.parse(value, Headers.of(), justUnder::millis))
          .isEqualTo((limit - 1) * 1_000_000L);
    }
  }

  @Nested
  class Fields {
    @Test
    void theLongestValidOfSeveralFieldsWins() {
      assertThat(RetryAfter.delayNanos(response(503), NEW_YEAR_2026::millis))
          .isEqualTo(RetryAfter.ABSENT);
      assertThat(RetryAfter.delayNanos(response(503, "Retry-After", "x"), NEW_YEAR_2026::millis))
          .isEqualTo(RetryAfter.ABSENT);
      assertThat(
              RetryAfter.delayNanos(
                  response(
                      503,
                      "Retry-After",
                      "2",
                      "Retry-After",
                      "x",
                      "Retry-After",
                      "5",
                      "Retry-After",
                      "1"),
                  NEW_YEAR_2026::millis))
          .isEqualTo(5_000_000_000L);
      assertThat(RetryAfter.delayNanos(response(503, "Retry-After", "0"), NEW_YEAR_2026::millis))
          .isEqualTo(0);
    }

    @Test
    void nonAsciiGarbageIsAbsentNotAnException() {
      Response response =
          response(
              503,
              new Headers.Builder().addUnsafeNonAscii("Retry-After", "Sün, 06 Növ \u0000").build());
      assertThat(RetryAfter.delayNanos(response, CLOCK::millis)).isEqualTo(RetryAfter.ABSENT);
      assertThat(RetryAfter.parse(null, Headers.of(), CLOCK::millis)).isEqualTo(RetryAfter.ABSENT);
    }
  }

  /**
   * Hostile values, generated from seeds ({@link RetryAfterValues}): {@link RetryAfter} never
   * throws and never returns a negative other than {@link RetryAfter#ABSENT}; numbers saturate
   * exactly; all three HTTP-date formats are read exactly.
   */
  @Nested
  class Properties {
    static final int CASES_PER_SEED = 50;

    @AfterAll
    static void printCounts() {
      Diagnostics.println("Retry-After properties: " + RetryAfterValues.COUNTS);
    }

    /** A wait in ms as nanoseconds: 0 for the past, saturated at Long.MAX_VALUE (~292 years). */
    static long waitNanos(long deltaMillis) {
      BigInteger nanos =
          BigInteger.valueOf(Math.max(0, deltaMillis)).multiply(BigInteger.valueOf(1_000_000L));
      return nanos.min(BigInteger.valueOf(Long.MAX_VALUE)).longValueExact();
    }

    static void assertSane(long nanos, String what) {
      assertThat(nanos)
          .as(what)
          .satisfiesAnyOf(
              v -> assertThat(v).isEqualTo(RetryAfter.ABSENT), v -> assertThat(v).isNotNegative());
    }

    @TestFactory
    Stream<DynamicTest> arbitraryStringsNeverThrowNorGoNegative() {
      return SeededProperties.forSeeds(
          "garbage",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              String value = garbage(r);
              Clock clock = clock(r);
              Headers h = r.nextBoolean() ? Headers.of() : headers("Date", garbage(r));
              long nanos = RetryAfter.parse(value, h, clock::millis);
              assertSane(nanos, "parse(\"" + value + "\")");
              count(nanos == RetryAfter.ABSENT ? "garbage:absent" : "garbage:read");
            }
            assertThat(RetryAfter.parse(null, Headers.of(), System::currentTimeMillis))
                .isEqualTo(RetryAfter.ABSENT);
          });
    }

    @TestFactory
    Stream<DynamicTest> numbersSaturateExactly() {
      return SeededProperties.forSeeds(
          "numbers",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              BigInteger n = bigNumber(r);
              String zeros = "0".repeat(r.nextInt(3) == 0 ? r.nextInt(1, 30) : 0);
              String value = spaces(r) + zeros + n + spaces(r);
              long expected =
                  n.min(BigInteger.valueOf(MAX_SECONDS)).longValueExact() * 1_000_000_000L;
              assertThat(RetryAfter.parse(value, Headers.of(), clock(r)::millis))
                  .as("\"%s\"", value)
                  .isEqualTo(expected);
              // A sign, a fraction or a unit makes any number invalid: backoff applies instead.
              String bad =
                  switch (r.nextInt(4)) {
                    case 0 -> "-" + n;
                    case 1 -> "+" + n;
                    case 2 -> n + "." + r.nextInt(10);
                    default -> n + "s";
                  };
              assertThat(RetryAfter.parse(bad, Headers.of(), clock(r)::millis))
                  .as("\"%s\"", bad)
                  .isEqualTo(RetryAfter.ABSENT);
              count("numbers");
            }
          });
    }

    @TestFactory
    Stream<DynamicTest> allThreeDateFormatsAreReadExactly() {
      return SeededProperties.forSeeds(
          "dates",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Clock clock = clock(r);
              Instant now = clock.instant();
              int format = r.nextInt(3);
              Instant at;
              String value;
              if (format == 1) {
                // RFC 850 has a two-digit year, which OkHttp reads relative to the real today (up
                // to
                // 20 years ahead, else the past century), not to the fake clock: keep both near
                // today.
                clock =
                    Clock.fixed(
                        Instant.parse("2026-01-01T00:00:00Z")
                            .plusMillis(r.nextLong(-86_400_000L * 365 * 5, 86_400_000L * 365 * 5)),
                        ZoneOffset.UTC);
                now = clock.instant();
                at =
                    now.plusSeconds(r.nextLong(-86_400L * 365 * 15, 86_400L * 365 * 3))
                        .truncatedTo(ChronoUnit.SECONDS);
                value = RFC_850.format(at);
              } else {
                at = instant(r, now.truncatedTo(ChronoUnit.SECONDS));
                value = (format == 0 ? IMF_FIXDATE : ASCTIME).format(at);
              }
              // Half the responses carry the server's own Date: the wait is measured against it.
              Instant serverNow = null;
              Headers h = Headers.of();
              if (r.nextBoolean()) {
                serverNow =
                    now.plusSeconds(r.nextLong(-7200, 7200)).truncatedTo(ChronoUnit.SECONDS);
                h = headers("Date", IMF_FIXDATE.format(serverNow));
              }
              long reference = serverNow != null ? serverNow.toEpochMilli() : now.toEpochMilli();
              long expected = waitNanos(at.toEpochMilli() - reference);
              long got = RetryAfter.parse(spaces(r) + value + spaces(r), h, clock::millis);
              assertThat(got)
                  .as("\"%s\" (format %d) with Date %s, clock %s", value, format, serverNow, now)
                  .isEqualTo(expected);
              count("dates:" + new String[] {"IMF-fixdate", "RFC850", "asctime"}[format]);
            }
          });
    }

    @TestFactory
    Stream<DynamicTest> zonedDatesAreReadRightOrNotAtAll() {
      return SeededProperties.forSeeds(
          "zoned",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Clock clock = clock(r);
              Instant at = instant(r, clock.instant().truncatedTo(ChronoUnit.SECONDS));
              ZoneId zone =
                  ZoneOffset.ofTotalSeconds(
                      r.nextInt(-17, 18) * 3600 + (r.nextBoolean() ? 0 : 1800));
              String value = RFC_1123_ZONED.format(at.atZone(zone));
              long got = RetryAfter.parse(value, Headers.of(), clock::millis);
              long exact = waitNanos(at.toEpochMilli() - clock.millis());
              // Outside RFC 9110, so "absent" is fine; but a value that is read must be read right.
              assertThat(got).as("\"%s\"", value).isIn(RetryAfter.ABSENT, exact);
              count(got == RetryAfter.ABSENT ? "zoned:absent" : "zoned:read-exactly");
            }
          });
    }

    @TestFactory
    Stream<DynamicTest> severalFieldsTakeTheLongestValidOne() {
      return SeededProperties.forSeeds(
          "fields",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Clock clock = clock(r);
              Headers.Builder hb = new Headers.Builder();
              long expected = RetryAfter.ABSENT;
              int fields = r.nextInt(0, 5);
              for (int f = 0; f < fields; f++) {
                hb.addUnsafeNonAscii("Retry-After", anyValue(r, clock));
              }
              // Headers trims each value (as OkHttp's parser does for a real response): use them as
              // stored.
              for (String v : hb.build().values("Retry-After")) {
                expected = Math.max(expected, RetryAfter.parse(v, Headers.of(), clock::millis));
              }
              long got = RetryAfter.delayNanos(response(503, hb.build()), clock::millis);
              assertSane(got, hb.build().toString());
              assertThat(got).as("%s", hb.build()).isEqualTo(expected);
              count("fields:" + fields);
            }
          });
    }
  }
}
