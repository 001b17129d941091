package io.github.okretry;

import org.jspecify.annotations.Nullable;

/**
 * What {@link RetryRules} decides after a failed attempt: {@linkplain #retryAfter retry} after a
 * wait, or {@linkplain #giveUp give up} for a reason. A value: equal decisions are equal.
 */
final class Decision {

  private final long delayNanos; // 0 for a give-up
  private final @Nullable GiveUpReason reason;

  private Decision(long delayNanos, @Nullable GiveUpReason reason) {
    this.delayNanos = delayNanos;
    this.reason = reason;
  }

  /** Wait {@code delayNanos}, then make the next attempt. */
  static Decision retryAfter(long delayNanos) {
    if (delayNanos < 0) throw new IllegalArgumentException("delayNanos < 0: " + delayNanos);
    return new Decision(delayNanos, null);
  }

  /** Make no further attempt, for {@code reason}. */
  static Decision giveUp(GiveUpReason reason) {
    return new Decision(0, reason);
  }

  boolean isRetry() {
    return reason == null;
  }

  /** The wait before the next attempt; 0 for a give-up. */
  long delayNanos() {
    return delayNanos;
  }

  /** Why the call gives up; null for a retry. */
  @Nullable GiveUpReason reason() {
    return reason;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Decision)) return false;
    Decision other = (Decision) o;
    return delayNanos == other.delayNanos && reason == other.reason;
  }

  @Override
  public int hashCode() {
    return 31 * (int) (delayNanos ^ (delayNanos >>> 32)) + (reason == null ? 0 : reason.hashCode());
  }

  @Override
  public String toString() {
    return isRetry()
        ? "Decision.retryAfter(" + delayNanos + " ns)"
        : "Decision.giveUp(" + reason + ")";
  }
}
