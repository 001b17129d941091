package io.github.okretry.internal;

import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import okhttp3.Headers;

/**
 * Seeded {@code Retry-After} values for the property tests ({@code RetryAfterTest.Properties} and
 * the interceptor's {@code DelaysTest.Properties}): garbage, numbers near the edges, the three
 * HTTP-date formats and a zoned one, and clocks to read them against. Counts what the properties
 * saw, for the diagnostic line they print with {@code -Dokretry.printTables=true}.
 */
public final class RetryAfterValues {
  private RetryAfterValues() {}

  public static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

  public static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);
  public static final DateTimeFormatter RFC_850 =
      DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);
  public static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);

  /** Not an HTTP-date (those are GMT only) but sent by real servers: a zone offset or name. */
  public static final DateTimeFormatter RFC_1123_ZONED =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss Z", Locale.US);

  /** What the properties saw, by kind ("garbage:absent", "dates:RFC850", ...). */
  public static final Map<String, LongAdder> COUNTS = new ConcurrentSkipListMap<>();

  public static void count(String what) {
    COUNTS.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  private static final String ALPHABET =
      "0123456789 \t-+.,:;eE\"'()GMTUTCSunMonDecNov/\\\u0000\u007f\u00e9\u00a0\u3000\uff11\r\n";

  /** Up to 40 characters: digits, separators, letters of dates, controls, lone surrogates. */
  public static String garbage(SplittableRandom r) {
    int n = r.nextInt(0, 40);
    StringBuilder s = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      int kind = r.nextInt(10);
      if (kind == 0) {
        s.appendCodePoint(r.nextInt(0x10000, 0x10FFFF)); // astral: a surrogate pair
      } else if (kind == 1) {
        s.append((char) r.nextInt(0, 0x10000)); // anything, lone surrogates included
      } else {
        s.append(ALPHABET.charAt(r.nextInt(ALPHABET.length())));
      }
    }
    return s.toString();
  }

  /** Digit strings near the interesting edges, as a decimal BigInteger. */
  public static BigInteger bigNumber(SplittableRandom r) {
    BigInteger longMax = BigInteger.valueOf(Long.MAX_VALUE);
    BigInteger maxSeconds = BigInteger.valueOf(MAX_SECONDS);
    BigInteger k = BigInteger.valueOf(r.nextInt(0, 1000));
    return switch (r.nextInt(7)) {
      case 0 -> longMax.add(k);
      case 1 -> longMax.subtract(k);
      case 2 -> maxSeconds.add(k);
      case 3 -> maxSeconds.subtract(k).max(BigInteger.ZERO);
      case 4 -> BigInteger.TEN.pow(r.nextInt(0, 60));
      case 5 ->
          new BigInteger(r.nextInt(1, 400), new java.util.Random(r.nextLong())); // up to 400 bits
      default -> BigInteger.valueOf(r.nextLong(0, 100_000));
    };
  }

  /** Nothing, a space, or a tab and a space: the whitespace a value may be padded with. */
  public static String spaces(SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> " ";
      case 1 -> "\t ";
      default -> "";
    };
  }

  /** An instant with whole seconds between 1900 and 9999 (or near {@code near}). */
  public static Instant instant(SplittableRandom r, Instant near) {
    if (r.nextBoolean()) return near.plusSeconds(r.nextLong(-86_400 * 3, 86_400 * 3));
    long min = ZonedDateTime.of(1900, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toEpochSecond();
    long max = ZonedDateTime.of(9999, 12, 31, 23, 59, 59, 0, ZoneOffset.UTC).toEpochSecond();
    return Instant.ofEpochSecond(r.nextLong(min, max));
  }

  /** A fixed clock in years RFC 850's two-digit "yy" reads unambiguously (1960 to 2040). */
  public static Clock clock(SplittableRandom r) {
    long from = ZonedDateTime.of(1960, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
    long to = ZonedDateTime.of(2040, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
    return Clock.fixed(Instant.ofEpochMilli(r.nextLong(from, to)), ZoneOffset.UTC);
  }

  /** Headers with these names and values as they are, non-ASCII included. */
  public static Headers headers(String... namesAndValues) {
    Headers.Builder b = new Headers.Builder();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      b.addUnsafeNonAscii(namesAndValues[i], namesAndValues[i + 1]);
    }
    return b.build();
  }

  /**
   * A value of any of the kinds above: garbage, small or huge numbers, or a date near {@code
   * clock}.
   */
  public static String anyValue(SplittableRandom r, Clock clock) {
    return switch (r.nextInt(6)) {
      case 0 -> garbage(r);
      case 1 -> String.valueOf(r.nextInt(0, 5));
      case 2 -> String.valueOf(r.nextLong(0, 3_600));
      case 3 -> bigNumber(r).toString();
      case 4 -> IMF_FIXDATE.format(clock.instant().plusSeconds(r.nextLong(-100, 3_600)));
      default -> ASCTIME.format(instant(r, clock.instant()));
    };
  }
}
