package io.github.okretry.internal;

import io.github.okretry.GiveUpReason;
import java.util.random.RandomGenerator;

/**
 * The pure decision at the heart of okretry: from one failed attempt and the time left, "stop"
 * or "retry after d". It reads no clock, sleeps never and holds no per-call state, so the same
 * instance serves every call and the rules are tested as a table.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 *
 * @param backoff the computed waits
 * @param maxRetryAfterNanos the longest Retry-After honored; a longer one stops the call
 * @param retryAfterSpread upward spread of a Retry-After as a fraction of it, in {@code [0, 1]}
 */
public record RetryPolicy(Backoff backoff, long maxRetryAfterNanos, double retryAfterSpread) {

  /** The value of {@code remainingNanos} for a call without a deadline. */
  public static final long NO_DEADLINE = Long.MAX_VALUE;

  public RetryPolicy {
    if (maxRetryAfterNanos <= 0) {
      throw new IllegalArgumentException("maxRetryAfterNanos <= 0: " + maxRetryAfterNanos);
    }
    if (!(retryAfterSpread >= 0 && retryAfterSpread <= 1)) {
      throw new IllegalArgumentException("retryAfterSpread not in [0, 1]: " + retryAfterSpread);
    }
  }

  /**
   * Decides after attempt {@code attempt} (1 = the first) failed.
   *
   * @param maxRetries retries allowed after the first attempt
   * @param retryable whether the outcome is a transient failure
   * @param safeToRepeat whether sending the request again cannot repeat a side effect
   * @param retryAfterNanos the server's Retry-After, or {@link RetryAfter#ABSENT}
   * @param remainingNanos time left before the deadline, or {@link #NO_DEADLINE}
   * @param previousDelayNanos the previous wait (the base delay before the first retry)
   */
  public Decision decide(
      int attempt,
      int maxRetries,
      boolean retryable,
      boolean safeToRepeat,
      long retryAfterNanos,
      long remainingNanos,
      long previousDelayNanos,
      RandomGenerator random) {
    if (!retryable) return Decision.stop(GiveUpReason.NOT_RETRYABLE);
    if (!safeToRepeat) return Decision.stop(GiveUpReason.NOT_SAFE_TO_REPEAT);
    if (attempt > maxRetries) return Decision.stop(GiveUpReason.RETRIES_EXHAUSTED);

    long delay;
    if (retryAfterNanos != RetryAfter.ABSENT) {
      if (retryAfterNanos > maxRetryAfterNanos) return Decision.stop(GiveUpReason.RETRY_AFTER_TOO_LONG);
      if (retryAfterNanos >= remainingNanos) return Decision.stop(GiveUpReason.DEADLINE_EXCEEDED);
      delay = spreadUpward(retryAfterNanos, remainingNanos, random);
    } else {
      delay = backoff.delayNanos(attempt, previousDelayNanos, random);
    }
    // The next attempt needs some of the time too, so a wait that ends exactly at the deadline
    // is as useless as one that ends after it.
    if (delay >= remainingNanos) return Decision.stop(GiveUpReason.DEADLINE_EXCEEDED);
    return Decision.waitThenRetry(delay);
  }

  /**
   * The server's wait plus a random extra of up to {@code retryAfterSpread} of it: callers told
   * "1 second" do not all return at the same millisecond, and none returns earlier than asked.
   * The extra is trimmed to the ceiling and to half the time the wait leaves before the deadline,
   * so spreading never turns a wait that fits into one that does not, nor leaves the next
   * attempt without time to run.
   *
   * @param waitNanos the server's wait, at most the ceiling and below {@code remainingNanos}
   */
  public long spreadUpward(long waitNanos, long remainingNanos, RandomGenerator random) {
    if (retryAfterSpread == 0 || waitNanos == 0) return waitNanos;
    long extra = Backoff.uniform(random, 0, (long) (waitNanos * retryAfterSpread));
    return Math.min(waitNanos + extra, latestWaitNanos(waitNanos, remainingNanos));
  }

  /**
   * The longest a server's wait of {@code waitNanos} may be stretched, by the spread or by the
   * pacing of a crowd: the ceiling, and half the time the wait leaves before the deadline. Never
   * below {@code waitNanos}.
   *
   * @param waitNanos the server's wait, at most the ceiling and below {@code remainingNanos}
   */
  public long latestWaitNanos(long waitNanos, long remainingNanos) {
    long slack = remainingNanos - waitNanos; // > 0: the caller checked that the wait fits
    return Math.max(waitNanos, Math.min(maxRetryAfterNanos, waitNanos + slack / 2));
  }
}
