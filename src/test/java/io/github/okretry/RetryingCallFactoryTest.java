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

/**
 * The non-blocking factory: asynchronous retries wait on a scheduler, not on a dispatcher thread
 * or a host slot; the same rules as the interceptor; closing, canceling, a throwing predicate and
 * a dead dispatcher each end a call with exactly one callback. Its deadline: {@link
 * DeadlineIntegrationTest} and {@link CallTimeoutTest}.
 */
@Tag("integration")
class RetryingCallFactoryTest {
  MockWebServer server;
  OkHttpClient client;
  RetryingCallFactory calls;

  @BeforeEach
  void setUp() throws IOException {
    server = new MockWebServer();
    server.setDispatcher(new Dispatcher() {
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
    RetryInterceptor retry = RetryInterceptor.builder().retryBudget(RetryBudget.unlimited()).build();
    calls = RetryingCallFactory.create(client, retry);
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
    Diagnostics.printf("1000 calls in a 30 s backoff: %d running and %d queued OkHttp calls, %d threads named OkHttp*%n",
        client.dispatcher().runningCallsCount(), client.dispatcher().queuedCallsCount(), okHttpThreadsBusy());
    assertThat(client.dispatcher().runningCallsCount()).isZero();
    assertThat(client.dispatcher().queuedCallsCount()).isZero();

    long start = System.nanoTime();
    Outcome healthy = new Outcome();
    calls.newCall(new Request.Builder().url(server.url("/ok")).build()).enqueue(healthy);
    assertThat(healthy.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 healthy");
    Diagnostics.printf("a healthy call to the same host meanwhile took %d ms%n", (System.nanoTime() - start) / 1_000_000);

    long cancelAt = System.nanoTime();
    for (Call call : waiting) call.cancel();
    for (Outcome o : outcomes) {
      assertThat(o.result.get(1, TimeUnit.SECONDS)).isInstanceOf(IOException.class)
          .satisfies(e -> assertThat(((IOException) e).getMessage()).isEqualTo("Canceled"));
    }
    Diagnostics.printf("canceling all 1000 waiting calls delivered every failure within %d ms%n", (System.nanoTime() - cancelAt) / 1_000_000);
    assertThat(server.getRequestCount()).isEqualTo(1_001);
  }

  static long okHttpThreadsBusy() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("OkHttp") && t.getState() == Thread.State.RUNNABLE).count();
  }

  @Test
  void sameSemanticsAsTheInterceptorKeysBackoffAndListener() throws Exception {
    AtomicInteger n = new AtomicInteger();
    List<String> keys = new java.util.concurrent.CopyOnWriteArrayList<>();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        keys.add(request.getHeaders().get("Idempotency-Key"));
        return n.incrementAndGet() < 3 ? new MockResponse.Builder().code(503).build() : new MockResponse.Builder().body("paid").build();
      }
    });
    List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    RetryInterceptor retry = RetryInterceptor.builder().baseDelay(Duration.ofMillis(20)).listener(new RetryListener() {
      @Override
      public void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
        events.add("retry " + attempt + " " + reason);
      }

      @Override
      public void onSucceeded(Request request, Response response, int attempts) {
        events.add("succeeded " + attempts);
      }
    }).build();
    calls = RetryingCallFactory.create(client, retry);
    Outcome outcome = new Outcome();
    calls.newCall(new Request.Builder().url(server.url("/pay")).post(RequestBody.create("{}", MediaType.get("application/json"))).build())
        .enqueue(outcome);
    assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isEqualTo("200 paid");
    assertThat(keys).hasSize(3).doesNotContainNull();
    assertThat(keys.stream().distinct()).hasSize(1);
    assertThat(events).containsExactly("retry 1 HTTP 503", "retry 2 HTTP 503", "succeeded 3");

    // execute() blocks like the interceptor, with the same rules.
    n.set(0);
    try (Response r = calls.newCall(new Request.Builder().url(server.url("/pay")).build()).execute()) {
      assertThat(r.body().string()).isEqualTo("paid");
    }
  }

  @Test
  void closingTheFactoryEndsCallsWaitingToRetry() throws Exception {
    calls = RetryingCallFactory.create(client, RetryInterceptor.builder().retryBudget(RetryBudget.unlimited()).build());
    Outcome outcome = new Outcome();
    calls.newCall(new Request.Builder().url(server.url("/busy")).build()).enqueue(outcome);
    while (server.getRequestCount() < 1) Thread.sleep(5);
    Thread.sleep(300); // now waiting out Retry-After: 30
    calls.close();
    assertThat(outcome.result.get(2, TimeUnit.SECONDS)).isInstanceOf(IOException.class)
        .satisfies(e -> assertThat(((IOException) e).getMessage()).contains("closed"));
  }

  @Test
  void aThrowingPredicateStillDeliversAFailureToTheCallback() throws Exception {
    calls = RetryingCallFactory.create(client, RetryInterceptor.builder().retryOnResponse(r -> {
      throw new IllegalStateException("predicate bug");
    }).build());
    Outcome outcome = new Outcome();
    calls.newCall(new Request.Builder().url(server.url("/ok")).build()).enqueue(outcome);
    assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
    Thread.sleep(100);
    assertThat(client.connectionPool().connectionCount()).isEqualTo(client.connectionPool().idleConnectionCount());
  }

  @Test
  void aCallCanceledBeforeEnqueueFailsOnAnotherThreadAndTellsTheListener() throws Exception {
    List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    calls = RetryingCallFactory.create(client, RetryInterceptor.builder().listener(new RetryListener() {
      @Override
      public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
        events.add(reason + " " + lastFailure);
      }
    }).build());
    Call call = calls.newCall(new Request.Builder().url(server.url("/ok")).build());
    call.cancel();
    Thread caller = Thread.currentThread();
    CompletableFuture<Thread> callbackThread = new CompletableFuture<>();
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        callbackThread.complete(Thread.currentThread());
      }

      @Override
      public void onResponse(Call c, Response r) {
        r.close();
      }
    });
    assertThat(callbackThread.get(5, TimeUnit.SECONDS)).isNotSameAs(caller);
    assertThat(events).containsExactly("CANCELED IOException: Canceled");
  }

  @Test
  void refusesAClientThatAlreadyRetriesAndAFactoryCanBeClosed() throws Exception {
    OkHttpClient retrying = client.newBuilder().addInterceptor(RetryInterceptor.create()).build();
    assertThatThrownBy(() -> RetryingCallFactory.create(retrying, RetryInterceptor.create()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("twice");

    calls = RetryingCallFactory.create(client, RetryInterceptor.builder().retryBudget(RetryBudget.unlimited()).build());
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
   * Issue 15.5: {@code enqueue()} on a client whose dispatcher was shut down returns normally and
   * calls back exactly once with an {@link IOException}, as plain OkHttp does ({@code
   * InterruptedIOException("executor rejected")}, on the enqueuing thread): also for a call canceled
   * before {@code enqueue()}. No server is needed: nothing can be sent.
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
      deadCalls = RetryingCallFactory.create(dead, RetryInterceptor.create());
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
      assertThat(plain.outcomes).singleElement().isInstanceOf(InterruptedIOException.class)
          .hasFieldOrPropertyWithValue("message", "executor rejected");
      assertThat(plain.threads).containsExactly(Thread.currentThread());
    }

    @Test
    void enqueueReturnsNormallyAndCallsBackOnceWithAnIOException() throws Exception {
      Recorder recorder = new Recorder();
      deadCalls.newCall(REQUEST).enqueue(recorder); // must not throw
      Thread.sleep(100); // a second callback, if any, would come now
      assertThat(recorder.outcomes).singleElement().isInstanceOf(InterruptedIOException.class)
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
      assertThat(recorder.outcomes).singleElement().isInstanceOf(IOException.class)
          .hasFieldOrPropertyWithValue("message", "Canceled");
    }
  }
}
