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
   * Retries whose waits are listed one by one; past that, the first few and the rest as a product.
   */
  private static final int LISTED = 10;

  /**
   * The longest wait before each retry (index 0: before retry 1), in nanoseconds, as the backoff
   * draws it at its largest: the cap {@code min(base × multiplier^(n-1), maxDelay)}, or for {@link
   * Jitter#DECORRELATED} three times the previous largest, within {@code maxDelay}. With {@link
   * Jitter#NONE} these are the waits drawn. At most {@code limit} of them.
   */
  static long[] longestWaitsNanos(Settings s, int limit) {
    long[] waits = new long[Math.min(s.maxRetries, limit)];
    long previous = s.baseDelayNanos;
    for (int n = 1; n <= waits.length; n++) {
      long wait;
      if (s.jitter == Jitter.DECORRELATED) {
        long low = Math.max(previous, Math.min(s.baseDelayNanos, s.maxDelayNanos));
        wait = low > s.maxDelayNanos / 3 ? s.maxDelayNanos : Math.min(s.maxDelayNanos, low * 3);
      } else {
        double cap = s.baseDelayNanos * Math.pow(s.multiplier, n - 1);
        wait = cap >= s.maxDelayNanos ? s.maxDelayNanos : (long) cap;
      }
      waits[n - 1] = wait;
      previous = wait;
    }
    return waits;
  }

  /**
   * The sum of every retry's longest wait, saturated: the listed ones, and past them each at {@code
   * maxDelay} (a wait has reached it by retry 64, whatever the settings).
   */
  static long totalWaitNanos(Settings s) {
    long[] waits = longestWaitsNanos(s, 64);
    long total = 0;
    for (long n : waits) total = saturatedAdd(total, n);
    long rest = s.maxRetries - (long) waits.length;
    if (rest > 0)
      total =
          saturatedAdd(
              total,
              rest > Long.MAX_VALUE / s.maxDelayNanos ? Long.MAX_VALUE : rest * s.maxDelayNanos);
    return total;
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return r < a ? Long.MAX_VALUE : r;
  }

  /**
   * The explanation of {@code s}; with {@code timeoutsMillis} (a client's connect, write, read and
   * call timeouts, in milliseconds, 0 for none; null for none known) the longest a call takes.
   */
  static String explain(Settings s, long @Nullable [] timeoutsMillis) {
    long[] waits = longestWaitsNanos(s, s.maxRetries <= LISTED ? LISTED : LISTED - 2);
    long totalWait = totalWaitNanos(s);
    long attempts = s.maxRetries + 1L;
    StringBuilder out =
        new StringBuilder("Worst case: ")
            .append(attempts)
            .append(
                attempts == 1
                    ? " attempt (no retry)."
                    : " attempts (the first and "
                        + s.maxRetries
                        + (s.maxRetries == 1 ? " retry)." : " retries)."));
    if (s.maxRetries > 0) {
      out.append(" Waits before the retries, each at most: ");
      for (int i = 0; i < waits.length; i++) {
        if (i > 0) out.append(" + ");
        out.append(seconds(waits[i]));
      }
      if (s.maxRetries > waits.length) {
        out.append(" + … (")
            .append(s.maxRetries - waits.length)
            .append(" more, up to ")
            .append(seconds(s.maxDelayNanos))
            .append(" s each)");
      }
      out.append(" = ").append(seconds(totalWait)).append(" s of waiting");
      out.append(" (").append(jitterWords(s)).append(").");
      out.append(" A server's Retry-After replaces a wait: up to ")
          .append(seconds(s.maxRetryAfterNanos))
          .append(" s each, a longer one ends the call.");
    }
    long deadline = s.deadlineNanos;
    long callNanos = 0;
    if (timeoutsMillis != null) {
      long connect = timeoutsMillis[0];
      long write = timeoutsMillis[1];
      long read = timeoutsMillis[2];
      callNanos = TimeUnit.MILLISECONDS.toNanos(timeoutsMillis[3]);
      if (connect == 0 || write == 0 || read == 0) {
        out.append(" With this client's timeouts (connect ")
            .append(millis(connect))
            .append(", write ")
            .append(millis(write))
            .append(", read ")
            .append(millis(read))
            .append(") an attempt has no bound.");
      } else {
        long perAttemptNanos = TimeUnit.MILLISECONDS.toNanos(connect + write + read);
        long total =
            saturatedAdd(
                attempts > Long.MAX_VALUE / perAttemptNanos
                    ? Long.MAX_VALUE
                    : perAttemptNanos * attempts,
                totalWait);
        out.append(" With this client's timeouts, an attempt that times out takes up to connect ")
            .append(millis(connect))
            .append(" + write ")
            .append(millis(write))
            .append(" + read ")
            .append(millis(read))
            .append(" = ")
            .append(seconds(perAttemptNanos))
            .append(" s (each is per operation: a server that")
            .append(" trickles bytes holds one longer), so a call takes up to ")
            .append(attempts)
            .append(" × ")
            .append(seconds(perAttemptNanos))
            .append(s.maxRetries > 0 ? " + " + seconds(totalWait) : "")
            .append(" = ")
            .append(seconds(total))
            .append(" s.");
      }
    }
    if (callNanos != 0 && (deadline == 0 || callNanos < deadline)) {
      out.append(" The client's call timeout of ")
          .append(seconds(callNanos))
          .append(" s bounds the whole call.");
    } else if (deadline != 0) {
      out.append(" The deadline of ")
          .append(seconds(deadline))
          .append(" s bounds the whole call, attempts and waits.");
    } else if (timeoutsMillis == null) {
      out.append(
          " No deadline: the client's timeouts alone bound each attempt (explain(client) adds them"
              + " up).");
    } else {
      out.append(" No deadline or call timeout bounds it.");
    }
    return out.toString();
  }

  private static String jitterWords(Settings s) {
    String growth =
        s.jitter == Jitter.DECORRELATED
            ? "decorrelated jitter: each up to 3 × the previous, from "
                + seconds(s.baseDelayNanos)
                + " s"
            : "×"
                + BigDecimal.valueOf(s.multiplier).stripTrailingZeros().toPlainString()
                + " from "
                + seconds(s.baseDelayNanos)
                + " s, capped at "
                + seconds(s.maxDelayNanos)
                + " s";
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
    return BigDecimal.valueOf(nanos)
        .movePointLeft(9)
        .setScale(3, RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
  }

  private static String millis(long millis) {
    return millis == 0 ? "none" : seconds(TimeUnit.MILLISECONDS.toNanos(millis)) + " s";
  }
}
