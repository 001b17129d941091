package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link TimeSource#SYSTEM}: a real sleep that ends early with an IOException when its call is
 * canceled or its thread interrupted (the flag kept). The tests' fake is {@code FakeTime}.
 */
@Tag("unit")
class TimeSourceTest {
  static final Request REQUEST = new Request.Builder().url("http://example.invalid/").build();
  final OkHttpClient client = new OkHttpClient();

  @Test
  void systemSleepWaitsAndObeysCancelAndInterrupt() throws Exception {
    Call call = client.newCall(REQUEST);
    long start = System.nanoTime();
    TimeSource.SYSTEM.sleep(25_000_000L, call);
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(25_000_000L);
    TimeSource.SYSTEM.sleep(0, call);
    assertThat(TimeSource.SYSTEM.nanoTime()).isGreaterThan(start);
    assertThat(TimeSource.SYSTEM).hasToString("TimeSource.SYSTEM");

    call.cancel();
    assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(1_000_000_000L, call))
        .isExactlyInstanceOf(IOException.class)
        .hasMessage("Canceled");
    assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(0, call)).hasMessage("Canceled");

    Call other = client.newCall(REQUEST);
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(1_000_000_000L, other))
          .isInstanceOf(InterruptedIOException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  /**
   * One cancel waker per call, kept in its tags and re-armed for each wait: OkHttp never removes an
   * event listener, so a waker per wait would pile up on a call with many retries.
   */
  @Test
  void everyWaitOfACallReusesItsOneWaker() throws Exception {
    Call call = client.newCall(REQUEST);
    TimeSource.SYSTEM.sleep(1, call);
    TimeSource.CancelWaker first = call.tag(TimeSource.CancelWaker.class);
    assertThat(first).isNotNull();
    for (int i = 0; i < 100; i++) TimeSource.SYSTEM.sleep(1, call);
    assertThat(call.tag(TimeSource.CancelWaker.class)).isSameAs(first);
    // Still armed per wait: a cancel from another thread ends a long one at once.
    Thread canceler =
        new Thread(
            () -> {
              try {
                Thread.sleep(50);
              } catch (InterruptedException e) {
                return;
              }
              call.cancel();
            });
    long start = System.nanoTime();
    canceler.start();
    assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(10_000_000_000L, call)).hasMessage("Canceled");
    assertThat(System.nanoTime() - start).isLessThan(5_000_000_000L);
    canceler.join();
  }

  /** The cancel wakes the parked thread through the call's event listener, not at the next poll. */
  @Test
  void aCancelEndsASystemSleepAtOnce() throws Exception {
    Call call = client.newCall(REQUEST);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread sleeper =
        new Thread(
            () -> {
              try {
                TimeSource.SYSTEM.sleep(10_000_000_000L, call);
              } catch (Throwable t) {
                thrown.set(t);
              }
            },
            "sleeper");
    sleeper.start();
    while (sleeper.getState() != Thread.State.TIMED_WAITING) Thread.onSpinWait();
    long canceledAt = System.nanoTime();
    call.cancel();
    sleeper.join(5_000);
    long wokeAfterMs = (System.nanoTime() - canceledAt) / 1_000_000;
    assertThat(thrown.get()).isExactlyInstanceOf(IOException.class).hasMessage("Canceled");
    assertThat(wokeAfterMs)
        .as("well before the %d ms poll", TimeSource.CANCEL_POLL_NANOS / 1_000_000)
        .isLessThan(300);
  }
}
