package io.github.okretry;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ScheduledExecutorService} on {@link FakeTime}: nothing runs until the test calls {@link
 * #runUntilIdle()}, which runs every task in the order of its due time on the test's own thread,
 * moving the fake clock to each task's time first. With it as the factory's scheduler and as the
 * executor of the client's dispatcher, {@link RetryingCallFactory#newCall}{@code .enqueue()} runs a
 * whole retry timeline on fake time, deterministically, as the blocking driver does with {@link
 * FakeTime#sleep}. Each {@code schedule} with a delay is recorded in {@link FakeTime#sleeps()}, so
 * one assertion on the waits serves both drivers; {@link #execute} (the dispatcher's hand-offs) is
 * not a wait and is not recorded.
 *
 * <p>Not thread-safe beyond what the tests need: tasks may be added from any thread, but only one
 * thread runs them.
 */
final class FakeScheduler extends AbstractExecutorService implements ScheduledExecutorService {

  private final FakeTime time;
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
  private long sequence;
  private boolean shutdown;

  FakeScheduler(FakeTime time) {
    this.time = time;
  }

  /**
   * Runs every task that is or becomes due, in order of due time (then of submission), moving the
   * fake clock forward to each; returns when no task is left. Fails on a runaway timeline.
   */
  void runUntilIdle() {
    for (int ran = 0; ; ran++) {
      if (ran > 100_000) {
        throw new AssertionError("more than 100 000 tasks: a task reschedules itself forever?");
      }
      Task<?> next;
      synchronized (this) {
        next = queue.poll();
      }
      if (next == null) return;
      long now = time.nanoTime();
      if (next.atNanos > now) time.advance(java.time.Duration.ofNanos(next.atNanos - now));
      next.run();
    }
  }

  /**
   * Runs the tasks due within {@code d} from now, as {@link #runUntilIdle} does, then moves the
   * clock to its end.
   */
  void runFor(java.time.Duration d) {
    long end = time.nanoTime() + d.toNanos();
    while (true) {
      Task<?> next;
      synchronized (this) {
        next = queue.peek();
        if (next == null || next.atNanos > end) break;
        queue.poll();
      }
      long now = time.nanoTime();
      if (next.atNanos > now) time.advance(java.time.Duration.ofNanos(next.atNanos - now));
      next.run();
    }
    long now = time.nanoTime();
    if (end > now) time.advance(java.time.Duration.ofNanos(end - now));
  }

  /** Tasks scheduled and not yet run or canceled. */
  synchronized int pending() {
    return queue.size();
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return schedule(Executors.callable(command), delay, unit);
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    long nanos = Math.max(0, unit.toNanos(delay));
    time.recordWait(nanos);
    Runnable during = time.takeDuringNextWait();
    if (during != null) {
      add(Executors.callable(during), 0); // due first: the wait has begun, not ended
    }
    return add(callable, nanos);
  }

  @Override
  public void execute(Runnable command) {
    add(Executors.callable(command), 0);
  }

  /**
   * Runs {@code command} {@code delayNanos} from now, without recording a wait: how a test makes an
   * OkHttp call take time on the fake clock (its dispatcher hands the call over late, {@code
   * HedgingDriverTest}).
   */
  void executeAfter(Runnable command, long delayNanos) {
    add(Executors.callable(command), delayNanos);
  }

  private synchronized <V> Task<V> add(Callable<V> callable, long delayNanos) {
    if (shutdown) throw new RejectedExecutionException("FakeScheduler is shut down");
    Task<V> task = new Task<>(callable, time.nanoTime() + delayNanos, sequence++);
    queue.add(task);
    return task;
  }

  private synchronized boolean remove(Task<?> task) {
    return queue.remove(task);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(
      Runnable command, long initialDelay, long period, TimeUnit unit) {
    throw new UnsupportedOperationException("okretry schedules one-shot tasks only");
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(
      Runnable command, long initialDelay, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException("okretry schedules one-shot tasks only");
  }

  @Override
  public synchronized void shutdown() {
    shutdown = true;
  }

  @Override
  public synchronized List<Runnable> shutdownNow() {
    shutdown = true;
    List<Runnable> left = new ArrayList<>(queue);
    queue.clear();
    return left;
  }

  @Override
  public synchronized boolean isShutdown() {
    return shutdown;
  }

  @Override
  public synchronized boolean isTerminated() {
    return shutdown && queue.isEmpty();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return isTerminated();
  }

  private final class Task<V> implements ScheduledFuture<V>, Runnable {
    private final Callable<V> callable;
    final long atNanos;
    private final long seq;
    private volatile int state; // 0 pending, 1 ran, 2 canceled
    private V result;
    private Throwable failure;

    Task(Callable<V> callable, long atNanos, long seq) {
      this.callable = callable;
      this.atNanos = atNanos;
      this.seq = seq;
    }

    @Override
    public void run() {
      if (state != 0) return;
      state = 1;
      try {
        result = callable.call();
      } catch (Throwable t) {
        failure = t;
        if (t instanceof RuntimeException re) throw re;
        if (t instanceof Error e) throw e;
      }
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(atNanos - time.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      Task<?> o = (Task<?>) other;
      int byTime = Long.compare(atNanos, o.atNanos);
      return byTime != 0 ? byTime : Long.compare(seq, o.seq);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (state != 0) return false;
      state = 2;
      remove(this);
      return true;
    }

    @Override
    public boolean isCancelled() {
      return state == 2;
    }

    @Override
    public boolean isDone() {
      return state != 0;
    }

    @Override
    public V get() throws ExecutionException {
      if (state == 2) throw new CancellationException();
      if (state == 0) throw new IllegalStateException("not run yet: call runUntilIdle() first");
      if (failure != null) throw new ExecutionException(failure);
      return result;
    }

    @Override
    public V get(long timeout, TimeUnit unit) throws ExecutionException {
      return get();
    }
  }
}
