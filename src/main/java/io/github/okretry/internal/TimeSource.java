package io.github.okretry.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.EventListener;
import org.jspecify.annotations.Nullable;

/**
 * The seam through which okretry's decisions read time and the blocking driver waits, after Guava's
 * {@code SleepingStopwatch}: production code uses {@link #SYSTEM}; tests use a fake whose clock
 * advances when it "sleeps", so a whole retry timeline is asserted without real waiting.
 *
 * <p>Outside it, on real time: the async driver waits on the factory's scheduler (which a test
 * replaces with a fake one), {@code DeadlineWatch} cancels on okio's watchdog, and okio deadlines
 * are read against {@link System#nanoTime()} ({@link CallTimeouts}).
 */
public interface TimeSource {

  /**
   * Longest a waiting thread goes without looking at {@link Call#isCanceled()}: only a safety net
   * behind the cancel that wakes it ({@link #SYSTEM}), rare enough that a thousand waiting calls
   * cost next to no CPU.
   */
  long CANCEL_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /**
   * Monotonic ticks in nanoseconds, as {@link System#nanoTime()}; only differences mean anything.
   */
  long nanoTime();

  /**
   * Waits {@code nanos}, returning early only by throwing.
   *
   * @throws InterruptedIOException if the thread is interrupted (the interrupt flag stays set)
   * @throws IOException "Canceled" if {@code call} is canceled while waiting
   */
  void sleep(long nanos, Call call) throws IOException;

  /**
   * Real time. The waiting thread parks until the wait ends, an interrupt, or the call's cancel
   * (also the one {@code callTimeout} makes), which an event listener turns into an unpark.
   */
  TimeSource SYSTEM =
      new TimeSource() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public void sleep(long nanos, Call call) throws IOException {
          // One waker per call, kept in the call's tags and re-armed for each wait: OkHttp copies
          // its listener list on every addEventListener and never removes one, so a waker per
          // wait would cost a call with many retries quadratic copies and a listener per wait.
          CancelWaker waker = CancelWaker.of(call);
          waker.waiter = Thread.currentThread();
          try {
            long end = System.nanoTime() + nanos;
            checkInterruptedOrCanceled(call); // after adding the waker, so no cancel is missed
            for (long left = nanos; left > 0; left = end - System.nanoTime()) {
              LockSupport.parkNanos(Math.min(left, CANCEL_POLL_NANOS));
              checkInterruptedOrCanceled(call);
            }
          } finally {
            waker.waiter = null;
          }
        }

        @Override
        public String toString() {
          return "TimeSource.SYSTEM";
        }
      };

  /** Unparks a waiting thread when its call is canceled. */
  final class CancelWaker extends EventListener implements Function0<CancelWaker> {
    // A KClass made once: OkHttp's tag(Class) makes one at each call.
    private static final KClass<CancelWaker> KIND =
        JvmClassMappingKt.getKotlinClass(CancelWaker.class);

    volatile @Nullable Thread waiter; // set for each wait, null between them

    private CancelWaker() {}

    /**
     * {@code call}'s waker, made and added to it at its first wait. A new one supplies itself to
     * the tag, so no lambda is made for it.
     */
    static CancelWaker of(Call call) {
      CancelWaker waker = call.tag(KIND);
      if (waker != null) return waker;
      CancelWaker made = new CancelWaker();
      waker = call.tag(KIND, made);
      if (waker == made) call.addEventListener(made);
      return waker;
    }

    @Override
    public CancelWaker invoke() {
      return this;
    }

    @Override
    public void canceled(Call call) {
      Thread t = waiter;
      if (t != null) LockSupport.unpark(t);
    }
  }

  /**
   * Throws if the wait must end now. Shared by every implementation so the fake and the real one
   * agree on what an interrupt and a cancel look like to the caller.
   */
  static void checkInterruptedOrCanceled(Call call) throws IOException {
    if (Thread.currentThread().isInterrupted()) {
      // isInterrupted() leaves the flag set, which is what a caller up the stack expects.
      throw new InterruptedIOException("interrupted while waiting to retry");
    }
    if (call.isCanceled()) throw new IOException("Canceled");
  }
}
