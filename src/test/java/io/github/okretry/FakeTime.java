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

  @Override
  public synchronized long nanoTime() {
    return nanos;
  }

  @Override
  public void sleep(long sleepNanos, Call call) throws IOException {
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
