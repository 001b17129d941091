package io.github.okretry;

import io.github.okretry.internal.FailureHistory;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * What the failures of one {@link LogicalCall} come to: the earlier ones its final exception
 * carries as suppressed (bounded, {@link FailureHistory}), the last one described for listeners,
 * and, once the call gives up, why and what its caller gets ({@link #giveUp}). Also holds the
 * failure of a retry the budget's evidence rule let wait without evidence that retrying works
 * ({@link RetryBudget#payForRetry}): kept out of the history until that retry is sent, since
 * if it never is, the caller gets that failure itself. Like its call, not thread-safe.
 */
final class CallFailures {

  private @Nullable FailureHistory earlier; // made at the first failure
  private @Nullable String last;
  private @Nullable GiveUpReason gaveUpFor;
  private boolean holding; // a retry scheduled without evidence waits to be sent
  private @Nullable IOException held; // its exception; null after a response, which the driver holds

  /** {@code e} (null: nothing) will ride on the final exception, if the call ends with one. */
  void add(@Nullable IOException e) {
    if (e != null) earlier = FailureHistory.add(earlier, e);
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

  /** A retry is scheduled without evidence; {@code failure} (null after a response) is held until it is sent. */
  void hold(@Nullable IOException failure) {
    holding = true;
    held = failure;
  }

  /** True while a retry scheduled without evidence waits to be sent. */
  boolean holding() {
    return holding;
  }

  /** The failure held, or null; nothing is held from now on. */
  @Nullable IOException release() {
    IOException e = held;
    holding = false;
    held = null;
    return e;
  }

  /**
   * The call ends for {@code reason}, its last failure {@code described}: the caller gets {@code
   * thrown} (an IOException with at most the first and last few earlier failures attached as
   * suppressed, or an unchecked throw from below as it is), or, if null, the response in hand.
   */
  Step giveUp(@Nullable GiveUpReason reason, @Nullable String described, @Nullable Throwable thrown) {
    gaveUpFor = reason;
    last = described;
    if (thrown == null) return Step.RETURN;
    if (earlier != null && thrown instanceof IOException) earlier.attachTo((IOException) thrown);
    earlier = null;
    return Step.throwing(thrown);
  }
}
