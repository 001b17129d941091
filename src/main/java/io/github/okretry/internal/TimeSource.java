package io.github.okretry.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import okhttp3.Call;

/**
 * The one seam through which okretry reads time and waits, after Guava's {@code SleepingStopwatch}:
 * production code uses {@link #SYSTEM}; tests use a fake whose clock advances when it "sleeps", so
 * a whole retry timeline is asserted without real waiting.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public interface TimeSource {

  /** Longest a waiting thread goes without looking at {@link Call#isCanceled()}. */
  long CANCEL_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** Monotonic ticks in nanoseconds, as {@link System#nanoTime()}; only differences mean anything. */
  long nanoTime();

  /**
   * Waits {@code nanos}, returning early only by throwing.
   *
   * @throws InterruptedIOException if the thread is interrupted (the interrupt flag stays set)
   * @throws IOException "Canceled" if {@code call} is canceled while waiting
   */
  void sleep(long nanos, Call call) throws IOException;

  /** Real time: parks in slices so a cancel is seen within {@link #CANCEL_POLL_NANOS}. */
  TimeSource SYSTEM =
      new TimeSource() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public void sleep(long nanos, Call call) throws IOException {
          long end = System.nanoTime() + nanos;
          for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            checkInterruptedOrCanceled(call);
            LockSupport.parkNanos(Math.min(left, CANCEL_POLL_NANOS));
          }
          checkInterruptedOrCanceled(call);
        }

        @Override
        public String toString() {
          return "TimeSource.SYSTEM";
        }
      };

  /**
   * Throws if the wait must end now. Shared by every implementation so the fake and the real one
   * agree on what an interrupt and a cancel look like to the caller.
   */
  static void checkInterruptedOrCanceled(Call call) throws IOException {
    if (Thread.currentThread().isInterrupted()) {
      // isInterrupted() leaves the flag set, which is what a caller up the stack expects.
      throw new InterruptedIOException("interrupted while waiting to retry");
    }
    if (call.isCanceled()) {
      throw new IOException("Canceled");
    }
  }
}
