package io.github.okretry;

import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okio.AsyncTimeout;
import org.jspecify.annotations.Nullable;

/**
 * Cancels a call when okretry's deadline passes while an attempt is still in flight.
 *
 * <p>Shrinking an attempt's connect, read and write timeouts bounds each I/O operation, not the
 * attempt: a peer that trickles one byte at a time never trips a read timeout. This timer bounds
 * the attempt itself. It runs on okio's one shared watchdog thread (the same that enforces OkHttp's
 * {@code callTimeout}), so no thread is made per call.
 */
final class DeadlineWatch extends AsyncTimeout {

  private final Call call;
  private volatile boolean fired;

  private DeadlineWatch(Call call) {
    this.call = call;
  }

  /** A started watch that cancels {@code call} after {@code remainingNanos}; null for 0 (none). */
  static @Nullable DeadlineWatch start(Call call, long remainingNanos) {
    if (remainingNanos == 0) return null;
    DeadlineWatch watch = new DeadlineWatch(call);
    watch.timeout(Math.max(1, remainingNanos), TimeUnit.NANOSECONDS);
    watch.enter();
    return watch;
  }

  /**
   * Disarms the watch and returns true if it had fired (the deadline passed, the call canceled). A
   * driver stops it as soon as an attempt's outcome is in hand, before any user code (a predicate,
   * a listener) runs on it: a response decided before the deadline must reach the caller, not be
   * canceled under it.
   */
  boolean stop() {
    exit();
    return fired;
  }

  @Override
  protected void timedOut() {
    fired = true;
    call.cancel();
  }
}
