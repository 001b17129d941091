package io.github.okretry;

import io.github.okretry.internal.AttemptFacts;
import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.RetryAfter;

/**
 * The pure decision at the heart of okretry: from one failed attempt's {@link AttemptFacts}, "give
 * up" or "retry after d". It reads no clock, sleeps never and holds no per-call state, so one
 * instance serves every call and the rules are tested as a table (docs/semantics.md, "Order of the
 * checks", rows 1 to 6).
 */
final class RetryRules {

  private final Backoff backoff;
  private final long maxRetryAfterNanos;
  private final double retryAfterSpread;

  /**
   * @param backoff the computed waits
   * @param maxRetryAfterNanos the longest Retry-After honored; a longer one stops the call
   * @param retryAfterSpread upward spread of a Retry-After as a fraction of it, in {@code [0, 1]}
   */
  RetryRules(Backoff backoff, long maxRetryAfterNanos, double retryAfterSpread) {
    if (backoff == null) throw new NullPointerException("backoff == null");
    if (maxRetryAfterNanos <= 0) {
      throw new IllegalArgumentException("maxRetryAfterNanos <= 0: " + maxRetryAfterNanos);
    }
    if (!(retryAfterSpread >= 0 && retryAfterSpread <= 1)) {
      throw new IllegalArgumentException("retryAfterSpread not in [0, 1]: " + retryAfterSpread);
    }
    this.backoff = backoff;
    this.maxRetryAfterNanos = maxRetryAfterNanos;
    this.retryAfterSpread = retryAfterSpread;
  }

  /**
   * The longest a call of {@code maxRetries} waits in backoff, all its retries together ({@link
   * Backoff#scheduleNanos}): what the budget measures an origin's outage by.
   */
  long scheduleNanos(int maxRetries) {
    return backoff.scheduleNanos(maxRetries);
  }

  /** Retry after a wait, or give up; the first rule that applies decides. */
  Decision decide(AttemptFacts facts, RandomSource random) {
    if (!facts.retryable) return Decision.giveUp(GiveUpReason.NOT_RETRYABLE);
    if (!facts.safeToRepeat) return Decision.giveUp(GiveUpReason.NOT_SAFE_TO_REPEAT);
    if (facts.attempt > facts.maxRetries) return Decision.giveUp(GiveUpReason.RETRIES_EXHAUSTED);

    long remaining = facts.remainingNanos;
    long delay;
    if (facts.retryAfterNanos != RetryAfter.ABSENT) {
      if (facts.retryAfterNanos > maxRetryAfterNanos) {
        return Decision.giveUp(GiveUpReason.RETRY_AFTER_TOO_LONG);
      }
      if (facts.retryAfterNanos >= remaining) {
        return Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED);
      }
      delay = spreadUpward(facts.retryAfterNanos, remaining, random);
    } else {
      delay = backoff.delayNanos(facts.attempt, facts.previousDelayNanos, random);
    }
    // The next attempt needs some of the time too, so a wait that ends exactly at the deadline
    // is as useless as one that ends after it.
    if (delay >= remaining) return Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED);
    return Decision.retryAfter(delay);
  }

  /**
   * The server's wait plus a random extra of up to {@code retryAfterSpread} of it: callers told "1
   * second" do not all return at the same millisecond, and none returns earlier than asked. The
   * extra is trimmed to {@link #latestWaitNanos}, so spreading never turns a wait that fits into
   * one that does not, nor leaves the next attempt without time to run.
   *
   * <p>Here and below, {@code waitNanos} is the server's wait, at most the ceiling and below {@code
   * remainingNanos}.
   */
  long spreadUpward(long waitNanos, long remainingNanos, RandomSource random) {
    if (retryAfterSpread == 0 || waitNanos == 0) return waitNanos;
    long extra = Backoff.uniform(random, 0, (long) (waitNanos * retryAfterSpread));
    return Math.min(waitNanos + extra, latestWaitNanos(waitNanos, remainingNanos));
  }

  /**
   * The longest {@link #spreadUpward} can make a server's wait: the bound the pacer keeps for a
   * call alone on its origin, so pacing never holds it longer than spreading alone might have.
   */
  long longestSpreadNanos(long waitNanos, long remainingNanos) {
    long spread = waitNanos + (long) (waitNanos * retryAfterSpread);
    return Math.min(
        spread < waitNanos ? Long.MAX_VALUE : spread, latestWaitNanos(waitNanos, remainingNanos));
  }

  /**
   * The longest a server's wait may be stretched, by the spread or by the pacing of a crowd: the
   * ceiling, and half the time the wait leaves before the deadline. Never below {@code waitNanos}.
   */
  long latestWaitNanos(long waitNanos, long remainingNanos) {
    long slack = remainingNanos - waitNanos; // > 0: the caller checked that the wait fits
    return Math.max(waitNanos, Math.min(maxRetryAfterNanos, waitNanos + slack / 2));
  }

  /** The backoff the waits are drawn from: what {@link PolicyExplanation} reads the longest of. */
  Backoff backoff() {
    return backoff;
  }

  @Override
  public String toString() {
    return "RetryRules{"
        + backoff
        + ", maxRetryAfterNanos="
        + maxRetryAfterNanos
        + ", retryAfterSpread="
        + retryAfterSpread
        + "}";
  }
}
