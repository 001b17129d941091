package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hedges over real sockets, where the point is real cancellation: the slow attempt's OkHttp call is
 * canceled once the hedge answers, its connection is closed rather than left allocated, no hedge
 * timer stays queued on the factory's scheduler, and a cancel at a random moment of a hedged call
 * leaves nothing behind ({@link LeakCheck}). The decisions are tested on fake time ({@link
 * HedgingTest}, {@link HedgingDriverTest}).
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class HedgingIntegrationTest {

  static OkHttpClient client() {
    return LeakCheck.track(
        new OkHttpClient.Builder()
            .connectionPool(new ConnectionPool())
            .readTimeout(Duration.ofSeconds(10))
            .build());
  }

  static final HedgingPolicy AFTER_100_MS = HedgingPolicy.after(100, TimeUnit.MILLISECONDS);

  /**
   * Answers {@code /warm} at once; of the others, the first after {@code slowMillis}, the rest at
   * once.
   */
  static Dispatcher firstSlow(long slowMillis) {
    AtomicInteger n = new AtomicInteger();
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        if (request.getUrl().encodedPath().equals("/warm")) {
          return new MockResponse.Builder().body("warm").build();
        }
        int i = n.incrementAndGet();
        MockResponse.Builder r = new MockResponse.Builder().body("request " + i);
        if (i == 1) r.headersDelay(slowMillis, TimeUnit.MILLISECONDS);
        return r.build();
      }
    };
  }

  /**
   * One call that the origin answers, so that a fixed delay may hedge it (it never hedges an origin
   * that has not answered).
   */
  static void warm(Call.Factory calls, MockWebServer server) throws IOException {
    try (Response r =
        calls.newCall(new Request.Builder().url(server.url("/warm")).build()).execute()) {
      r.body().string();
    }
  }

  @Test
  void theHedgeAnswersTheLoserIsCanceledAndNoConnectionOrTimerIsLeft() throws Exception {
    OkHttpClient client = client();
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls =
            RetryingCallFactory.create(client, RetryPolicy.builder().build(), AFTER_100_MS)) {
      server.setDispatcher(firstSlow(3_000));
      server.start();
      warm(calls, server);
      long start = System.nanoTime();
      try (Response response =
          calls.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(response.body().string()).isEqualTo("request 2");
        assertThat(ms).as("hedged at 100 ms, not the slow 3 s").isBetween(100L, 2_000L);
      }
      assertThat(server.getRequestCount()).isEqualTo(3); // the warm-up, the slow attempt, the hedge
      ScheduledThreadPoolExecutor scheduler = (ScheduledThreadPoolExecutor) calls.scheduler;
      assertThat(scheduler.getQueue()).as("no hedge timer left").isEmpty();
      // The loser's connection was closed by its cancel, not returned to the pool mid-response.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (client.connectionPool().connectionCount() > 1 && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      assertThat(client.connectionPool().connectionCount()).isLessThanOrEqualTo(1);
    }
  }

  @Test
  void theDeadlineHoldsWithAHedgeInFlight() throws Exception {
    OkHttpClient client = client();
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls =
            RetryingCallFactory.create(
                client,
                RetryPolicy.builder().deadline(300, TimeUnit.MILLISECONDS).build(),
                AFTER_100_MS)) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              if (request.getUrl().encodedPath().equals("/warm")) {
                return new MockResponse.Builder().build();
              }
              return new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build();
            }
          });
      server.start();
      warm(calls, server);
      long start = System.nanoTime();
      Call call = calls.newCall(new Request.Builder().url(server.url("/")).build());
      IOException thrown = null;
      try (Response ignored = call.execute()) {
        // not expected
      } catch (IOException e) {
        thrown = e;
      }
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(thrown).as("both attempts stalled past the deadline").isNotNull();
      assertThat(ms).isBetween(290L, 1_500L); // typically 300-310 ms; wide for a loaded machine
      assertThat(call.isCanceled()).as("timed out, as a plain OkHttp call reports it").isTrue();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (server.getRequestCount() < 3 && System.nanoTime() < until) Thread.sleep(10);
      assertThat(server.getRequestCount()).isEqualTo(3);
    }
  }

  @Test
  @Tag("slow")
  void hedgedCallsCanceledAtRandomMomentsLeaveNothingBehind() throws Exception {
    OkHttpClient client = client();
    SplittableRandom random = new SplittableRandom(21);
    AtomicInteger hedges = new AtomicInteger();
    RetryPolicy policy =
        RetryPolicy.builder()
            .retryBudget(RetryBudget.unlimited())
            .listener(
                new RetryListener() {
                  @Override
                  public void onHedgeStarted(Request request, int attempt, long afterNanos) {
                    hedges.incrementAndGet();
                  }
                })
            .build();
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls =
            RetryingCallFactory.create(
                client, policy, HedgingPolicy.after(5, TimeUnit.MILLISECONDS))) {
      server.setDispatcher(
          new Dispatcher() {
            final AtomicInteger n = new AtomicInteger();

            @Override
            public MockResponse dispatch(RecordedRequest request) {
              long delayMs = n.incrementAndGet() % 3 == 0 ? 40 : 2;
              return new MockResponse.Builder()
                  .headersDelay(delayMs, TimeUnit.MILLISECONDS)
                  .body("x")
                  .build();
            }
          });
      server.start();
      // -Dokretry.hedgedCalls=10000 for the soak figure; 200 in every build.
      int total = Integer.getInteger("okretry.hedgedCalls", 200);
      CountDownLatch done = new CountDownLatch(total);
      AtomicInteger callbacks = new AtomicInteger();
      for (int i = 0; i < total; i++) {
        Call call = calls.newCall(new Request.Builder().url(server.url("/" + i)).build());
        call.enqueue(
            new Callback() {
              @Override
              public void onResponse(Call c, Response response) {
                response.close();
                callbacks.incrementAndGet();
                done.countDown();
              }

              @Override
              public void onFailure(Call c, IOException e) {
                callbacks.incrementAndGet();
                done.countDown();
              }
            });
        Thread.sleep(random.nextInt(3));
        if (random.nextBoolean()) {
          Thread.sleep(random.nextInt(12)); // before, around or after the 5 ms hedge
          call.cancel();
        }
      }
      assertThat(done.await(30 + total / 50, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(100); // a callback counted twice would show by now
      assertThat(callbacks.get()).as("exactly one outcome per call").isEqualTo(total);
      assertThat(hedges.get())
          .as("hedges were sent, and canceled with their calls")
          .isGreaterThan(total / 10);
      ScheduledThreadPoolExecutor scheduler = (ScheduledThreadPoolExecutor) calls.scheduler;
      assertThat(scheduler.getQueue()).as("no hedge timer left").isEmpty();
    }
  }

  /**
   * Issue 30.3: a burst of hedged calls through OkHttp's default dispatcher (5 calls per host), to
   * a server slower than the hedge delay. Every hedge queues behind the attempts it hedges, and
   * most never leave the client before their call is answered: those are neither paid for nor
   * reported. Counted: the hedges reported ({@code onHedgeStarted}) against those whose headers
   * OkHttp wrote ({@code onNetworkRequest}) and those the server received; the budget spent against
   * the hedges that went. Over HTTP/2 with {@code maxHedges(3)} too. {@code
   * -Dokretry.burstCalls=100 -Dokretry.burstSlowMillis=300 -Dokretry.printTables=true} for the
   * issue's shape; 40 calls of 150 ms in every build.
   */
  @ParameterizedTest(name = "http2={0}")
  @ValueSource(booleans = {false, true})
  void aHedgeThatNeverLeavesTheDispatcherIsNeitherPaidForNorReported(boolean http2)
      throws Exception {
    int total = Integer.getInteger("okretry.burstCalls", 40);
    long slowMillis = Long.getLong("okretry.burstSlowMillis", 150);
    AtomicInteger hedgesStarted = new AtomicInteger();
    AtomicInteger hedgesOnTheNetwork = new AtomicInteger();
    Set<String> hedgeAttempts = ConcurrentHashMap.newKeySet();
    HedgingPolicy hedging = HedgingPolicy.after(50, TimeUnit.MILLISECONDS).maxHedges(http2 ? 3 : 1);
    RetryPolicy policy =
        RetryPolicy.builder()
            .listener(
                new RetryListener() {
                  @Override
                  public void onHedgeStarted(Request request, int attempt, long afterNanos) {
                    hedgesStarted.incrementAndGet();
                    hedgeAttempts.add(System.identityHashCode(request) + "/" + attempt);
                  }

                  @Override
                  public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
                    if (requestInAttempt == 1
                        && hedgeAttempts.contains(
                            System.identityHashCode(request) + "/" + attempt)) {
                      hedgesOnTheNetwork.incrementAndGet();
                    }
                  }
                })
            .build();
    // The hedges okretry handed to the client's dispatcher (callStart: enqueued). The client's own
    // interceptors run after okretry's AttemptSettings on each attempt's call: a hedge gets there
    // only if it left the dispatcher and was let go. Counted apart: those, those of them canceled
    // before their answer (their call won first), and of these the ones canceled before OkHttp
    // wrote their request headers.
    AtomicInteger hedgesQueued = new AtomicInteger();
    AtomicInteger hedgesThatLeft = new AtomicInteger();
    AtomicInteger hedgesCanceled = new AtomicInteger();
    AtomicInteger hedgesCanceledUnwritten = new AtomicInteger();
    Set<Call> written = ConcurrentHashMap.newKeySet();
    OkHttpClient.Builder builder =
        new OkHttpClient.Builder()
            .connectionPool(new ConnectionPool())
            .readTimeout(Duration.ofSeconds(10))
            .eventListener(
                new EventListener() {
                  @Override
                  public void callStart(Call call) {
                    Attempt attempt = Attempt.ofCall(call);
                    if (attempt != null && attempt.hedge) hedgesQueued.incrementAndGet();
                  }

                  @Override
                  public void requestHeadersEnd(Call call, Request request) {
                    written.add(call);
                  }
                })
            .addInterceptor(
                chain -> {
                  Attempt attempt = Attempt.ofCall(chain.call());
                  if (attempt == null || !attempt.hedge) return chain.proceed(chain.request());
                  hedgesThatLeft.incrementAndGet();
                  try {
                    return chain.proceed(chain.request());
                  } catch (IOException e) {
                    if (chain.call().isCanceled()) {
                      hedgesCanceled.incrementAndGet();
                      if (!written.contains(chain.call())) {
                        hedgesCanceledUnwritten.incrementAndGet();
                      }
                    }
                    throw e;
                  }
                });
    if (http2) builder.protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    OkHttpClient client = LeakCheck.track(builder.build());
    AtomicInteger arrivals = new AtomicInteger();
    // MockWebServer logs each stream a loser's cancel resets at INFO, through OkHttp's logger.
    java.util.logging.Logger okhttp =
        java.util.logging.Logger.getLogger(OkHttpClient.class.getName());
    java.util.logging.Level level = okhttp.getLevel();
    okhttp.setLevel(java.util.logging.Level.WARNING);
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls = RetryingCallFactory.create(client, policy, hedging)) {
      if (http2) server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              if (request.getUrl().encodedPath().equals("/warm")) {
                return new MockResponse.Builder().body("warm").build();
              }
              arrivals.incrementAndGet();
              return new MockResponse.Builder()
                  .headersDelay(slowMillis, TimeUnit.MILLISECONDS)
                  .body("x")
                  .build();
            }
          });
      server.start();
      warm(calls, server);
      double tokensBefore = policy.budget.availableTokens();
      CountDownLatch done = new CountDownLatch(total);
      AtomicInteger ok = new AtomicInteger();
      long start = System.nanoTime();
      for (int i = 0; i < total; i++) {
        calls
            .newCall(new Request.Builder().url(server.url("/" + i)).build())
            .enqueue(
                new Callback() {
                  @Override
                  public void onResponse(Call c, Response response) {
                    if (response.isSuccessful()) ok.incrementAndGet();
                    response.close();
                    done.countDown();
                  }

                  @Override
                  public void onFailure(Call c, IOException e) {
                    done.countDown();
                  }
                });
      }
      assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
      long ms = (System.nanoTime() - start) / 1_000_000;
      // A call is answered before its losing hedges are done being canceled: count once they are.
      long idleBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (client.dispatcher().runningCallsCount() + client.dispatcher().queuedCallsCount() > 0
          && System.nanoTime() < idleBy) {
        Thread.sleep(10);
      }
      double spent = tokensBefore - policy.budget.availableTokens();
      int hedgesAtTheServer = arrivals.get() - total;
      String line =
          String.format(
              "http2=%s: %d calls (%d ok) in %d ms; hedges queued %d, started %d, left the client"
                  + " %d (canceled %d, unwritten %d), on the network %d, at the server %d; budget"
                  + " %.1f -> %.1f",
              http2,
              total,
              ok.get(),
              ms,
              hedgesQueued.get(),
              hedgesStarted.get(),
              hedgesThatLeft.get(),
              hedgesCanceled.get(),
              hedgesCanceledUnwritten.get(),
              hedgesOnTheNetwork.get(),
              hedgesAtTheServer,
              tokensBefore,
              policy.budget.availableTokens());
      Diagnostics.println(line);
      assertThat(ok.get()).as(line).isEqualTo(total);
      // Hedges queued behind their calls' attempts, and most never left: what this test is about.
      assertThat(hedgesQueued.get()).as(line).isGreaterThan(hedgesStarted.get());
      // A hedge is reported exactly when it leaves the client's dispatcher: every one reported
      // went on, none that stayed was reported.
      assertThat(hedgesStarted.get()).as(line).isEqualTo(hedgesThatLeft.get());
      // Every hedge the server received was reported. One reported but not received was canceled
      // on its way, its call answered meanwhile (over HTTP/2 with maxHedges(3) the third hedge
      // leaves about when the first attempt's answer arrives); whether the server still saw a
      // canceled one (its headers written, then the stream reset) is a race either way.
      assertThat(hedgesAtTheServer)
          .as(line)
          .isBetween(hedgesStarted.get() - hedgesCanceled.get(), hedgesStarted.get());
      // OkHttp reports headers written (onNetworkRequest) for each that went, except those.
      assertThat(hedgesOnTheNetwork.get())
          .as(line)
          .isEqualTo(hedgesStarted.get() - hedgesCanceledUnwritten.get());
      // Successful first attempts pay in; the hedges that went are the only withdrawals.
      assertThat(spent).as(line).isLessThanOrEqualTo(hedgesStarted.get());
    } finally {
      okhttp.setLevel(level);
    }
  }
}
