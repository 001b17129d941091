package io.github.okretry.internal;

import java.util.Date;
import java.util.List;
import okhttp3.Headers;
import okhttp3.Response;

/**
 * Parses {@code Retry-After} (RFC 9110 §10.2.3) into a wait in nanoseconds.
 *
 * <p>Lenient where the RFC allows and strict where a hostile value could hurt: delta-seconds are
 * ASCII digits with optional surrounding spaces or tabs and saturate instead of overflowing;
 * HTTP-dates in all three RFC 9110 formats are parsed by OkHttp's own {@link Headers#getDate} and
 * measured against the response's {@code Date} header when it has one, so a skewed local clock
 * does not stretch or shrink the wait; a past date means 0. Anything else ({@code -1},
 * {@code 1.5}, {@code soon}, empty) is "absent", never an exception, so backoff applies.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class RetryAfter {

  /** Returned when there is no usable {@code Retry-After}. */
  public static final long ABSENT = -1L;

  private static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

  private RetryAfter() {}

  /**
   * The wait the response asks for, in nanoseconds (≥ 0), or {@link #ABSENT}.
   *
   * <p>Several {@code Retry-After} fields are allowed by lenient servers; the longest valid one
   * wins, because honoring the most conservative request is the kind choice for a busy server.
   */
  public static long delayNanos(Response response, WallClock clock) {
    List<String> values = response.headers("Retry-After");
    long best = ABSENT;
    for (int i = 0, n = values.size(); i < n; i++) {
      best = Math.max(best, parse(values.get(i), response.headers(), clock));
    }
    return best;
  }

  /**
   * Parses one field value; {@code responseHeaders} supplies the server's {@code Date}, if any.
   */
  public static long parse(String value, Headers responseHeaders, WallClock clock) {
    if (value == null) return ABSENT;
    int start = 0;
    int end = value.length();
    while (start < end && isSpaceOrTab(value.charAt(start))) start++;
    while (end > start && isSpaceOrTab(value.charAt(end - 1))) end--;
    if (start == end) return ABSENT;
    if (isAsciiDigit(value.charAt(start))) return parseSeconds(value, start, end);
    return parseDate(value.substring(start, end), responseHeaders, clock);
  }

  private static long parseSeconds(String value, int start, int end) {
    long seconds = 0;
    for (int i = start; i < end; i++) {
      char c = value.charAt(i);
      if (!isAsciiDigit(c)) return ABSENT; // "1.5", "10s", "-1" after the sign check
      if (seconds < MAX_SECONDS) seconds = Math.min(MAX_SECONDS, seconds * 10 + (c - '0'));
    }
    return seconds * 1_000_000_000L; // ≤ Long.MAX_VALUE by the choice of MAX_SECONDS
  }

  private static long parseDate(String value, Headers responseHeaders, WallClock clock) {
    // addUnsafeNonAscii never throws, whatever bytes a hostile server sent.
    Date date = new Headers.Builder().addUnsafeNonAscii("Retry-After", value).build().getDate("Retry-After");
    if (date == null) return ABSENT;
    Date serverNow = responseHeaders.getDate("Date");
    long nowMillis = serverNow != null ? serverNow.getTime() : clock.currentTimeMillis();
    long deltaMillis = date.getTime() - nowMillis;
    if (deltaMillis <= 0) return 0; // a date in the past means "now"
    return deltaMillis >= Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : deltaMillis * 1_000_000L;
  }

  private static boolean isSpaceOrTab(char c) {
    return c == ' ' || c == '\t';
  }

  private static boolean isAsciiDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
