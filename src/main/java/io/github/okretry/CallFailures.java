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
   * thrown} (an IOException, which gets its history and outcome once the call's outcome is known:
   * {@link #delivered}; or an unchecked throw from below as it is), or, if null, the response in
   * hand.
   */
  Step giveUp(
      @Nullable GiveUpReason reason, @Nullable String described, @Nullable Throwable thrown) {
    gaveUpFor = reason;
    last = described;
    if (thrown == null) return Step.RETURN;
    // Decided here, once: a call that ran out of time is reported as canceled by either driver.
    return Step.throwing(thrown, reason == GiveUpReason.DEADLINE_EXCEEDED);
  }

  /**
   * What the caller gets for {@code end}, the THROW {@link #giveUp} answered, now that the call's
   * {@code outcome} is known: its IOException with at most the first and last few earlier failures
   * attached as suppressed and then the outcome's {@link RetryOutcome.Summary}. An instance that
   * already carries a summary was thrown to another call's caller too (one exception shared below
   * okretry: a cached one, a Kotlin {@code object}, an HTTP/2 connection's failure shared by its
   * streams): it gains nothing more, and this call's caller gets a fresh IOException with it as the
   * cause, which carries this call's own history and outcome. So a shared instance grows by one
   * call's suppressed at most, and no caller reads another's outcome. A throw from below that is
   * not an IOException stays as it is, with nothing attached.
   */
  Step delivered(Step end, RetryOutcome outcome) {
    Throwable thrown = end.failure();
    FailureHistory history = earlier;
    earlier = null;
    if (!(thrown instanceof IOException)) return end;
    IOException failure = (IOException) thrown;
    // Throwable's own lock, which addSuppressed takes too: of the calls that end with one shared
    // instance at the same moment, one marks it, and the others see its mark.
    synchronized (failure) {
      if (RetryOutcome.carried(failure) == null) {
        attach(failure, history, outcome);
        return end;
      }
    }
    IOException own = new IOException(failure.toString(), failure);
    attach(own, history, outcome);
    return Step.throwing(own, end.timedOut());
  }

  private static void attach(
      IOException failure, @Nullable FailureHistory history, RetryOutcome outcome) {
    if (history != null) history.attachTo(failure);
    failure.addSuppressed(new RetryOutcome.Summary(outcome));
  }
}
