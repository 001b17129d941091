package io.github.okretry.internal;

/**
 * When one logical call must end, on a monotonic clock: okretry's own deadline (the policy's or a
 * request's override) or OkHttp's call timeout, the shorter winning. Pure arithmetic: every method
 * takes the clock's reading. The one home of the "no deadline" sentinel, {@link #NO_DEADLINE}.
 */
public final class CallDeadline {

  /** Time left, or an end, when there is no deadline: larger than any real one. */
  public static final long NO_DEADLINE = Long.MAX_VALUE;

  /**
   * How much earlier than okretry's clock OkHttp's call timeout may fire: it started a moment
   * before this deadline was computed, so it may run out up to that moment early.
   */
  public static final long CALL_TIMEOUT_SLACK_NANOS = 10_000_000L;

  /** No deadline at all. */
  public static final CallDeadline NONE = new CallDeadline(NO_DEADLINE, false);

  private final long endNanos;
  private final boolean isCallTimeout;

  private CallDeadline(long endNanos, boolean isCallTimeout) {
    this.endNanos = endNanos;
    this.isCallTimeout = isCallTimeout;
  }

  /**
   * The deadline of a call starting at {@code nowNanos}.
   *
   * @param ownNanos okretry's own budget for the call (policy or override), 0 for none
   * @param callTimeoutNanos OkHttp's timeout for the whole call, 0 for none
   */
  public static CallDeadline of(long nowNanos, long ownNanos, long callTimeoutNanos) {
    long own = ownNanos > 0 ? ownNanos : NO_DEADLINE;
    boolean isCallTimeout = callTimeoutNanos > 0 && callTimeoutNanos <= own;
    long budget = isCallTimeout ? callTimeoutNanos : own;
    if (budget == NO_DEADLINE) return NONE;
    long end = nowNanos + budget;
    // Keep NO_DEADLINE meaning "none" even if a huge budget lands on it.
    return new CallDeadline(
        end < nowNanos || end == NO_DEADLINE ? NO_DEADLINE - 1 : end, isCallTimeout);
  }

  public boolean exists() {
    return endNanos != NO_DEADLINE;
  }

  /** The end on the clock, or {@link #NO_DEADLINE}. */
  public long endNanos() {
    return endNanos;
  }

  /** Time left at {@code nowNanos} (negative once passed), or {@link #NO_DEADLINE}. */
  public long remainingNanos(long nowNanos) {
    return endNanos == NO_DEADLINE ? NO_DEADLINE : endNanos - nowNanos;
  }

  /**
   * True once the deadline has run out at {@code nowNanos}; a call-timeout deadline counts as run
   * out {@link #CALL_TIMEOUT_SLACK_NANOS} early (see there).
   */
  public boolean passed(long nowNanos) {
    return exists() && remainingNanos(nowNanos) <= (isCallTimeout ? CALL_TIMEOUT_SLACK_NANOS : 0);
  }

  /**
   * The time okretry must bound an attempt in flight by, from {@code nowNanos}, or 0 for none: its
   * own deadline only, as OkHttp enforces its call timeout itself. Shrunk I/O timeouts bound each
   * read and write, not a peer that trickles bytes.
   */
  public long watchNanos(long nowNanos) {
    return exists() && !isCallTimeout ? Math.max(1, remainingNanos(nowNanos)) : 0;
  }

  /**
   * The call timeout a separate OkHttp call for one attempt needs, from {@code nowNanos}, or 0 for
   * none: what is left of the logical call's call timeout, which OkHttp would otherwise restart in
   * full for each attempt.
   */
  public long attemptCallTimeoutNanos(long nowNanos) {
    return exists() && isCallTimeout ? Math.max(1, remainingNanos(nowNanos)) : 0;
  }

  @Override
  public String toString() {
    return !exists()
        ? "CallDeadline.NONE"
        : "CallDeadline{end=" + endNanos + (isCallTimeout ? ", call timeout}" : "}");
  }
}
