package io.github.okretry.internal;

import java.io.IOException;
import java.net.SocketTimeoutException;
import okio.Timeout;

/**
 * Reads a call's {@link Timeout} the way OkHttp enforces it: a timeout, a deadline, or both, the
 * shorter winning. OkHttp's own calls honor {@code call.timeout().deadline(…)} as well as {@code
 * timeout(…)}; so must okretry wherever it is the one enforcing the call's time.
 */
public final class CallTimeouts {

  private CallTimeouts() {}

  /**
   * The time {@code timeout} allows from now, in nanoseconds, or 0 when it sets no limit. A
   * deadline already passed allows 1 ns: the call ends at once, as OkHttp's would.
   */
  public static long nanosAllowed(Timeout timeout) {
    long nanos = timeout.timeoutNanos();
    if (timeout.hasDeadline()) {
      // okio deadlines are on System.nanoTime(); turned into a duration here, at the call's start.
      long untilDeadline = Math.max(1, timeout.deadlineNanoTime() - System.nanoTime());
      nanos = nanos == 0 ? untilDeadline : Math.min(nanos, untilDeadline);
    }
    return nanos;
  }

  /**
   * The exception for an attempt okretry itself cut short at the deadline: a {@link
   * SocketTimeoutException}, as OkHttp's own timeouts are, with the cancel as its cause.
   */
  public static IOException deadlineTimeout(IOException cause) {
    if (cause instanceof SocketTimeoutException) return cause;
    SocketTimeoutException timeout = new SocketTimeoutException("okretry deadline exceeded");
    timeout.initCause(cause);
    return timeout;
  }
}
