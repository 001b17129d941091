package io.github.okretry.internal;

import io.github.okretry.GiveUpReason;

/**
 * What to do after a failed attempt: stop for {@code giveUp}, or retry after {@code delayNanos}.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 *
 * @param giveUp why to stop, or null to retry
 * @param delayNanos the wait before the next attempt when retrying, else 0
 */
public record Decision(GiveUpReason giveUp, long delayNanos) {

  /** Wait {@code delayNanos}, then make the next attempt. */
  public static Decision waitThenRetry(long delayNanos) {
    if (delayNanos < 0) throw new IllegalArgumentException("delayNanos < 0: " + delayNanos);
    return new Decision(null, delayNanos);
  }

  /** Make no further attempt, for {@code reason}. */
  public static Decision stop(GiveUpReason reason) {
    return new Decision(reason, 0);
  }

  /** True to wait and retry, false to stop. */
  public boolean isRetry() {
    return giveUp == null;
  }
}
