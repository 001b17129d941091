package io.github.okretry.internal;

import java.util.Date;
import java.util.List;
import okhttp3.Headers;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Parses {@code Retry-After} (RFC 9110 §10.2.3) into a wait in nanoseconds.
 *
 * <p>Lenient where the RFC allows and strict where a hostile value could hurt: delta-seconds are
 * ASCII digits with optional surrounding spaces or tabs and saturate instead of overflowing;
 * HTTP-dates in all three RFC 9110 formats are parsed by OkHttp's own {@link Headers#getDate} and
 * measured against the response's {@code Date} header when it has one, so a skewed local clock does
 * not stretch or shrink the wait; a past date means 0. Anything else ({@code -1}, {@code 1.5},
 * {@code soon}, empty) is "absent", never an exception, so backoff applies.
 *
 * <p>Also the millisecond forms {@code retry-after-ms} (Azure, OpenAI) and {@code
 * x-ms-retry-after-ms} (Azure, Cosmos DB): non-negative decimal milliseconds, a fraction allowed
 * and rounded up to the nanosecond (never shorter than the server asked). A valid one takes
 * precedence over {@code Retry-After}, as in azure-core (Java, JS) and openai-python: the same
 * instruction at a finer grain. Those clients disagree on which ms name comes first; here the
 * longer valid one wins, as for several {@code Retry-After} fields. An invalid one is ignored.
 */
public final class RetryAfter {

  /**
   * No usable {@code Retry-After}: not 0, a valid "retry now"; below every wait, for {@code
   * Math.max}.
   */
  public static final long ABSENT = -1L;

  private static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;
  private static final long MAX_MILLIS = Long.MAX_VALUE / 1_000_000L;

  /** The millisecond forms, each read like the other. */
  private static final String[] MILLIS_FIELDS = {"retry-after-ms", "x-ms-retry-after-ms"};

  private RetryAfter() {}

  /**
   * The wait the response asks for, in nanoseconds (≥ 0), or {@link #ABSENT}.
   *
   * <p>Several {@code Retry-After} fields are allowed by lenient servers; the longest valid one
   * wins, because honoring the most conservative request is the kind choice for a busy server. A
   * valid {@code retry-after-ms} or {@code x-ms-retry-after-ms} takes precedence over them all.
   */
  public static long delayNanos(Response response, WallClock clock) {
    long best = millisDelayNanos(response.headers());
    if (best != ABSENT) return best;
    List<String> values = response.headers("Retry-After");
    for (int i = 0, n = values.size(); i < n; i++) {
      best = Math.max(best, parse(values.get(i), response.headers(), clock));
    }
    return best;
  }

  /** Parses one field value; {@code responseHeaders} supplies the server's {@code Date}, if any. */
  public static long parse(@Nullable String value, Headers responseHeaders, WallClock clock) {
    String v = trimSpacesAndTabs(value);
    if (v.isEmpty()) return ABSENT;
    return isAsciiDigit(v.charAt(0)) ? parseSeconds(v) : parseDate(v, responseHeaders, clock);
  }

  /**
   * The longest valid {@code retry-after-ms} / {@code x-ms-retry-after-ms} of these headers, in
   * nanoseconds (≥ 0), or {@link #ABSENT}.
   */
  public static long millisDelayNanos(Headers headers) {
    long best = ABSENT;
    for (String name : MILLIS_FIELDS) {
      List<String> values = headers.values(name);
      for (int i = 0, n = values.size(); i < n; i++) {
        best = Math.max(best, parseMillis(values.get(i)));
      }
    }
    return best;
  }

  /**
   * Parses one {@code retry-after-ms} value: ASCII digits, optionally a {@code .} and more digits,
   * padded with spaces or tabs; in nanoseconds (≥ 0, saturated at {@link Long#MAX_VALUE}), or
   * {@link #ABSENT} for anything else (a sign, an exponent, a unit, an empty fraction).
   */
  public static long parseMillis(@Nullable String value) {
    String v = trimSpacesAndTabs(value);
    int end = v.length();
    long millis = 0;
    int i = 0;
    for (; i < end && isAsciiDigit(v.charAt(i)); i++) {
      if (millis < MAX_MILLIS) millis = Math.min(MAX_MILLIS, millis * 10 + (v.charAt(i) - '0'));
    }
    if (i == 0) return ABSENT; // "", "-1", "+5", ".5", "soon"
    long fractionNanos = 0;
    if (i < end && v.charAt(i) == '.') {
      int digits = 0;
      boolean more = false; // a non-zero digit past the nanosecond
      for (i++; i < end && isAsciiDigit(v.charAt(i)); i++, digits++) {
        int d = v.charAt(i) - '0';
        if (digits < 6) {
          fractionNanos = fractionNanos * 10 + d;
        } else if (d != 0) {
          more = true;
        }
      }
      if (digits == 0) return ABSENT; // "5."
      for (int k = digits; k < 6; k++) fractionNanos *= 10;
      if (more) fractionNanos++; // round up: never shorter than the server asked
    }
    if (i != end) return ABSENT; // "1e3", "10ms", "1.5.2", "1 2"
    if (millis >= MAX_MILLIS) return Long.MAX_VALUE;
    return millis * 1_000_000L + fractionNanos; // millis < MAX_MILLIS, so this still fits
  }

  private static long parseSeconds(String value) {
    long seconds = 0;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (!isAsciiDigit(c)) return ABSENT; // "1.5", "10s", "1 2"
      if (seconds < MAX_SECONDS) seconds = Math.min(MAX_SECONDS, seconds * 10 + (c - '0'));
    }
    return seconds * 1_000_000_000L; // ≤ Long.MAX_VALUE by the choice of MAX_SECONDS
  }

  @SuppressWarnings("JavaUtilDate") // OkHttp's Headers.getDate gives a Date; java.time is API 26+
  private static long parseDate(String value, Headers responseHeaders, WallClock clock) {
    // addUnsafeNonAscii never throws, whatever bytes a hostile server sent.
    Date date =
        new Headers.Builder()
            .addUnsafeNonAscii("Retry-After", value)
            .build()
            .getDate("Retry-After");
    if (date == null) return ABSENT;
    Date serverNow = responseHeaders.getDate("Date");
    long nowMillis = serverNow != null ? serverNow.getTime() : clock.currentTimeMillis();
    long deltaMillis = date.getTime() - nowMillis;
    if (deltaMillis <= 0) return 0; // a date in the past means "now"
    return deltaMillis >= MAX_MILLIS ? Long.MAX_VALUE : deltaMillis * 1_000_000L;
  }

  // Only spaces and tabs (RFC 9110 OWS), not String.trim()'s other control characters.
  private static String trimSpacesAndTabs(@Nullable String value) {
    if (value == null) return "";
    int start = 0;
    int end = value.length();
    while (start < end && isSpaceOrTab(value.charAt(start))) start++;
    while (end > start && isSpaceOrTab(value.charAt(end - 1))) end--;
    return value.substring(start, end);
  }

  private static boolean isSpaceOrTab(char c) {
    return c == ' ' || c == '\t';
  }

  private static boolean isAsciiDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
