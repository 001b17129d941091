package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.TestExecutors.SlowDispatch;
import io.github.okretry.TestExecutors.Stoppable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The async driver's hedges on fake time: a {@link FakeScheduler} runs the factory's timers and the
 * client's dispatcher, and each attempt's OkHttp call is handed to the {@link Script} only after
 * the latency this test gives its attempt number, so a slow attempt and a fast hedge race on the
 * fake clock. What the per-call decisions are is {@link HedgingTest}'s; here: the timer, the second
 * call, the winner delivered once, the loser canceled, no task left behind; several hedges in one
 * round, a round whose attempts all fail and the new round that hedges again, a factory closed
 * before the hedge was due, and {@code execute()} on a factory that hedges, which runs the attempts
 * as {@code enqueue()} does and blocks for the outcome.
 */
@Tag("unit")
class HedgingDriverTest extends ScriptedTest {
  static final long MS = 1_000_000L;

  final FakeScheduler scheduler = new FakeScheduler(time);

  /** Latency of each attempt by number; the rest take 0. */
  final Map<Integer, Long> latencyMillis = new ConcurrentHashMap<>();

  final AtomicInteger canceledAttempts = new AtomicInteger();
  final List<Object> outcomes = new ArrayList<>();

  /** When the callback ran, on the fake clock. */
  long deliveredAt;

  /** The factories' hedging: after 50 ms unless a test says otherwise. */
  HedgingPolicy hedges = HedgingPolicy.after(50, TimeUnit.MILLISECONDS);

  RetryingCallFactory factory(
      RetryPolicy.Builder policy, ExecutorService dispatch, HttpUrl origin) {
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .dispatcher(new Dispatcher(dispatch))
                .addInterceptor(NUMBERED)
                .addInterceptor(script)
                .build());
    return known(RetryingCallFactory.create(client, policy.build(), hedges, scheduler), origin);
  }

  /**
   * {@code factory}, {@code origin} having answered it before: a fixed delay hedges only an origin
   * that has (HedgingTest).
   */
  static RetryingCallFactory known(RetryingCallFactory factory, HttpUrl origin) {
    factory.hedging.origins.record(origin, 5 * MS);
    return factory;
  }

  Call call(RetryingCallFactory factory, Request request) {
    Call call = factory.newCall(request);
    call.addEventListener(
        new EventListener() {
          @Override
          public void canceled(Call c) {
            canceledAttempts.incrementAndGet();
          }
        });
    return call;
  }

  /** A GET through {@code policy}, its attempts dispatched by {@code dispatch}. */
  Call call(RetryPolicy.Builder policy, ExecutorService dispatch) {
    return call(factory(policy, dispatch, get().url()), get());
  }

  Call call(RetryPolicy.Builder policy, Request request) {
    return call(
        factory(policy, new SlowDispatch(scheduler, latencyMillis), request.url()), request);
  }

  void enqueue(Call call) {
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response response) {
            synchronized (outcomes) {
              deliveredAt = time.nanoTime();
              outcomes.add(response);
            }
          }

          @Override
          public void onFailure(Call c, IOException e) {
            synchronized (outcomes) {
              deliveredAt = time.nanoTime();
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

  /**
   * Writes the number of the factory's attempt on its response: the response keeps no attempt of
   * its own.
   */
  static final Interceptor NUMBERED =
      chain -> {
        Attempt attempt = Attempt.ofCall(chain.call());
        Response response = chain.proceed(chain.request());
        return attempt == null
            ? response
            : response.newBuilder().header("X-Attempt", String.valueOf(attempt.number)).build();
      };

  static int attemptNumber(Object response) {
    return Integer.parseInt(((Response) response).header("X-Attempt"));
  }

  @Test
  void aHedgeCarriesItsAttemptNumber() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 5L);
    script.thenAlways(200);
    enqueue(call(retry().attemptHeader("amz-sdk-request"), get()));
    scheduler.runUntilIdle();
    Object outcome = delivered();
    assertThat(attemptNumber(outcome)).isEqualTo(2);
    assertThat(((Response) outcome).request().header("amz-sdk-request"))
        .isEqualTo("attempt=2; max=4");
    assertThat(script.requests())
        .extracting(r -> r.header("amz-sdk-request"))
        .contains("attempt=2; max=4")
        .allMatch(v -> v.equals("attempt=1; max=4") || v.equals("attempt=2; max=4"));
  }

  @Test
  void aSlowAttemptIsHedgedAtTheDelayAndTheFasterAnswerWins() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 5L);
    script.thenAlways(200);
    long start = time.nanoTime();
    Call call = call(retry(), get());
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(54));
    assertThat(outcomes).as("nothing before the hedge answers").isEmpty();
    assertThat(script.attempts()).isZero();
    scheduler.runUntilIdle();
    Object outcome = delivered();
    assertThat(attemptNumber(outcome)).isEqualTo(2);
    // Issue 37: the hedge counted, the loser too
    RetryOutcome hedged = RetryOutcome.of((Response) outcome);
    assertThat(hedged.attempts()).isEqualTo(2);
    assertThat(hedged.requestsSent()).isEqualTo(2);
    assertThat(hedged.processing()).isEqualTo(RetryOutcome.Processing.PROCESSED);
    assertThat(time.sleepMillis()).as("the hedge timer, once").containsExactly(50L);
    assertThat(events.lines())
        .containsExactly("start 1", "hedge 2 after 50 ms", "start 2", "succeeded 2 HTTP 200");
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
    enqueue(call(retry(), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("hedge")).isEmpty();
    assertThat(time.nanoTime() - start)
        .as("the timer was canceled, not run at 50 ms")
        .isEqualTo(49 * MS);
  }

  @Test
  void theAttemptItselfMayWinAndTheHedgeIsCanceled() {
    latencyMillis.put(1, 60L);
    latencyMillis.put(2, 1000L);
    script.thenAlways(200);
    enqueue(call(retry(), get()));
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
    enqueue(call(retry(), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(2);
    assertThat(events.lines("retry")).isEmpty();
    assertThat(canceledAttempts.get()).isZero();
  }

  @Test
  void aKeylessPostIsNeverHedged() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    enqueue(call(retry().generateIdempotencyKeys(false), post()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).as("no timer armed").isEmpty();
  }

  @Test
  void aKeyedPostIsHedgedWithTheSameKey() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    enqueue(call(retry(), post()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(2);
    List<String> keys =
        script.requests().stream().map(r -> r.header("Idempotency-Key")).distinct().toList();
    assertThat(keys).hasSize(1).doesNotContainNull();
  }

  @Test
  void noHedgeAfterA503() {
    latencyMillis.put(1, 10L);
    latencyMillis.put(2, 1000L);
    script.status(503).thenAlways(200);
    enqueue(call(retry(), get()));
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
    empty.payForHedge(
        okhttp3.HttpUrl.get("http://elsewhere.test/"), time.nanoTime()); // spends the one token
    enqueue(call(retry().retryBudget(empty), get()));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void aCancelCancelsEveryAttemptInFlightAndIsDeliveredOnce() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 1000L);
    script.thenAlways(200);
    Call call = call(retry(), get());
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
    Call call = call(retry(), get());
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(10));
    call.cancel();
    scheduler.runUntilIdle();
    assertThat(delivered()).isInstanceOf(IOException.class);
    assertThat(events.lines("hedge")).isEmpty();
  }

  /**
   * Issue 30.3 on fake time, through a real OkHttp {@link Dispatcher}: a hedge may wait in its
   * queue ({@code maxRequestsPerHost}); it is paid for and reported only if it leaves the queue.
   */
  RetryingCallFactory queuedFactory(int maxRequestsPerHost, RetryBudget budget) {
    Dispatcher dispatcher = new Dispatcher(new SlowDispatch(scheduler, latencyMillis));
    dispatcher.setMaxRequestsPerHost(maxRequestsPerHost);
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .dispatcher(dispatcher)
                .addInterceptor(NUMBERED)
                .addInterceptor(script)
                .build());
    RetryPolicy policy = retry().retryBudget(budget).build();
    return known(RetryingCallFactory.create(client, policy, hedges, scheduler), get().url());
  }

  static RetryBudget tenTokens() {
    return RetryBudget.builder().maxTokens(10).minRetriesPerSecond(0).build();
  }

  @Test
  void aHedgeQueuedBehindTheAttemptItHedgesNeverGoesAndCostsNothing() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    RetryBudget budget = tenTokens();
    Call call = call(queuedFactory(1, budget), get());
    enqueue(call);
    scheduler.runFor(Duration.ofMillis(60));
    assertThat(events.lines())
        .as("due at 50 ms, but queued behind attempt 1")
        .containsExactly("start 1");
    assertThat(budget.availableTokens()).isEqualTo(10);
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(1);
    assertThat(events.lines()).containsExactly("start 1", "succeeded 1 HTTP 200");
    assertThat(budget.availableTokens())
        .as("nothing paid for the hedge that never went")
        .isEqualTo(10);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(call.isCanceled()).isFalse();
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void aHedgeQueuedBehindAnotherCallGoesWhenASlotFreesAndIsCountedFromThen() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 5L);
    script.thenAlways(200);
    RetryBudget budget = tenTokens();
    RetryingCallFactory factory = queuedFactory(2, budget);
    // Another call to the host holds the second slot for 80 ms: the hedge due at 50 ms waits for
    // it.
    Request other =
        get().newBuilder().tag(TestExecutors.Latency.class, new TestExecutors.Latency(80)).build();
    AtomicInteger otherDone = new AtomicInteger();
    factory
        .attemptClient
        .newCall(other)
        .enqueue(
            new Callback() {
              @Override
              public void onResponse(Call c, Response response) {
                response.close();
                otherDone.incrementAndGet();
              }

              @Override
              public void onFailure(Call c, IOException e) {
                otherDone.incrementAndGet();
              }
            });
    long start = time.nanoTime();
    enqueue(call(factory, get()));
    scheduler.runUntilIdle();
    assertThat(otherDone.get()).isEqualTo(1);
    assertThat(attemptNumber(delivered())).isEqualTo(2);
    assertThat(events.lines())
        .containsExactly("start 1", "hedge 2 after 80 ms", "start 2", "succeeded 2 HTTP 200");
    assertThat(deliveredAt - start)
        .as("left the queue at 80 ms, answered 5 ms later")
        .isEqualTo(85 * MS);
    assertThat(budget.availableTokens()).isEqualTo(9);
    assertThat(canceledAttempts.get()).as("the loser").isEqualTo(1);
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void aHedgeQueuedWhenItsRoundFailsNeverGoesAndTheRetryHedgesAfresh() {
    latencyMillis.put(1, 70L); // fails at 70 ms, its hedge still queued behind it
    latencyMillis.put(2, 1000L); // the retry, after the 100 ms backoff
    latencyMillis.put(3, 5L); // the retry's hedge: its slot is free once the stale one is gone
    script.fail(new java.net.ConnectException("refused")).thenAlways(200);
    RetryBudget budget = tenTokens();
    Dispatcher dispatcher = new Dispatcher(new SlowDispatch(scheduler, latencyMillis));
    dispatcher.setMaxRequestsPerHost(1);
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .dispatcher(dispatcher)
                .addInterceptor(NUMBERED)
                .addInterceptor(script)
                .build());
    RetryPolicy policy = hedgingThenRetrying().retryBudget(budget).build();
    long start = time.nanoTime();
    enqueue(
        call(
            known(RetryingCallFactory.create(client, policy, hedges, scheduler), get().url()),
            get()));
    scheduler.runUntilIdle();
    Object outcome = delivered();
    assertThat(events.lines())
        .containsExactly(
            "start 1", "retry 1 ConnectException: refused", "start 2", "succeeded 2 HTTP 200");
    assertThat(attemptNumber(outcome)).isEqualTo(2);
    assertThat(deliveredAt - start)
        .as("the retry's own hedge queued behind it too")
        .isEqualTo((70 + 100 + 1000) * MS);
    assertThat(budget.availableTokens())
        .as("the retry's token only, given back when it succeeded")
        .isEqualTo(10);
    assertThat(script.attempts()).isEqualTo(2);
    assertThat(scheduler.pending()).isZero();
  }

  static Request post() {
    return new Request.Builder()
        .url("http://example.test/pay")
        .post(RequestBody.create("{}", MediaType.get("application/json")))
        .build();
  }

  // Several hedges, rounds that all fail, a closed factory, cancel, and execute() under hedging.

  /** Retries without jitter after 100, 200, ... ms; the factory hedges at 50 ms. */
  RetryPolicy.Builder hedgingThenRetrying() {
    return retry().jitter(Jitter.NONE).baseDelay(100, TimeUnit.MILLISECONDS);
  }

  /** Runs each task at once on the calling thread: an attempt is answered inside its enqueue(). */
  static final class InlineDispatch extends Stoppable {
    @Override
    public void execute(Runnable command) {
      command.run();
    }
  }

  @Test
  void eachOfSeveralHedgesGoesOneDelayAfterTheOneBefore() {
    latencyMillis.put(1, 1000L);
    latencyMillis.put(2, 1000L);
    latencyMillis.put(3, 5L);
    script.thenAlways(200);
    long start = time.nanoTime();
    hedges = hedges.maxHedges(2);
    enqueue(call(hedgingThenRetrying(), new SlowDispatch(scheduler, latencyMillis)));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(3);
    assertThat(events.lines("hedge")).containsExactly("hedge 2 after 50 ms", "hedge 3 after 50 ms");
    assertThat(time.sleepMillis()).as("two timers, no third").containsExactly(50L, 50L);
    assertThat(canceledAttempts.get()).as("both losers").isEqualTo(2);
    assertThat(events.lines("succeeded")).containsExactly("succeeded 3 HTTP 200");
    assertThat(deliveredAt - start)
        .as("hedge 3 answered 5 ms after its send at 100 ms")
        .isEqualTo(105 * MS);
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void whenEveryAttemptOfARoundFailsTheCallRetriesWithoutAHedgeUntilItsOriginAnswers() {
    latencyMillis.put(1, 70L); // fails at 70 ms, after its hedge
    latencyMillis.put(2, 30L); // sent at 50 ms, fails at 80 ms: the last of the round
    latencyMillis.put(3, 1000L); // the retry, sent after the 200 ms backoff (retry 2)
    script
        .fail(new java.net.ConnectException("refused 1"))
        .fail(new java.net.ConnectException("refused 2"))
        .thenAlways(200);
    long start = time.nanoTime();
    enqueue(call(hedgingThenRetrying().maxRetries(3), new SlowDispatch(scheduler, latencyMillis)));
    scheduler.runUntilIdle();
    assertThat(attemptNumber(delivered())).isEqualTo(3);
    assertThat(events.lines())
        .containsExactly(
            "start 1",
            "hedge 2 after 50 ms",
            "start 2",
            "retry 2 ConnectException: refused 2",
            "start 3",
            "succeeded 3 HTTP 200");
    assertThat(time.sleepMillis())
        .as(
            "hedge timer, backoff, hedge timer: its hedge is not sent (the budget: the origin"
                + " failed since it last answered)")
        .containsExactly(50L, 200L, 50L);
    assertThat(deliveredAt - start).isEqualTo((80 + 200 + 1000) * MS);
    assertThat(canceledAttempts.get()).isZero();
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void noHedgeOnceTheFactoryIsClosedAndTheAttemptInFlightAnswersAlone() {
    latencyMillis.put(1, 1000L);
    script.thenAlways(200);
    RetryingCallFactory factory =
        factory(hedgingThenRetrying(), new SlowDispatch(scheduler, latencyMillis), get().url());
    enqueue(call(factory, get()));
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
    Call call = call(hedgingThenRetrying(), new SlowDispatch(scheduler, latencyMillis));
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
    Call call = call(hedgingThenRetrying(), new SlowDispatch(scheduler, latencyMillis));
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
    Call call = call(hedgingThenRetrying(), new InlineDispatch());
    try (Response response = call.execute()) {
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.header("X-Attempt"))
          .as("sent as its own OkHttp call, as enqueue() sends it")
          .isEqualTo("1");
      assertThat(response.request().tag(Attempt.class))
          .as("the caller's request carries nothing of okretry's")
          .isNull();
    }
    assertThat(call.isExecuted()).isTrue();
    assertThatThrownBy(call::execute)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already Executed");
    assertThat(events.lines()).containsExactly("start 1", "succeeded 1 HTTP 200");
  }

  @Test
  void executeUnderAPolicyThatHedgesThrowsTheFailureTheCallEndedWith() {
    Call call = call(hedgingThenRetrying(), new InlineDispatch());
    call.cancel();
    assertThatThrownBy(call::execute).isInstanceOf(IOException.class).hasMessage("Canceled");
    assertThat(script.attempts()).isZero();
  }

  @Test
  void anInterruptedExecuteUnderAPolicyThatHedgesCancelsTheCall() {
    script.thenAlways(200);
    Call call =
        call(
            hedgingThenRetrying(),
            new SlowDispatch(scheduler, latencyMillis)); // the attempt waits for the scheduler
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(call::execute)
          .isInstanceOf(InterruptedIOException.class)
          .hasMessage("interrupted")
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
