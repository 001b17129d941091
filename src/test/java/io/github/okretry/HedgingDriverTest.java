package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
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
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The async driver's hedges on fake time: a {@link FakeScheduler} runs the factory's timers and
 * the client's dispatcher, and each attempt's OkHttp call is handed to the {@link Script} only
 * after the latency this test gives its attempt number, so a slow attempt and a fast hedge race
 * on the fake clock. What the per-call decisions are is {@link HedgingTest}'s; here: the timer,
 * the second call, the winner delivered once, the loser canceled, no task left behind.
 */
@Tag("unit")
class HedgingDriverTest extends ScriptedTest {
  static final long MS = 1_000_000L;

  final FakeScheduler scheduler = new FakeScheduler(time);
  /** Latency of each attempt by number; the rest take 0. */
  final Map<Integer, Long> latencyMillis = new ConcurrentHashMap<>();
  final AtomicInteger canceledAttempts = new AtomicInteger();
  final List<Object> outcomes = new ArrayList<>();

  /** The dispatcher's executor: an OkHttp call starts (reaches the script) after its attempt's latency. */
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

  RetryPolicy.Builder hedging() {
    return retry().hedgeAfter(50, TimeUnit.MILLISECONDS);
  }

  Call call(RetryPolicy.Builder policy, Request request) {
    OkHttpClient client =
        LeakCheck.track(new OkHttpClient.Builder().dispatcher(new Dispatcher(new SlowDispatch())).addInterceptor(script).build());
    RetryPolicy built = policy.build();
    // The origin answered before: a fixed delay hedges only an origin that has (HedgingTest).
    built.hedgeOrigins.record(request.url(), 5 * MS);
    RetryingCallFactory factory = RetryingCallFactory.create(client, built, scheduler);
    Call call = factory.newCall(request);
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
        synchronized (outcomes) {
          outcomes.add(response);
        }
      }

      @Override
      public void onFailure(Call c, IOException e) {
        synchronized (outcomes) {
          outcomes.add(e);
        }
      }
    });
  }

  /** The one outcome delivered: a response (closed here) or an exception. */
  Object delivered() {
    synchronized (outcomes) {
      assertThat(outcomes).hasSize(1);
      Object o = outcomes.get(0);
      if (o instanceof Response r) r.close();
      return o;
    }
  }

  static int attemptNumber(Object response) {
    return ((Response) response).request().tag(Attempt.class).number;
  }

  @Test
  void aSlowAttemptIsHedgedAtTheDelayAndTheFasterAnswerWins() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 5L);
    script.thenAlways(200);
    long start = time.nanoTime();
    Call call = call(hedging(), get());
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(54));
    assertThat(outcomes).as("nothing before the hedge answers").isEmpty();
    assertThat(script.attempts()).isZero();
    scheduler.runUntilIdle();
    Object outcome = delivered();
    assertThat(attemptNumber(outcome)).isEqualTo(2);
    assertThat(time.sleepMillis()).as("the hedge timer, once").containsExactly(50L);
    assertThat(events.lines()).containsExactly("start 1", "hedge 2 after 50 ms", "start 2", "succeeded 2 HTTP 200");
    assertThat(canceledAttempts.get()).as("the loser").isEqualTo(1);
    assertThat(call.isCanceled()).as("a call the hedge answered was not canceled").isFalse();
    // The loser reached the script only once canceled: OkHttp closed what it answered.
    assertThat(script.returned()).hasSizeLessThanOrEqualTo(2);
    for (int n = 1; n <= script.returned().size(); n++) assertThat(script.closed(n)).isTrue();
    assertThat(scheduler.pending()).isZero();
    assertThat(time.nanoTime() - start).isGreaterThanOrEqualTo(55 * MS);
  }

  @Test
  void noHedgeBeforeTheDelayAndTheTimerIsDroppedWhenTheAttemptAnswers() {
    latencyMillis.put(1, 49L);
    script.thenAlways(200);
    long start = time.nanoTime();
    enqueue(call(hedging(), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("hedge")).isEmpty();
    assertThat(time.nanoTime() - start).as("the timer was canceled, not run at 50 ms").isEqualTo(49 * MS);
  }

  @Test
  void theAttemptItselfMayWinAndTheHedgeIsCanceled() {
    latencyMillis.put(1, 60L);
    latencyMillis.put(2, 1000L);
    script.thenAlways(200);
    enqueue(call(hedging(), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(canceledAttempts.get()).isEqualTo(1);
    assertThat(events.lines("succeeded")).containsExactly("succeeded 2 HTTP 200");
  }

  @Test
  void aFailedAttemptIsDroppedWhileTheHedgeIsInFlight() {
    latencyMillis.put(1, 52L);
    latencyMillis.put(2, 10L);
    script.fail(new IOException("reset")).thenAlways(200);
    enqueue(call(hedging(), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(2);
    assertThat(events.lines("retry")).isEmpty();
    assertThat(canceledAttempts.get()).isZero();
  }

  @Test
  void aKeylessPostIsNeverHedged() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    enqueue(call(hedging().generateIdempotencyKeys(false), post()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).as("no timer armed").isEmpty();
  }

  @Test
  void aKeyedPostIsHedgedWithTheSameKey() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    enqueue(call(hedging(), post()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(2);
    List<String> keys = script.requests().stream().map(r -> r.header("Idempotency-Key")).distinct().toList();
    assertThat(keys).hasSize(1).doesNotContainNull();
  }

  @Test
  void noHedgeAfterA503() {
    latencyMillis.put(1, 10L);
    latencyMillis.put(2, 1000L);
    script.status(503).thenAlways(200);
    enqueue(call(hedging(), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(2);
    assertThat(script.attempts()).isEqualTo(2);
    assertThat(events.lines("hedge")).isEmpty();
  }

  @Test
  void noHedgeWhenTheBudgetCannotPay() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    RetryBudget empty = RetryBudget.builder().maxTokens(1).minRetriesPerSecond(0).build();
    empty.tryWithdraw(time.nanoTime()); // spends the one token
    enqueue(call(hedging().retryBudget(empty), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void aCancelCancelsEveryAttemptInFlightAndIsDeliveredOnce() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 1000L);
    script.thenAlways(200);
    Call call = call(hedging(), get());
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(60));
    assertThat(events.lines("hedge")).hasSize(1);
    call.cancel();
    scheduler.runUntilIdle();
    assertThat(delivered()).isInstanceOf(IOException.class);
    assertThat(canceledAttempts.get()).isEqualTo(2);
    assertThat(events.lines("gaveUp")).hasSize(1).allMatch(l -> l.contains("CANCELED"));
  }

  @Test
  void aCancelBeforeTheHedgeDropsItsTimer() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    Call call = call(hedging(), get());
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(10));
    call.cancel();
    scheduler.runUntilIdle();
    assertThat(delivered()).isInstanceOf(IOException.class);
    assertThat(events.lines("hedge")).isEmpty();
  }

  @Test
  void theInterceptorRefusesAPolicyThatHedges() {
    RetryPolicy policy = hedging().build();
    assertThatThrownBy(() -> RetryInterceptor.create(policy))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("RetryingCallFactory");
  }

  static Request post() {
    return new Request.Builder().url("http://example.test/pay").post(RequestBody.create("{}", MediaType.get("application/json"))).build();
  }
}
