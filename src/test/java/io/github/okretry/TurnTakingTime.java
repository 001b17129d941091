package io.github.okretry;

import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;

/**
 * Fake time for a crowd of blocking calls, the blocking driver's counterpart of {@link
 * FakeScheduler}: each task (a call's {@code execute()}) runs on a thread of its own, but only one
 * runs at a time. When the one running sleeps or ends, the clock moves to the earliest wake-up due
 * and that thread runs next (ties in the order their sleeps began). The crowd is concurrent on the
 * fake clock and sequential in fact, so the same tasks make the same timeline on every run, and no
 * thread waits in real time for another's sleep.
 *
 * <p>Nothing but {@link #sleep} may block a task: a task that waits for another task's progress any
 * other way would hang (the run fails after a minute of real time instead). A sleep sees a cancel
 * or an interrupt only when its turn comes.
 */
final class TurnTakingTime implements TimeSource {

  /** A thread's next turn: when, in what order among turns at that time, and what lets it run. */
  private record Turn(long atNanos, long sequence, Semaphore go) {}

  private long nanos = 1_000_000_000L;
  private long sequence;
  private final PriorityQueue<Turn> due =
      new PriorityQueue<>(
          Comparator.comparingLong(Turn::atNanos).thenComparingLong(Turn::sequence));
  private boolean running; // a task's thread has the turn

  @Override
  public synchronized long nanoTime() {
    return nanos;
  }

  /** Moves the clock; only between runs, when no task is left. */
  synchronized void advance(Duration d) {
    if (running) throw new IllegalStateException("a task is running");
    nanos += d.toNanos();
  }

  /**
   * Runs {@code tasks}, all starting now in list order, one at a time as described above; returns
   * when every one has ended. Rethrows the first failure of a task, with the others suppressed.
   */
  void runAll(List<? extends Callable<?>> tasks) throws Exception {
    runAll(tasks, 0);
  }

  /** As {@link #runAll(List)}, task {@code i} starting {@code i × everyNanos} from now. */
  void runAll(List<? extends Callable<?>> tasks, long everyNanos) throws Exception {
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    synchronized (this) {
      if (running) throw new IllegalStateException("already running");
      for (int i = 0; i < tasks.size(); i++) {
        Callable<?> task = tasks.get(i);
        Turn turn = enqueue(nanos + i * everyNanos);
        threads.add(
            new Thread(
                () -> {
                  try {
                    await(turn);
                    task.call();
                  } catch (Throwable t) {
                    synchronized (failures) {
                      failures.add(t);
                    }
                  } finally {
                    synchronized (this) {
                      handOn();
                    }
                  }
                },
                "turn-taking-" + i));
      }
      handOn();
    }
    for (Thread t : threads) t.start();
    long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    for (Thread t : threads) {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
      if (t.isAlive()) {
        for (Thread other : threads) other.interrupt();
        throw new AssertionError(t.getName() + " did not end: a task waits outside sleep()?");
      }
    }
    synchronized (failures) {
      if (failures.isEmpty()) return;
      Throwable first = failures.get(0);
      for (Throwable other : failures.subList(1, failures.size())) first.addSuppressed(other);
      if (first instanceof Exception e) throw e;
      throw (Error) first;
    }
  }

  @Override
  public void sleep(long sleepNanos, Call call) throws IOException {
    TimeSource.checkInterruptedOrCanceled(call);
    Turn turn;
    synchronized (this) {
      turn = enqueue(nanos + sleepNanos);
      handOn();
    }
    await(turn);
    TimeSource.checkInterruptedOrCanceled(call);
  }

  private Turn enqueue(long atNanos) { // guarded by this
    Turn turn = new Turn(atNanos, sequence++, new Semaphore(0));
    due.add(turn);
    return turn;
  }

  /**
   * The thread that ran is about to sleep, or has ended: the earliest turn due runs, at its time.
   * Each turn has its own semaphore, so only its thread wakes. Guarded by this.
   */
  private void handOn() {
    Turn next = due.poll();
    running = next != null;
    if (next == null) return;
    nanos = Math.max(nanos, next.atNanos());
    next.go().release();
  }

  private static void await(Turn turn) {
    try {
      turn.go().acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for its turn: the run hung", e);
    }
  }
}
