package io.github.okretry;

import io.github.okretry.internal.FailureHistory;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * What the failures of one {@link LogicalCall} come to: the earlier ones its final exception
 * carries as suppressed (bounded, {@link FailureHistory}), the last one described for listeners,
 * and, once the call gives up, why and what its caller gets ({@link #giveUp}). Like its call, not
 * thread-safe.
 */
final class CallFailures {

  private @Nullable FailureHistory earlier; // made at the first failure
  private @Nullable String last;
  private @Nullable GiveUpReason gaveUpFor;

  /** {@code e} (null: nothing) will ride on the final exception, if the call ends with one. */
  void add(@Nullable IOException e) {
    if (e == null) return;
    if (earlier == null) earlier = new FailureHistory();
    earlier.add(e);
  }

  /** The last failure, described ({@link Events#describe}), or null before the first. */
  @Nullable String last() {
    return last;
  }

  /** The attempt that just ended failed as {@code described}. */
  void last(String described) {
    last = described;
  }

  /** Why the call ended, if it gave up; null otherwise. */
  @Nullable GiveUpReason gaveUpFor() {
    return gaveUpFor;
  }

  /**
   * The call ends for {@code reason}, its last failure {@code described}: the caller gets {@code
   * thrown} (an IOException with at most the first and last few earlier failures attached as
   * suppressed, or an unchecked throw from below as it is), or, if null, the response in hand.
   */
  Step giveUp(
      @Nullable GiveUpReason reason, @Nullable String described, @Nullable Throwable thrown) {
    gaveUpFor = reason;
    last = described;
    if (thrown == null) return Step.RETURN;
    if (earlier != null && thrown instanceof IOException) earlier.attachTo((IOException) thrown);
    earlier = null;
    // Decided here, once: a call that ran out of time is reported as canceled by either driver.
    return Step.throwing(thrown, reason == GiveUpReason.DEADLINE_EXCEEDED);
  }
}
