package io.github.okretry;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A policy's worst case in words and numbers ({@link RetryPolicy#explain()}): its attempts, the
 * longest each wait can be, their sum, and, with a client's timeouts, the longest a call can take,
 * or the deadline that bounds it. Pure arithmetic on the settings; the waits are the ones {@link
 * io.github.okretry.internal.Backoff} draws at their largest.
 */
final class PolicyExplanation {

  private PolicyExplanation() {}

  /**
   * The longest wait before each retry (index 0: before retry 1), in nanoseconds, as the backoff
   * draws it at its largest: the cap {@code min(base × multiplier^(n-1), maxDelay)}, or for {@link
   * Jitter#DECORRELATED} three times the previous largest, within {@code maxDelay}. With {@link
   * Jitter#NONE} these are the waits drawn.
   */
  static long[] longestWaitsNanos(Settings s) {
    long[] waits = new long[s.maxRetries];
    long previous = s.baseDelayNanos;
    for (int n = 1; n <= s.maxRetries; n++) {
      long wait;
      if (s.jitter == Jitter.DECORRELATED) {
        long low = Math.min(s.baseDelayNanos, s.maxDelayNanos);
        long high = Math.max(previous, low) > Long.MAX_VALUE / 3 ? Long.MAX_VALUE : Math.max(previous, low) * 3;
        wait = Math.min(s.maxDelayNanos, high);
      } else {
        double cap = s.baseDelayNanos * Math.pow(s.multiplier, n - 1);
        wait = cap >= s.maxDelayNanos ? s.maxDelayNanos : (long) cap;
      }
      waits[n - 1] = wait;
      previous = wait;
    }
    return waits;
  }

  /** The sum of {@code nanos}, saturated. */
  static long sum(long[] nanos) {
    long total = 0;
    for (long n : nanos) total = total + n < total ? Long.MAX_VALUE : total + n;
    return total;
  }

  /**
   * The explanation of {@code s}; with {@code timeouts} (connect, write, read and call timeouts of
   * a client, in milliseconds, 0 for none) the longest a call takes, else null.
   */
  static String explain(Settings s, long @Nullable [] timeoutsMillis) {
    long[] waits = longestWaitsNanos(s);
    long totalWait = sum(waits);
    int attempts = s.maxRetries + 1;
    StringBuilder out = new StringBuilder("Worst case: ").append(attempts)
        .append(attempts == 1 ? " attempt (no retry)." : " attempts (the first and " + s.maxRetries
            + (s.maxRetries == 1 ? " retry)." : " retries)."));
    if (s.maxRetries > 0) {
      out.append(" Waits before the retries, each at most: ");
      for (int i = 0; i < waits.length; i++) {
        if (i > 0) out.append(" + ");
        out.append(seconds(waits[i]));
      }
      out.append(" = ").append(seconds(totalWait)).append(" s of waiting");
      out.append(" (").append(jitterWords(s)).append(").");
      out.append(" A server's Retry-After replaces a wait: up to ").append(seconds(s.maxRetryAfterNanos))
          .append(" s each, a longer one ends the call.");
    }
    long deadline = s.deadlineNanos;
    if (timeoutsMillis != null) {
      long connect = timeoutsMillis[0];
      long write = timeoutsMillis[1];
      long read = timeoutsMillis[2];
      long call = timeoutsMillis[3];
      if (connect == 0 || write == 0 || read == 0) {
        out.append(" With this client's timeouts (connect ").append(millis(connect)).append(", write ")
            .append(millis(write)).append(", read ").append(millis(read)).append(") an attempt is unbounded");
      } else {
        long perAttemptNanos = TimeUnit.MILLISECONDS.toNanos(connect + write + read);
        long total = perAttemptNanos * attempts + (s.maxRetries > 0 ? totalWait : 0);
        out.append(" With this client's timeouts, an attempt that times out takes up to connect ")
            .append(millis(connect)).append(" + write ").append(millis(write)).append(" + read ").append(millis(read))
            .append(" = ").append(seconds(perAttemptNanos)).append(" s (each timeout is per operation: a server that")
            .append(" trickles bytes can hold one longer), so the call takes up to ").append(attempts).append(" × ")
            .append(seconds(perAttemptNanos)).append(s.maxRetries > 0 ? " + " + seconds(totalWait) : "")
            .append(" = ").append(seconds(total)).append(" s");
      }
      if (call != 0 && (deadline == 0 || TimeUnit.MILLISECONDS.toNanos(call) < deadline)) {
        out.append("; its call timeout of ").append(millis(call)).append(" bounds the whole call.");
        return out.toString();
      }
      out.append(deadline != 0 ? ";" : ".");
    }
    if (deadline != 0) {
      out.append(" The deadline of ").append(seconds(deadline)).append(" s bounds the whole call, attempts and waits.");
    } else if (timeoutsMillis == null) {
      out.append(" No deadline: each attempt is bounded by the client's timeouts alone (explain(client) adds them).");
    }
    return out.toString();
  }

  private static String jitterWords(Settings s) {
    String growth = s.jitter == Jitter.DECORRELATED
        ? "decorrelated jitter: each up to 3 × the previous, from " + seconds(s.baseDelayNanos) + " s"
        : "×" + BigDecimal.valueOf(s.multiplier).stripTrailingZeros().toPlainString() + " from "
            + seconds(s.baseDelayNanos) + " s, capped at " + seconds(s.maxDelayNanos) + " s";
    switch (s.jitter) {
      case NONE:
        return growth + "; no jitter: each wait is its cap";
      case FULL:
        return growth + "; Full jitter draws each from 0 to its cap";
      case EQUAL:
        return growth + "; Equal jitter draws each from half its cap to its cap";
      default:
        return growth;
    }
  }

  /** {@code nanos} in seconds, at most 3 decimals, no trailing zeros: 1.4, 31, 0.025. */
  static String seconds(long nanos) {
    return BigDecimal.valueOf(nanos).movePointLeft(9).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros()
        .toPlainString();
  }

  private static String millis(long millis) {
    return millis == 0 ? "none" : seconds(TimeUnit.MILLISECONDS.toNanos(millis)) + " s";
  }
}
