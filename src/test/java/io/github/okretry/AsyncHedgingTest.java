package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The async driver's hedging ({@link AsyncHedging}) in the cases {@link HedgingDriverTest} leaves
 * out, on the same fake time (each attempt reaches the {@link Script} after the latency given to
 * its number): several hedges in one round, a round whose attempts all fail and the new round
 * that hedges again, a factory closed before the hedge was due, and {@code execute()} under a
 * policy that hedges, which runs the attempts as {@code enqueue()} does and blocks for the outcome.
 */
@Tag("unit")
class AsyncHedgingTest extends ScriptedTest {
  static final long MS = 1_000_000L;

  final FakeScheduler scheduler = new FakeScheduler(time);
  /** Latency of each attempt by number; the rest take 0. */
  final Map<Integer, Long> latencyMillis = new ConcurrentHashMap<>();
  final AtomicInteger canceledAttempts = new AtomicInteger();
  final List<Object> outcomes = new ArrayList<>();
  /** When the callback ran, on the fake clock. */
  long deliveredAt;

  /** The dispatcher's executor: an OkHttp call reaches the script after its attempt's latency. */
  final class SlowDispatch extends AbstractExecutorService {
    @Override
    public void execute(Runnable command) {
      Attempt attempt = attemptOf(command);
      long ms = attempt == null ? 0 : latencyMillis.getOrDefault(attempt.number, 0L);
      scheduler.executeAfter(command, ms * MS);
    }

    private Attempt attemptOf(Runnable command) {
      try { // OkHttp's AsyncCall: its request carries the Attempt tag
        Request r = (Request) command.getClass().getMethod("getRequest").invoke(command);
        return r.tag(Attempt.class);
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

  /** Runs each task at once on the calling thread: an attempt is answered inside its enqueue(). */
  static final class InlineDispatch extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable command) {
      command.run();
    }

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

  RetryPolicy.Builder hedging() {
    return retry().hedgeAfter(50, TimeUnit.MILLISECONDS).jitter(Jitter.NONE).baseDelay(100, TimeUnit.MILLISECONDS);
  }

  RetryingCallFactory factory(RetryPolicy.Builder policy, AbstractExecutorService dispatch) {
    OkHttpClient client =
        LeakCheck.track(new OkHttpClient.Builder().dispatcher(new Dispatcher(dispatch)).addInterceptor(script).build());
    RetryPolicy built = policy.build();
    // The origin answered before: a fixed delay hedges only an origin that has (HedgingTest).
    built.hedgeOrigins.record(get().url(), 5 * MS);
    return RetryingCallFactory.create(client, built, scheduler);
  }

  Call call(RetryingCallFactory factory) {
    Call call = factory.newCall(get());
    call.addEventListener(new EventListener() {
      @Override
      public void canceled(Call c) {
        canceledAttempts.incrementAndGet();
      }
    });
    return call;
  }

  void enqueue(Call call) {
    call.enqueue(new Callback() {
      @Override
      public void onResponse(Call c, Response response) {
        deliveredAt = time.nanoTime();
        outcomes.add(response);
      }

      @Override
      public void onFailure(Call c, IOException e) {
        deliveredAt = time.nanoTime();
        outcomes.add(e);
      }
    });
  }

  /** The one outcome delivered: a response (closed here) or an exception. */
  Object delivered() {
    assertThat(outcomes).hasSize(1);
    Object o = outcomes.get(0);
    if (o instanceof Response r) r.close();
    return o;
  }

  static int attemptNumber(Object response) {
    return ((Response) response).request().tag(Attempt.class).number;
  }

  @Test
  void eachOfSeveralHedgesGoesOneDelayAfterTheOneBefore() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 1000L);
    latencyMillis.put(3, 5L);
    script.thenAlways(200);
    long start = time.nanoTime();
    enqueue(call(factory(hedging().maxHedges(2), new SlowDispatch())));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(3);
    assertThat(events.lines("hedge")).containsExactly("hedge 2 after 50 ms", "hedge 3 after 50 ms");
    assertThat(time.sleepMillis()).as("two timers, no third").containsExactly(50L, 50L);
    assertThat(canceledAttempts.get()).as("both losers").isEqualTo(2);
    assertThat(events.lines("succeeded")).containsExactly("succeeded 3 HTTP 200");
    assertThat(deliveredAt - start).as("hedge 3 answered 5 ms after its send at 100 ms").isEqualTo(105 * MS);
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void whenEveryAttemptOfARoundFailsTheCallRetriesAndTheNewRoundHedgesAgain() {
    latencyMillis.put(1, 70L); // fails at 70 ms, after its hedge
    latencyMillis.put(2, 30L); // sent at 50 ms, fails at 80 ms: the last of the round
    latencyMillis.put(3, 1000L); // the retry, sent after the 200 ms backoff (retry 2)
    latencyMillis.put(4, 5L); // its hedge answers
    script.fail(new java.net.ConnectException("refused 1")).fail(new java.net.ConnectException("refused 2")).thenAlways(200);
    long start = time.nanoTime();
    enqueue(call(factory(hedging().maxRetries(3), new SlowDispatch())));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(4);
    assertThat(events.lines()).containsExactly(
        "start 1", "hedge 2 after 50 ms", "start 2", "retry 2 ConnectException: refused 2",
        "start 3", "hedge 4 after 50 ms", "start 4", "succeeded 4 HTTP 200");
    assertThat(time.sleepMillis()).as("hedge timer, backoff, hedge timer").containsExactly(50L, 200L, 50L);
    assertThat(deliveredAt - start).isEqualTo((80 + 200 + 55) * MS);
    assertThat(canceledAttempts.get()).as("the retry, beaten by its hedge").isEqualTo(1);
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void noHedgeOnceTheFactoryIsClosedAndTheAttemptInFlightAnswersAlone() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    RetryingCallFactory factory = factory(hedging(), new SlowDispatch());
    enqueue(call(factory));
    scheduler.runFor(Duration.ofMillis(10));
    factory.close();
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(events.lines("hedge")).isEmpty();
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(canceledAttempts.get()).isZero();
  }

  @Test
  void aCancelCancelsTheHedgeInFlightAtOnce() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 1000L);
    script.thenAlways(200);
    Call call = call(factory(hedging(), new SlowDispatch()));
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(60));
    assertThat(events.lines("hedge")).hasSize(1);
    call.cancel();
    assertThat(canceledAttempts.get()).as("both attempts, by cancel() itself").isEqualTo(2);
    scheduler.runUntilIdle();
    assertThat(delivered()).isInstanceOf(IOException.class);
  }

  @Test
  void aCancelDropsTheHedgeTimerAtOnce() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    Call call = call(factory(hedging(), new SlowDispatch()));
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(10));
    assertThat(scheduler.pending()).as("the attempt on its way, the hedge timer").isEqualTo(2);
    call.cancel();
    assertThat(scheduler.pending()).as("the timer dropped").isEqualTo(1);
    scheduler.runUntilIdle();
    assertThat(delivered()).isInstanceOf(IOException.class);
    assertThat(events.lines("hedge")).isEmpty();
  }

  @Test
  void executeUnderAPolicyThatHedgesRunsTheAttemptsAsEnqueueDoes() throws IOException {
    script.thenAlways(200);
    Call call = call(factory(hedging(), new InlineDispatch()));
    try (Response response = call.execute()) {
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.request().tag(Attempt.class)).as("sent as its own OkHttp call, as enqueue() sends it").isNotNull();
    }
    assertThat(call.isExecuted()).isTrue();
    assertThatThrownBy(call::execute).isInstanceOf(IllegalStateException.class).hasMessage("Already Executed");
    assertThat(events.lines()).containsExactly("start 1", "succeeded 1 HTTP 200");
  }

  @Test
  void executeUnderAPolicyThatHedgesThrowsTheFailureTheCallEndedWith() {
    Call call = call(factory(hedging(), new InlineDispatch()));
    call.cancel();
    assertThatThrownBy(call::execute).isInstanceOf(IOException.class).hasMessage("Canceled");
    assertThat(script.attempts()).isZero();
  }

  @Test
  void anInterruptedExecuteUnderAPolicyThatHedgesCancelsTheCall() {
    script.thenAlways(200);
    Call call = call(factory(hedging(), new SlowDispatch())); // the attempt waits for the scheduler
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(call::execute).isInstanceOf(InterruptedIOException.class).hasMessage("interrupted")
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("the flag restored").isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(call.isCanceled()).isTrue();
    scheduler.runUntilIdle(); // the canceled attempt fails
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("CANCELED");
  }
}
