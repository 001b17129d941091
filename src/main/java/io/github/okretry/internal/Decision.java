package io.github.okretry.internal;

import io.github.okretry.GiveUpReason;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * What to do after an attempt, one of three: {@linkplain Kind#DELIVER deliver} its response (not a
 * failure), {@linkplain Kind#RETRY retry} after a wait, or {@linkplain Kind#GIVE_UP give up} for
 * a reason. A give-up may carry the exception the caller gets instead of the attempt's own
 * outcome (a throwing predicate, a cancel that arrived with a retryable response, an attempt cut
 * at the deadline).
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class Decision {

  /** The three kinds of decision. */
  public enum Kind {
    DELIVER,
    RETRY,
    GIVE_UP
  }

  private static final Decision DELIVER = new Decision(Kind.DELIVER, 0, null, null);

  private final Kind kind;
  private final long delayNanos;
  private final @Nullable GiveUpReason reason;
  private final @Nullable IOException failure;

  private Decision(
      Kind kind, long delayNanos, @Nullable GiveUpReason reason, @Nullable IOException failure) {
    this.kind = kind;
    this.delayNanos = delayNanos;
    this.reason = reason;
    this.failure = failure;
  }

  /** The outcome is not a failure: hand it to the caller as it is. */
  public static Decision deliver() {
    return DELIVER;
  }

  /** Wait {@code delayNanos}, then make the next attempt. */
  public static Decision retryAfter(long delayNanos) {
    if (delayNanos < 0) throw new IllegalArgumentException("delayNanos < 0: " + delayNanos);
    return new Decision(Kind.RETRY, delayNanos, null, null);
  }

  /** Make no further attempt, for {@code reason}; the caller gets the attempt's own outcome. */
  public static Decision giveUp(GiveUpReason reason) {
    return new Decision(Kind.GIVE_UP, 0, reason, null);
  }

  /** Make no further attempt, for {@code reason}; the caller gets {@code failure} instead. */
  public static Decision giveUp(GiveUpReason reason, IOException failure) {
    return new Decision(Kind.GIVE_UP, 0, reason, failure);
  }

  public Kind kind() {
    return kind;
  }

  public boolean isRetry() {
    return kind == Kind.RETRY;
  }

  /** The wait before the next attempt; 0 unless {@link Kind#RETRY}. */
  public long delayNanos() {
    return delayNanos;
  }

  /** Why the call gives up; null unless {@link Kind#GIVE_UP}. */
  public @Nullable GiveUpReason reason() {
    return reason;
  }

  /** The exception that replaces the attempt's outcome, or null to keep the outcome. */
  public @Nullable IOException failure() {
    return failure;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Decision)) return false;
    Decision other = (Decision) o;
    return kind == other.kind
        && delayNanos == other.delayNanos
        && reason == other.reason
        && failure == other.failure;
  }

  @Override
  public int hashCode() {
    return 31 * (31 * kind.hashCode() + (int) (delayNanos ^ (delayNanos >>> 32)))
        + (reason == null ? 0 : reason.hashCode());
  }

  @Override
  public String toString() {
    switch (kind) {
      case DELIVER:
        return "Decision.deliver()";
      case RETRY:
        return "Decision.retryAfter(" + delayNanos + " ns)";
      default:
        return "Decision.giveUp(" + reason + (failure != null ? ", " + failure : "") + ")";
    }
  }
}
