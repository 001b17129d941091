package io.github.okretry;

import java.util.List;
import java.util.Map;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Request;

/** Executors for an OkHttp {@code Dispatcher} in tests on fake time ({@link FakeScheduler}). */
final class TestExecutors {

  private TestExecutors() {}

  /**
   * Runs an OkHttp call (it reaches the script) on the scheduler after the latency the test gives
   * its attempt number, 0 if none; any other task (a callback okretry hands over) at once. The call
   * leaves OkHttp's dispatcher when it is handed here, so a hedge's gate ({@link Attempt#departs},
   * which {@code AttemptSettings} asks again when the call runs) is asked now: the latency is the
   * network's, not a queue's; a hedge that does not go runs (and fails) at once.
   */
  static final class SlowDispatch extends AbstractExecutorService {
    private static final long MS = 1_000_000L;
    private final FakeScheduler scheduler;
    private final Map<Integer, Long> latencyMillis;

    SlowDispatch(FakeScheduler scheduler, Map<Integer, Long> latencyMillis) {
      this.scheduler = scheduler;
      this.latencyMillis = latencyMillis;
    }

    @Override
    public void execute(Runnable command) {
      Call call = callOf(command);
      Request request = call != null ? call.request() : null;
      Attempt attempt = call != null ? Attempt.ofCall(call) : null;
      Latency own = request != null ? request.tag(Latency.class) : null;
      long ms =
          own != null
              ? own.millis()
              : attempt == null || !attempt.departs()
                  ? 0 // a hedge that does not go fails at once
                  : latencyMillis.getOrDefault(attempt.number, 0L);
      scheduler.executeAfter(command, ms * MS);
    }

    private static Call callOf(Runnable command) {
      try { // OkHttp's AsyncCall: its call carries the Attempt tag
        return (Call) command.getClass().getMethod("getCall").invoke(command);
      } catch (ReflectiveOperationException e) {
        return null; // a callback handed over by okretry
      }
    }

    @Override
    public void shutdown() {
      scheduler.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
      return scheduler.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
      return scheduler.isShutdown();
    }

    @Override
    public boolean isTerminated() {
      return scheduler.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return scheduler.isTerminated();
    }
  }

  /**
   * A request tag: {@link SlowDispatch} runs this call after {@code millis}, whatever its attempt
   * number.
   */
  record Latency(long millis) {}

  /**
   * An executor whose shutdown only raises a flag (nothing to wait for): subclasses say how a task
   * runs.
   */
  abstract static class Stoppable extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return shutdown;
    }
  }
}
