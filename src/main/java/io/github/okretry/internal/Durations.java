package io.github.okretry.internal;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.text.SimpleDateFormat;
import java.time.Duration;
import java.util.Date;
import java.util.Locale;
import java.util.TimeZone;
import java.util.concurrent.TimeUnit;

/**
 * Validation of the duration settings, shared by every builder so each says the same thing: a
 * duration is present, positive (or 0 for none, where a setting allows none) and at most 24 hours,
 * and the message names the setting and the value as the caller wrote it. And durations in words
 * ({@link #seconds}), one form wherever okretry writes one for a reader.
 */
public final class Durations {

  /** The longest duration any setting accepts: 24 hours, in nanoseconds. */
  public static final long LONGEST_NANOS = TimeUnit.HOURS.toNanos(24);

  private Durations() {}

  /** {@code amount} of {@code unit} in nanoseconds, checked. */
  public static long checkedNanos(String name, long amount, TimeUnit unit) {
    if (unit == null) throw new NullPointerException(name + " unit == null");
    if (amount <= 0) {
      throw new IllegalArgumentException(name + " must be positive: " + amount + " " + unit);
    }
    long nanos = unit.toNanos(amount); // saturates, so an overlong value stays overlong
    if (nanos > LONGEST_NANOS) {
      throw new IllegalArgumentException(
          name + " must be at most 24 hours: " + amount + " " + unit);
    }
    return nanos;
  }

  /**
   * {@code amount} of {@code unit} in nanoseconds, checked, where 0 means none (as OkHttp's
   * timeouts).
   */
  public static long checkedNanosOrNone(String name, long amount, TimeUnit unit) {
    if (unit == null) throw new NullPointerException(name + " unit == null");
    if (amount < 0) {
      throw new IllegalArgumentException(
          name + " must be 0 (none) or positive: " + amount + " " + unit);
    }
    return amount == 0 ? 0 : checkedNanos(name, amount, unit);
  }

  /** {@code value} in nanoseconds, checked, where zero means none (as OkHttp's timeouts). */
  @SuppressSignatureCheck
  public static long checkedNanosOrNone(String name, Duration value) {
    if (value == null) throw new NullPointerException(name + " == null");
    if (value.isNegative()) {
      throw new IllegalArgumentException(name + " must be 0 (none) or positive: " + value);
    }
    return value.isZero() ? 0 : checkedNanos(name, value);
  }

  /** {@code value} in nanoseconds, checked; the message shows it as {@link Duration} prints it. */
  @SuppressSignatureCheck
  public static long checkedNanos(String name, Duration value) {
    if (value == null) throw new NullPointerException(name + " == null");
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
    if (value.compareTo(Duration.ofNanos(LONGEST_NANOS)) > 0) {
      throw new IllegalArgumentException(name + " must be at most PT24H: " + value);
    }
    return value.toNanos();
  }

  /** {@code nanos} in seconds, at most 3 decimals, no trailing zeros: 1.4, 31, 0.025. */
  public static String seconds(long nanos) {
    return BigDecimal.valueOf(nanos)
        .movePointLeft(9)
        .setScale(3, RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
  }

  /**
   * The instant {@code epochMillis} in ISO 8601, UTC, to the millisecond: 2026-01-01T00:00:12.000Z
   * (java.time is API 26+).
   */
  @SuppressWarnings("JavaUtilDate")
  public static String instant(long epochMillis) {
    SimpleDateFormat format = new SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT);
    format.setTimeZone(TimeZone.getTimeZone("UTC"));
    return format.format(new Date(epochMillis));
  }
}
