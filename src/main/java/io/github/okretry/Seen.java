package io.github.okretry;

import java.io.IOException;
import java.io.InterruptedIOException;
import org.jspecify.annotations.Nullable;

/**
 * What a driver saw of an attempt, as flags it ORs together for {@link LogicalCall#ended} (0 for
 * nothing). The driver only reports; what they mean is worked out here, with one precedence for
 * both drivers. Pure: every input is passed in.
 */
final class Seen {

  /** The caller canceled the logical call (behind the interceptor: its one call was canceled). */
  static final int CALLER_CANCELED = 1;

  /** The attempt's OkHttp call was canceled, by whomever. */
  static final int ATTEMPT_CANCELED = 2;

  /** The driver's {@link DeadlineWatch} cut the attempt. */
  static final int WATCH_FIRED = 4;

  /** The driving thread is interrupted. */
  static final int INTERRUPTED = 8;

  private Seen() {}

  /**
   * Why a failed attempt (no response) was ended from outside, or null if it ended by itself. One
   * precedence: the deadline (the watch fired, or a cancel once the deadline has {@code passed} is
   * the timeout it is), a cancel (the caller's or another's), an interrupt.
   */
  static @Nullable GiveUpReason cutShort(int seen, boolean deadlinePassed) {
    boolean attemptCanceled = (seen & ATTEMPT_CANCELED) != 0;
    if ((seen & WATCH_FIRED) != 0 || (attemptCanceled && deadlinePassed)) {
      return GiveUpReason.DEADLINE_EXCEEDED;
    }
    return attemptCanceled ? GiveUpReason.CANCELED : cutShortWithResponse(seen);
  }

  /**
   * Why an attempt with a response in hand was ended from outside, or null: the response was
   * decided in time, so neither the deadline nor another's cancel counts; the caller's cancel, then
   * an interrupt, does.
   */
  static @Nullable GiveUpReason cutShortWithResponse(int seen) {
    if ((seen & CALLER_CANCELED) != 0) return GiveUpReason.CANCELED;
    return (seen & INTERRUPTED) != 0 ? GiveUpReason.INTERRUPTED : null;
  }

  /**
   * What the caller gets for an attempt {@code cut} short with a response in hand (the response is
   * closed): what a wait cut short the same way would have thrown.
   */
  static IOException failureFor(GiveUpReason cut) {
    return cut == GiveUpReason.INTERRUPTED
        ? new InterruptedIOException("interrupted")
        : new IOException("Canceled");
  }

  /**
   * What a layer below okretry (an interceptor, a request body) threw, if that is how the attempt
   * ended: {@code error} itself if unchecked, or the cause OkHttp reports on the attempt it
   * canceled for it (not the caller's cancel). A bug, not a cancel.
   */
  static @Nullable Throwable thrownBelow(@Nullable Throwable error, int seen) {
    if (error == null || !(error instanceof IOException)) return error;
    boolean canceledBelow = (seen & CALLER_CANCELED) == 0 && (seen & ATTEMPT_CANCELED) != 0;
    return canceledBelow ? Classifier.thrownBelow((IOException) error) : null;
  }
}
