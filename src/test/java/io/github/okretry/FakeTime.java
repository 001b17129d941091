package io.github.okretry;

import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.Call;

/**
 * A {@link TimeSource} whose clock moves only when the code under test sleeps (or a test calls
 * {@link #advance}), recording every sleep, so a whole retry timeline is asserted instantly.
 */
final class FakeTime implements TimeSource {
  private long nanos = 1_000_000_000L;
  private final List<Duration> sleeps = new ArrayList<>();
  private Runnable duringNextWait;

  @Override
  public synchronized long nanoTime() {
    return nanos;
  }

  @Override
  public void sleep(long sleepNanos, Call call) throws IOException {
    Runnable during = takeDuringNextWait();
    if (during != null) {
      during.run(); // as if on another thread while this one sleeps: a cancel ends the sleep
    }
    TimeSource.checkInterruptedOrCanceled(call);
    synchronized (this) {
      sleeps.add(Duration.ofNanos(sleepNanos));
      nanos += sleepNanos;
    }
  }

  /**
   * Records a wait that {@link FakeScheduler} will end by moving the clock when it runs the task:
   * the async driver's counterpart of {@link #sleep}, so {@link #sleeps()} lists both drivers'
   * waits alike.
   */
  synchronized void recordWait(long waitNanos) {
    sleeps.add(Duration.ofNanos(waitNanos));
  }

  /**
   * Runs {@code r} once the next wait has begun, before it ends: in {@link #sleep} first thing, for
   * {@link FakeScheduler} as a task due at once, before the wait's own. How a test makes another
   * call succeed, or cancels, while a call waits.
   */
  synchronized void duringNextWait(Runnable r) {
    duringNextWait = r;
  }

  synchronized Runnable takeDuringNextWait() {
    Runnable r = duringNextWait;
    duringNextWait = null;
    return r;
  }

  synchronized void advance(Duration d) {
    nanos += d.toNanos();
  }

  synchronized List<Duration> sleeps() {
    return List.copyOf(sleeps);
  }

  synchronized List<Long> sleepMillis() {
    return sleeps.stream().map(Duration::toMillis).toList();
  }
}
