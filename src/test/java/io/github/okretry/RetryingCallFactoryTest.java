package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The non-blocking factory: asynchronous retries wait on a scheduler, not on a dispatcher thread or
 * a host slot; the same rules as the interceptor; closing, canceling, a throwing predicate and a
 * dead dispatcher each end a call with exactly one callback, on real sockets and threads. The same
 * promises that need neither (tags, a callback that throws, a close during a wait or an attempt, a
 * call canceled before it starts) are {@link AsyncLoopTest}'s, on fake time. Its deadline: {@link
 * DeadlineIntegrationTest} and {@link CallTimeoutTest}.
 */
@Tag("integration")
class RetryingCallFactoryTest {
  @RegisterExtension final LogCapture log = LogCapture.okretry();

  MockWebServer server;
  OkHttpClient client;
  RetryingCallFactory calls;

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if (request.getUrl().encodedPath().equals("/busy")) {
              return new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build();
            }
            return new MockResponse.Builder().body("healthy").build();
          }
        });
    server.start();
    client = new OkHttpClient.Builder().build();
  }

  @AfterEach
  void tearDown() {
    release.countDown(); // answers held back by serve()
    if (calls != null) calls.close();
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
    server.close();
  }

  static final class Outcome implements Callback {
    final CompletableFuture<Object> result = new CompletableFuture<>();

    @Override
    public void onFailure(Call call, IOException e) {
      result.complete(e);
    }

    @Override
    public void onResponse(Call call, Response response) throws IOException {
      try (response) {
        result.complete(response.code() + " " + response.body().string());
      }
    }
  }

  @Test
  void thousandCallsInBackoffHoldNoDispatcherThreadAndDoNotBlockAHealthyCall() throws Exception {
    calls =
        RetryingCallFactory.create(
            client, RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build());
    List<Call> waiting = new ArrayList<>();
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      Call call = calls.newCall(new Request.Builder().url(server.url("/busy")).build());
      Outcome outcome = new Outcome();
      call.enqueue(outcome);
      waiting.add(call);
      outcomes.add(outcome);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (server.getRequestCount() < 1_000 || client.dispatcher().runningCallsCount() > 0) {
      assertThat(System.nanoTime()).as("all 1000 first attempts answered").isLessThan(deadline);
      Thread.sleep(10);
    }
    Diagnostics.printf(
        "1000 calls in a 30 s backoff: %d running and %d queued OkHttp calls, %d threads named"
            + " OkHttp*%n",
        client.dispatcher().runningCallsCount(),
        client.dispatcher().queuedCallsCount(),
        okHttpThreadsBusy());
    assertThat(client.dispatcher().runningCallsCount()).isZero();
    assertThat(client.dispatcher().queuedCallsCount()).isZero();

    long start = System.nanoTime();
    Outcome healthy = new Outcome();
    calls.newCall(new Request.Builder().url(server.url("/ok")).build()).enqueue(healthy);
    assertThat(healthy.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 healthy");
    Diagnostics.printf(
        "a healthy call to the same host meanwhile took %d ms%n",
        (System.nanoTime() - start) / 1_000_000);

    long cancelAt = System.nanoTime();
    for (Call call : waiting) call.cancel();
    for (Outcome o : outcomes) {
      assertThat(o.result.get(1, TimeUnit.SECONDS))
          .isInstanceOf(IOException.class)
          .satisfies(e -> assertThat(((IOException) e).getMessage()).isEqualTo("Canceled"));
    }
    Diagnostics.printf(
        "canceling all 1000 waiting calls delivered every failure within %d ms%n",
        (System.nanoTime() - cancelAt) / 1_000_000);
    assertThat(server.getRequestCount()).isEqualTo(1_001);
  }

  static long okHttpThreadsBusy() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("OkHttp") && t.getState() == Thread.State.RUNNABLE)
        .count();
  }

  @Test
  void sameSemanticsAsTheInterceptorKeysBackoffAndListener() throws Exception {
    AtomicInteger n = new AtomicInteger();
    List<String> keys = new java.util.concurrent.CopyOnWriteArrayList<>();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            keys.add(request.getHeaders().get("Idempotency-Key"));
            return n.incrementAndGet() < 3
                ? new MockResponse.Builder().code(503).build()
                : new MockResponse.Builder().body("paid").build();
          }
        });
    List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    RetryPolicy policy =
        RetryPolicy.builder()
            .baseDelay(Duration.ofMillis(20))
            .listener(
                new RetryListener() {
                  @Override
                  public void onRetryScheduled(
                      Request request, int attempt, String reason, long delayNanos) {
                    events.add("retry " + attempt + " " + reason);
                  }

                  @Override
                  public void onSucceeded(Request request, Response response, int attempts) {
                    events.add("succeeded " + attempts);
                  }
                })
            .build();
    calls = RetryingCallFactory.create(client, policy);
    Outcome outcome = new Outcome();
    calls
        .newCall(
            new Request.Builder()
                .url(server.url("/pay"))
                .post(RequestBody.create("{}", MediaType.get("application/json")))
                .build())
        .enqueue(outcome);
    assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 paid");
    assertThat(keys).hasSize(3).doesNotContainNull();
    assertThat(keys.stream().distinct()).hasSize(1);
    assertThat(events).containsExactly("retry 1 HTTP 503", "retry 2 HTTP 503", "succeeded 3");

    // execute() blocks like the interceptor, with the same rules.
    n.set(0);
    try (Response r =
        calls.newCall(new Request.Builder().url(server.url("/pay")).build()).execute()) {
      assertThat(r.body().string()).isEqualTo("paid");
    }
  }

  @Test
  void aThrowingPredicateStillDeliversAFailureToTheCallback() throws Exception {
    calls =
        RetryingCallFactory.create(
            client,
            RetryPolicy.builder()
                .retryOnResponse(
                    r -> {
                      throw new IllegalStateException("predicate bug");
                    })
                .build());
    Outcome outcome = new Outcome();
    calls.newCall(new Request.Builder().url(server.url("/ok")).build()).enqueue(outcome);
    assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
    Thread.sleep(100);
    assertThat(client.connectionPool().connectionCount())
        .isEqualTo(client.connectionPool().idleConnectionCount());
  }

  @Test
  void aFactoryCanBeClosedWhileACallWaits() throws Exception {
    // (A client that already holds a RetryInterceptor is accepted: StackedLayersTest.)
    calls =
        RetryingCallFactory.create(
            client, RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build());
    Outcome outcome = new Outcome();
    Call call = calls.newCall(new Request.Builder().url(server.url("/busy")).build());
    call.enqueue(outcome);
    while (server.getRequestCount() < 1) Thread.sleep(5);
    Thread.sleep(50);
    calls.close(); // the pending retry is dropped with the scheduler: cancel delivers the failure
    call.cancel();
    assertThat(outcome.result.get(2, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
    assertThat(call.isCanceled()).isTrue();
    assertThatThrownBy(() -> call.enqueue(new Outcome())).isInstanceOf(IllegalStateException.class);
  }

  /**
   * Holds the answers to {@code /slow} until released, so a test can act while an attempt is in
   * flight.
   */
  final CountDownLatch release = new CountDownLatch(1);

  /**
   * Answers {@code /slow} with {@code slow} once released, {@code /flaky} with 503 "busy" then 200,
   * {@code /busy} and {@code /hostile} with 503 and a long Retry-After, anything else with 200.
   */
  void serve(MockResponse slow) {
    AtomicInteger flaky = new AtomicInteger();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            switch (request.getUrl().encodedPath()) {
              case "/slow":
                release.await(10, TimeUnit.SECONDS);
                return slow;
              case "/flaky":
                return flaky.incrementAndGet() == 1
                    ? new MockResponse.Builder().code(503).body("busy").build()
                    : new MockResponse.Builder().body("ok").build();
              case "/busy":
                return new MockResponse.Builder()
                    .code(503)
                    .addHeader("Retry-After", "30")
                    .body("busy")
                    .build();
              case "/hostile": // more seconds than an int holds: OkHttp 5.5.1 would throw parsing
                // it
                return new MockResponse.Builder()
                    .code(503)
                    .addHeader("Retry-After", "99999999999")
                    .body("busy")
                    .build();
              default:
                return new MockResponse.Builder().body("healthy").build();
            }
          }
        });
  }

  Request to(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  void awaitRequests(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (server.getRequestCount() < n) {
      assertThat(System.nanoTime()).as("%d requests arrived", n).isLessThan(deadline);
      Thread.sleep(2);
    }
  }

  boolean allConnectionsIdle() throws InterruptedException {
    Thread.sleep(100); // a released connection reaches the pool a moment after the callback
    return client.connectionPool().connectionCount()
        == client.connectionPool().idleConnectionCount();
  }

  /** The {@link Call} a factory hands out behaves as OkHttp's own does. */
  @Nested
  class TheCall {
    @Test
    void executeRunsWithTheCallsListenersAndReportsItWasExecuted() throws Exception {
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      List<String> events = new CopyOnWriteArrayList<>();
      Call call = calls.newCall(to("/ok"));
      call.addEventListener(
          new okhttp3.EventListener() {
            @Override
            public void callEnd(Call c) {
              events.add("callEnd");
            }
          });
      assertThat(call.isExecuted()).isFalse();
      try (Response r = call.execute()) {
        assertThat(r.body().string()).isEqualTo("healthy");
      }
      assertThat(call.isExecuted()).isTrue();
      assertThat(call.isCanceled()).isFalse();
      assertThat(events).containsExactly("callEnd");
    }

    @Test
    void eachAsynchronousAttemptRunsWithTheCallsListeners() throws Exception {
      serve(null);
      calls =
          RetryingCallFactory.create(
              client, RetryPolicy.builder().baseDelay(10, TimeUnit.MILLISECONDS).build());
      List<String> events = new CopyOnWriteArrayList<>();
      Call call = calls.newCall(to("/flaky"));
      call.addEventListener(
          new okhttp3.EventListener() {
            @Override
            public void callStart(Call c) {
              events.add("callStart");
            }
          });
      Outcome outcome = new Outcome();
      call.enqueue(outcome);
      assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 ok");
      assertThat(events)
          .as("one OkHttp call per attempt")
          .containsExactly("callStart", "callStart");
    }

    @Test
    void aCallCanceledBeforeExecuteSendsNothing() {
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      Call call = calls.newCall(to("/ok"));
      call.cancel();
      assertThatThrownBy(call::execute).isInstanceOf(IOException.class).hasMessage("Canceled");
      assertThat(server.getRequestCount()).isZero();
    }

    @Test
    void cancelEndsTheAttemptInFlight() throws Exception {
      serve(new MockResponse.Builder().body("late").build());
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      Call call = calls.newCall(to("/slow"));
      Outcome outcome = new Outcome();
      call.enqueue(outcome);
      awaitRequests(1);
      call.cancel();
      assertThat(outcome.result.get(2, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
      assertThat(call.isCanceled()).isTrue();
    }
  }

  /**
   * Every response the factory does not deliver is closed, so its connection goes back to the pool.
   */
  @Nested
  class Responses {
    @Test
    void aRetriedResponseIsClosedBeforeTheWait() throws Exception {
      serve(null);
      calls =
          RetryingCallFactory.create(
              client, RetryPolicy.builder().baseDelay(10, TimeUnit.MILLISECONDS).build());
      Outcome outcome = new Outcome();
      calls.newCall(to("/flaky")).enqueue(outcome);
      assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 ok");
      assertThat(allConnectionsIdle()).isTrue();
    }

    @Test
    void aBugInTheRetryDecisionEndsTheCallWithOneFailureAndClosesTheResponse() throws Exception {
      serve(null);
      IllegalStateException bug = new IllegalStateException("random source bug");
      RetryPolicy policy =
          RetryPolicy.builder()
              .random(
                  () -> {
                    throw bug;
                  })
              .build();
      calls = RetryingCallFactory.create(client, policy);
      Outcome outcome = new Outcome();
      calls.newCall(to("/flaky")).enqueue(outcome);
      assertThat(outcome.result.get(5, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(
              IOException.class,
              e -> {
                assertThat(e).hasMessage("okretry: retry decision failed");
                assertThat(e.getCause()).isSameAs(bug);
              });
      assertThat(server.getRequestCount()).isEqualTo(1);
      assertThat(allConnectionsIdle()).isTrue();
    }

    @Test
    void aHostileRetryAfterIsSaturatedOnTheFactorysClients() throws Exception {
      serve(null);
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      Outcome outcome = new Outcome();
      calls.newCall(to("/hostile")).enqueue(outcome);
      assertThat(outcome.result.get(5, TimeUnit.SECONDS))
          .as("too long to wait: returned as it is")
          .isEqualTo("503 busy");
    }
  }

  /** Closing the factory, and the scheduler the retries wait on. */
  @Nested
  class Scheduling {
    @Test
    void aSchedulerThatRefusesTheRetryEndsTheCall() throws Exception {
      serve(null);
      ScheduledExecutorService stopped = Executors.newSingleThreadScheduledExecutor();
      stopped.shutdown();
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build(), stopped);
      Outcome outcome = new Outcome();
      calls.newCall(to("/busy")).enqueue(outcome);
      assertThat(outcome.result.get(5, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(
              IOException.class,
              e -> {
                assertThat(e).hasMessage("RetryingCallFactory is closed");
                assertThat(e.getCause()).isInstanceOf(RejectedExecutionException.class);
              });
    }

    @Test
    void theFactoryStopsOnlyTheSchedulerItMade() throws Exception {
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      Thread thread =
          calls
              .scheduler
              .schedule(Thread::currentThread, 0, TimeUnit.MILLISECONDS)
              .get(5, TimeUnit.SECONDS);
      assertThat(thread.getName()).isEqualTo("okretry scheduler");
      assertThat(thread.isDaemon()).as("never keeps the JVM alive").isTrue();
      calls.close();
      assertThat(calls.scheduler.isShutdown()).isTrue();
    }

    @Test
    void createRejectsNullsNamingThem() {
      RetryPolicy policy = RetryPolicy.builder().build();
      ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
      try {
        assertThatThrownBy(() -> RetryingCallFactory.create(null, policy))
            .hasMessage("client == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(client, null))
            .hasMessage("policy == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(null, policy, scheduler))
            .hasMessage("client == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(client, null, scheduler))
            .hasMessage("policy == null");
        assertThatThrownBy(
                () -> RetryingCallFactory.create(client, policy, (ScheduledExecutorService) null))
            .hasMessage("scheduler == null");
        HedgingPolicy hedging = HedgingPolicy.adaptive();
        assertThatThrownBy(() -> RetryingCallFactory.create(client, policy, (HedgingPolicy) null))
            .hasMessage("hedging == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(null, policy, hedging))
            .hasMessage("client == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(client, null, hedging, scheduler))
            .hasMessage("policy == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(client, policy, null, scheduler))
            .hasMessage("hedging == null");
        assertThatThrownBy(() -> RetryingCallFactory.create(client, policy, hedging, null))
            .hasMessage("scheduler == null");
      } finally {
        scheduler.shutdownNow();
      }
    }
  }

  /** The origin-wide gate holds and throttles the factory's calls as it does the interceptor's. */
  @Nested
  class OriginGate {
    @Test
    void aCallThatCannotWaitForTheOriginGetsTheLocalResponse() throws Exception {
      serve(null);
      calls =
          RetryingCallFactory.create(
              client,
              RetryPolicy.builder()
                  .originWideRetryAfter(true)
                  .deadline(5, TimeUnit.SECONDS)
                  .build());
      Outcome first = new Outcome();
      calls.newCall(to("/busy")).enqueue(first);
      assertThat(first.result.get(5, TimeUnit.SECONDS))
          .as("30 s does not fit 5 s")
          .isEqualTo("503 busy");
      Outcome second = new Outcome();
      calls.newCall(to("/ok")).enqueue(second);
      assertThat(second.result.get(5, TimeUnit.SECONDS)).isEqualTo("503 ");
      assertThat(server.getRequestCount()).isEqualTo(1);
    }

    @Test
    void aCallThatCanWaitForTheOriginWaitsOnTheScheduler() throws Exception {
      List<Long> arrivals = new CopyOnWriteArrayList<>();
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              arrivals.add(System.nanoTime());
              return arrivals.size() == 1
                  ? new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build()
                  : new MockResponse.Builder().body("healthy").build();
            }
          });
      // 30 s is over the 200 ms ceiling: the first call ends at once and closes the origin for 200
      // ms.
      calls =
          RetryingCallFactory.create(
              client,
              RetryPolicy.builder()
                  .originWideRetryAfter(true)
                  .maxRetryAfter(200, TimeUnit.MILLISECONDS)
                  .build());
      Outcome first = new Outcome();
      calls.newCall(to("/busy")).enqueue(first);
      assertThat(first.result.get(5, TimeUnit.SECONDS)).isEqualTo("503 ");
      Outcome second = new Outcome();
      calls.newCall(to("/ok")).enqueue(second);
      assertThat(second.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 healthy");
      assertThat(arrivals.get(1) - arrivals.get(0))
          .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
    }
  }

  /**
   * Issue 15.5: {@code enqueue()} on a client whose dispatcher was shut down returns normally and
   * calls back exactly once with an {@link IOException}, as plain OkHttp does ({@code
   * InterruptedIOException("executor rejected")}, on the enqueuing thread): also for a call
   * canceled before {@code enqueue()}. No server is needed: nothing can be sent.
   */
  @Nested
  class DeadDispatcher {
    static final Request REQUEST = new Request.Builder().url("http://127.0.0.1:9/never").build();

    OkHttpClient dead;
    RetryingCallFactory deadCalls;

    @BeforeEach
    void shutDownTheDispatcher() {
      dead = new OkHttpClient.Builder().build();
      dead.dispatcher().executorService().shutdown();
      deadCalls = RetryingCallFactory.create(dead, RetryPolicy.builder().build());
    }

    @AfterEach
    void closeTheFactory() {
      deadCalls.close();
    }

    /** Records every callback, with the thread it ran on. */
    static final class Recorder implements Callback {
      final List<Object> outcomes = new CopyOnWriteArrayList<>();
      final List<Thread> threads = new CopyOnWriteArrayList<>();

      @Override
      public void onFailure(Call call, IOException e) {
        outcomes.add(e);
        threads.add(Thread.currentThread());
      }

      @Override
      public void onResponse(Call call, Response response) {
        response.close();
        outcomes.add(response);
        threads.add(Thread.currentThread());
      }
    }

    @Test
    void plainOkHttpCallsBackOnceWithExecutorRejected() {
      Recorder plain = new Recorder();
      dead.newCall(REQUEST).enqueue(plain); // the behaviour okretry must match
      assertThat(plain.outcomes)
          .singleElement()
          .isInstanceOf(InterruptedIOException.class)
          .hasFieldOrPropertyWithValue("message", "executor rejected");
      assertThat(plain.threads).containsExactly(Thread.currentThread());
    }

    @Test
    void enqueueReturnsNormallyAndCallsBackOnceWithAnIOException() throws Exception {
      Recorder recorder = new Recorder();
      deadCalls.newCall(REQUEST).enqueue(recorder); // must not throw
      Thread.sleep(100); // a second callback, if any, would come now
      assertThat(recorder.outcomes)
          .singleElement()
          .isInstanceOf(InterruptedIOException.class)
          .hasFieldOrPropertyWithValue("message", "executor rejected");
      assertThat(recorder.threads).containsExactly(Thread.currentThread());
    }

    @Test
    void aCallCanceledBeforeEnqueueAlsoCallsBackOnce() throws Exception {
      Recorder recorder = new Recorder();
      Call call = deadCalls.newCall(REQUEST);
      call.cancel();
      call.enqueue(recorder); // must not throw
      Thread.sleep(100);
      assertThat(recorder.outcomes)
          .singleElement()
          .isInstanceOf(IOException.class)
          .hasFieldOrPropertyWithValue("message", "Canceled");
    }
  }
}
