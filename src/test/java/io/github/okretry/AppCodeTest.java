package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the app's own code (a callback, a listener, a predicate, a request body, a scheduler it
 * passed in) can do to a call, and what {@code cancel()} and {@code close()} promise whatever it
 * does (issue 22, items 5 and 6 and the smaller gaps): no callback runs inside {@code cancel()} or
 * {@code close()}, neither throws what the app throws, every wait ends at once, and an {@link
 * Error} in user code gives exactly one callback, as OkHttp's own {@code AsyncCall} does. Real
 * sockets and real time; bands are wide for a slow 2-core machine.
 */
@Tag("integration")
class AppCodeTest {
  @RegisterExtension final LogCapture log = LogCapture.okretry();

  MockWebServer server;

  /** Throwables that escaped to a dispatcher thread: OkHttp rethrows an Error there. */
  final List<Throwable> uncaught = new CopyOnWriteArrayList<>();

  ExecutorService dispatcherThreads;
  OkHttpClient client;
  RetryingCallFactory calls;

  /** A caller's scheduler whose thread records what escapes it, as the dispatcher's do. */
  ScheduledExecutorService scheduler;

  @BeforeEach
  void setUp() throws IOException {
    scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "test scheduler");
              t.setDaemon(true);
              t.setUncaughtExceptionHandler((thread, e) -> uncaught.add(e));
              return t;
            });
    server = new MockWebServer();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            switch (request.getUrl().encodedPath()) {
              case "/busy":
                return new MockResponse.Builder()
                    .code(503)
                    .addHeader("Retry-After", "30")
                    .body("busy")
                    .build();
              case "/busy5":
                return new MockResponse.Builder()
                    .code(503)
                    .addHeader("Retry-After", "5")
                    .body("busy")
                    .build();
              case "/stalled":
                return new MockResponse.Builder().headersDelay(1, TimeUnit.HOURS).build();
              default:
                return new MockResponse.Builder().body("healthy").build();
            }
          }
        });
    server.start();
    // OkHttp's own dispatcher pool, whose threads record what escapes them instead of printing it.
    dispatcherThreads =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            60,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "test dispatcher");
              t.setDaemon(true);
              t.setUncaughtExceptionHandler((thread, e) -> uncaught.add(e));
              return t;
            });
    client =
        new OkHttpClient.Builder().dispatcher(new okhttp3.Dispatcher(dispatcherThreads)).build();
  }

  @AfterEach
  void tearDown() {
    if (calls != null) calls.close();
    dispatcherThreads.shutdownNow();
    scheduler.shutdownNow();
    client.connectionPool().evictAll();
    server.close();
  }

  Request to(String path) {
    return new Request.Builder().url(server.url(path)).build();
  }

  void awaitRequests(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.getRequestCount() < n) {
      assertThat(System.nanoTime()).as("%d requests arrived", n).isLessThan(deadline);
      Thread.sleep(2);
    }
  }

  /** Records every callback (what, on which thread, when), then does what the app's code does. */
  static class Recorder implements Callback {
    final List<Object> outcomes = new CopyOnWriteArrayList<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final CompletableFuture<Long> firstAtNanos = new CompletableFuture<>();

    @Override
    public void onFailure(Call call, IOException e) {
      record(e);
    }

    @Override
    public void onResponse(Call call, Response response) throws IOException {
      try (response) {
        record(response.code() + " " + response.body().string());
      }
    }

    void record(Object outcome) {
      outcomes.add(outcome);
      threads.add(Thread.currentThread());
      firstAtNanos.complete(System.nanoTime());
    }

    Object await() throws Exception {
      firstAtNanos.get(10, TimeUnit.SECONDS);
      Thread.sleep(100); // a second callback, if any, would come now
      assertThat(outcomes).as("exactly one callback").hasSize(1);
      return outcomes.get(0);
    }
  }

  /** A callback whose onFailure records and then throws, as a buggy app's does. */
  static final class ThrowingOnFailure extends Recorder {
    @Override
    public void onFailure(Call call, IOException e) {
      record(e);
      throw new IllegalStateException("app bug in onFailure");
    }
  }

  /** Item 5: cancel() and close() run no app code on the calling thread and never throw it. */
  @Nested
  class CancelAndClose {
    @Test
    void cancelOfAWaitingCallCallsBackOnAnotherThreadAndNeverThrowsTheAppsException()
        throws Exception {
      calls =
          RetryingCallFactory.create(
              client, RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build());
      ThrowingOnFailure callback = new ThrowingOnFailure();
      Call call = calls.newCall(to("/busy"));
      call.enqueue(callback);
      awaitRequests(1);
      Thread.sleep(200); // now waiting out Retry-After: 30
      call.cancel(); // must not throw the callback's IllegalStateException
      assertThat(callback.await())
          .isInstanceOfSatisfying(IOException.class, e -> assertThat(e).hasMessage("Canceled"));
      assertThat(callback.threads).doesNotContain(Thread.currentThread());
    }

    @Test
    void aListenerThatThrowsAnErrorWhenTheWaitEndsDoesNotBreakCancel() throws Exception {
      calls =
          RetryingCallFactory.create(
              client,
              RetryPolicy.builder()
                  .retryBudget(RetryBudget.unlimited())
                  .listener(
                      new RetryListener() {
                        @Override
                        public void onGaveUp(
                            Request request,
                            int attempts,
                            GiveUpReason reason,
                            String lastFailure) {
                          throw new AssertionError("listener bug");
                        }
                      })
                  .build());
      Recorder callback = new Recorder();
      Call call = calls.newCall(to("/busy"));
      call.enqueue(callback);
      awaitRequests(1);
      Thread.sleep(200);
      call.cancel(); // must not throw the listener's AssertionError
      assertThat(callback.await())
          .isInstanceOfSatisfying(
              IOException.class,
              e ->
                  assertThat(e)
                      .hasMessage("canceled due to java.lang.AssertionError: listener bug"));
    }

    @Test
    void closeEndsEveryWaitAtOnceEvenIfEachCallbackThrowsAndStopsItsScheduler() throws Exception {
      calls =
          RetryingCallFactory.create(
              client, RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build());
      List<ThrowingOnFailure> callbacks = new CopyOnWriteArrayList<>();
      for (int i = 0; i < 10; i++) {
        ThrowingOnFailure callback = new ThrowingOnFailure();
        calls.newCall(to("/busy")).enqueue(callback);
        callbacks.add(callback);
      }
      awaitRequests(10);
      Thread.sleep(300); // all 10 now wait out Retry-After: 30
      long start = System.nanoTime();
      calls.close(); // must not throw any callback's exception
      long slowestMs = 0;
      for (ThrowingOnFailure callback : callbacks) {
        assertThat(callback.firstAtNanos.get(2, TimeUnit.SECONDS)).isNotNull();
        slowestMs = Math.max(slowestMs, (callback.firstAtNanos.get() - start) / 1_000_000);
      }
      assertThat(calls.scheduler.awaitTermination(1, TimeUnit.SECONDS))
          .as("the factory's scheduler stopped")
          .isTrue();
      Diagnostics.printf(
          "close() with 10 waiting calls, each onFailure throwing: all 10 callbacks within %d ms,"
              + " scheduler terminated%n",
          slowestMs);
      assertThat(slowestMs).isLessThan(1_000);
      for (ThrowingOnFailure callback : callbacks) {
        assertThat(callback.await())
            .isInstanceOfSatisfying(
                IOException.class, e -> assertThat(e).hasMessage("RetryingCallFactory is closed"));
        assertThat(callback.threads).doesNotContain(Thread.currentThread());
      }
      assertThat(server.getRequestCount()).isEqualTo(10);
    }

    /** Smaller gap 1: close() also ends the wait of an execute() through the factory. */
    @Test
    void closeEndsTheWaitOfABlockingExecuteToo() throws Exception {
      calls =
          RetryingCallFactory.create(
              client, RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build());
      CompletableFuture<Object> outcome =
          CompletableFuture.supplyAsync(
              () -> {
                try (Response r = calls.newCall(to("/busy5")).execute()) {
                  return r.code();
                } catch (IOException e) {
                  return e;
                }
              });
      awaitRequests(1);
      Thread.sleep(300); // now waiting out Retry-After: 5
      long start = System.nanoTime();
      calls.close();
      Object got = outcome.get(2, TimeUnit.SECONDS);
      long ms = (System.nanoTime() - start) / 1_000_000;
      Diagnostics.printf(
          "close() during execute()'s 5 s Retry-After wait: execute() ended %d ms later%n", ms);
      assertThat(got)
          .isInstanceOfSatisfying(
              IOException.class, e -> assertThat(e).hasMessage("RetryingCallFactory is closed"));
      assertThat(ms).isLessThan(1_000);
      assertThat(server.getRequestCount()).isEqualTo(1);
    }

    /**
     * Smaller gap 5: a caller's scheduler shut down under waiting calls ends their waits promptly.
     */
    @Test
    void aCallersSchedulerShutDownNowEndsTheWaitsWithoutClose() throws Exception {
      ScheduledExecutorService own = Executors.newSingleThreadScheduledExecutor();
      calls =
          RetryingCallFactory.create(
              client, RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build(), own);
      List<Recorder> callbacks = new CopyOnWriteArrayList<>();
      for (int i = 0; i < 5; i++) {
        Recorder callback = new Recorder();
        calls.newCall(to("/busy")).enqueue(callback);
        callbacks.add(callback);
      }
      awaitRequests(5);
      Thread.sleep(200);
      long start = System.nanoTime();
      own.shutdownNow();
      long slowestMs = 0;
      for (Recorder callback : callbacks) {
        assertThat(callback.await())
            .isInstanceOfSatisfying(
                IOException.class,
                e -> assertThat(e).hasMessage("RetryingCallFactory's scheduler was shut down"));
        slowestMs = Math.max(slowestMs, (callback.firstAtNanos.get() - start) / 1_000_000);
      }
      Diagnostics.printf(
          "caller's scheduler shutdownNow() under 5 waiting calls: all callbacks within %d ms%n",
          slowestMs);
      assertThat(slowestMs).isLessThan(2_000);
    }
  }

  /**
   * Item 6: an Error (or unchecked exception) in user code on the async path: one callback, then
   * rethrown.
   */
  @Nested
  class ErrorsInUserCode {
    /** Each place user code runs, made to throw {@code error}. */
    RetryPolicy throwingIn(String where, Error error) {
      RetryPolicy.Builder b =
          RetryPolicy.builder()
              .retryBudget(RetryBudget.unlimited())
              .baseDelay(1, TimeUnit.MILLISECONDS);
      switch (where) {
        case "retryOnResponse":
          return b.retryOnResponse(
                  r -> {
                    throw error;
                  })
              .build();
        case "onSucceeded":
          return b.listener(
                  new RetryListener() {
                    @Override
                    public void onSucceeded(Request request, Response response, int attempts) {
                      throw error;
                    }
                  })
              .build();
        case "onRetryScheduled":
          return b.listener(
                  new RetryListener() {
                    @Override
                    public void onRetryScheduled(
                        Request request, int attempt, String failure, long delayNanos) {
                      throw error;
                    }
                  })
              .build();
        case "onAttemptStarted (retry)":
          return b.listener(
                  new RetryListener() {
                    @Override
                    public void onAttemptStarted(Request request, int attempt) {
                      if (attempt == 2) throw error;
                    }
                  })
              .build();
        default:
          throw new IllegalArgumentException(where);
      }
    }

    static final List<Function<String, Error>> ERRORS =
        List.of(AssertionError::new, StackOverflowError::new, NoClassDefFoundError::new);

    @ParameterizedTest(name = "{0}")
    @ValueSource(
        strings = {
          "retryOnResponse",
          "onSucceeded",
          "onRetryScheduled",
          "onAttemptStarted (retry)"
        })
    void enqueueCallsBackOnceWithCanceledDueToTheErrorAndRethrowsIt(String where) throws Exception {
      String path =
          where.equals("onSucceeded") || where.equals("retryOnResponse") ? "/ok" : "/flaky";
      for (Function<String, Error> kind : ERRORS) {
        Error error = kind.apply("user bug in " + where);
        server.setDispatcher(flakyOnce());
        try (RetryingCallFactory f =
            RetryingCallFactory.create(client, throwingIn(where, error), scheduler)) {
          Recorder callback = new Recorder();
          f.newCall(to(path)).enqueue(callback);
          assertThat(callback.await())
              .as("%s in %s", error, where)
              .isInstanceOfSatisfying(
                  IOException.class,
                  e -> {
                    assertThat(e).hasMessage("canceled due to " + error);
                    assertThat(e.getCause()).isSameAs(error);
                  });
        }
      }
      Thread.sleep(100);
      assertThat(uncaught)
          .as("each Error rethrown, as OkHttp does, on the thread that ran it")
          .hasSize(3);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
        strings = {
          "retryOnResponse",
          "onSucceeded",
          "onRetryScheduled",
          "onAttemptStarted (retry)"
        })
    void executeThrowsTheErrorItself(String where) throws Exception {
      String path =
          where.equals("onSucceeded") || where.equals("retryOnResponse") ? "/ok" : "/flaky";
      Error error = new AssertionError("user bug in " + where);
      server.setDispatcher(flakyOnce());
      try (RetryingCallFactory f = RetryingCallFactory.create(client, throwingIn(where, error))) {
        assertThatThrownBy(() -> f.newCall(to(path)).execute()).isSameAs(error);
      }
      OkHttpClient intercepted =
          client
              .newBuilder()
              .addInterceptor(RetryInterceptor.create(throwingIn(where, error)))
              .build();
      server.setDispatcher(flakyOnce());
      assertThatThrownBy(() -> intercepted.newCall(to(path)).execute()).isSameAs(error);
    }

    @Test
    void anErrorThrownByTheCallbackItselfGetsNoSecondCallback() throws Exception {
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      AssertionError error = new AssertionError("callback bug");
      Recorder callback =
          new Recorder() {
            @Override
            public void onResponse(Call call, Response response) {
              response.close();
              record(response.code());
              throw error;
            }
          };
      calls.newCall(to("/ok")).enqueue(callback);
      assertThat(callback.await()).isEqualTo(200);
      Thread.sleep(100);
      assertThat(uncaught).containsExactly(error);
    }

    Dispatcher flakyOnce() {
      return new Dispatcher() {
        int n;

        @Override
        public synchronized MockResponse dispatch(RecordedRequest request) {
          return request.getUrl().encodedPath().equals("/flaky") && n++ == 0
              ? new MockResponse.Builder().code(503).body("busy").build()
              : new MockResponse.Builder().body("healthy").build();
        }
      };
    }
  }

  /** The smaller gaps: what the call reports, and the reason a body's bug is given. */
  @Nested
  class TheCall {
    @Test
    void enqueueOfNullThrowsAtTheCallSiteBeforeAnythingIsSent() throws Exception {
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      Call call = calls.newCall(to("/ok"));
      assertThatThrownBy(() -> call.enqueue(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("callback == null");
      assertThatThrownBy(() -> call.addEventListener(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessage("eventListener == null");
      assertThat(call.isExecuted()).isFalse();
      Thread.sleep(100);
      assertThat(server.getRequestCount()).isZero();
      Recorder callback = new Recorder();
      call.enqueue(callback); // still usable
      assertThat(callback.await()).isEqualTo("200 healthy");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"plain OkHttp", "execute", "enqueue"})
    void isCanceledAfterTheCallTimeoutFired(String path) throws Exception {
      calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
      Call call =
          path.equals("plain OkHttp")
              ? client.newCall(to("/stalled"))
              : calls.newCall(to("/stalled"));
      call.timeout().timeout(300, TimeUnit.MILLISECONDS);
      Recorder callback = new Recorder();
      if (path.equals("enqueue")) {
        call.enqueue(callback);
      } else {
        CompletableFuture.runAsync(
            () -> {
              try (Response r = call.execute()) {
                callback.record(r.code());
              } catch (IOException e) {
                callback.record(e);
              }
            });
      }
      assertThat(callback.await()).isInstanceOf(IOException.class);
      assertThat(call.isCanceled()).as("%s: canceled by its timeout", path).isTrue();
    }

    /**
     * A request body that throws a RuntimeException is a bug below okretry, not a cancel: {@code
     * NOT_RETRYABLE} on both drivers (OkHttp reports it to an enqueued call as a canceled call).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"execute", "enqueue", "interceptor"})
    void aRequestBodyThatThrowsIsNotRetryableOnEveryDriver(String path) throws Exception {
      List<GiveUpReason> reasons = new CopyOnWriteArrayList<>();
      RetryPolicy policy =
          RetryPolicy.builder()
              .listener(
                  new RetryListener() {
                    @Override
                    public void onGaveUp(
                        Request request, int attempts, GiveUpReason reason, String lastFailure) {
                      reasons.add(reason);
                    }
                  })
              .build();
      RequestBody broken =
          new RequestBody() {
            @Override
            public MediaType contentType() {
              return MediaType.get("text/plain");
            }

            @Override
            public void writeTo(BufferedSink sink) {
              throw new IllegalStateException("body bug");
            }
          };
      Request request = new Request.Builder().url(server.url("/ok")).put(broken).build();
      calls = RetryingCallFactory.create(client, policy);
      Object outcome;
      if (path.equals("enqueue")) {
        Recorder callback = new Recorder();
        calls.newCall(request).enqueue(callback);
        outcome = callback.await();
      } else {
        Call call =
            path.equals("execute")
                ? calls.newCall(request)
                : client
                    .newBuilder()
                    .addInterceptor(RetryInterceptor.create(policy))
                    .build()
                    .newCall(request);
        try (Response r = call.execute()) {
          outcome = r;
        } catch (IOException | RuntimeException e) {
          outcome = e;
        }
      }
      assertThat(outcome).isInstanceOf(Exception.class);
      assertThat(reasons).containsExactly(GiveUpReason.NOT_RETRYABLE);
    }
  }
}
