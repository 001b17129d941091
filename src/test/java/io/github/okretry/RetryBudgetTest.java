package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.RetryTokenBucket.Kind;
import io.github.okretry.internal.RetryTokenBucket.Payment;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The retry budget bounds extra load when failures persist, and is invisible when they don't. */
@Tag("integration")
class RetryBudgetTest {

  /**
   * Time for many concurrent callers: it moves forward one tick per call (set by the test), not by
   * each caller's sleep, because the sleeps of concurrent callers overlap.
   */
  static final class SharedClock implements TimeSource {
    long nanos = 1;

    @Override
    public long nanoTime() {
      return nanos;
    }

    @Override
    public void sleep(long sleepNanos, Call call) throws IOException {
      TimeSource.checkInterruptedOrCanceled(call);
    }
  }

  /** Answers 503 with probability {@code failureRate}, else 200, without a network. */
  static Interceptor flakyServer(double failureRate, long seed, AtomicInteger hits) {
    SplittableRandom random = new SplittableRandom(seed);
    return chain -> {
      hits.incrementAndGet();
      int code;
      synchronized (random) {
        code = random.nextDouble() < failureRate ? 503 : 200;
      }
      return new Response.Builder()
          .request(chain.request())
          .protocol(Protocol.HTTP_1_1)
          .code(code)
          .message("x")
          .body(ResponseBody.create("", null))
          .build();
    };
  }

  record Run(int calls, int hits, int failedCalls, int retriedFailures) {
    double hitsPerCall() {
      return hits / (double) calls;
    }
  }

  static Run run(double failureRate, int calls) throws IOException {
    SharedClock clock = new SharedClock();
    AtomicInteger hits = new AtomicInteger();
    int[] gaveUpOnBudget = {0};
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .timeSource(clock)
                .maxRetries(3)
                .listener(
                    new RetryListener() {
                      @Override
                      public void onGaveUp(
                          Request request, int attempts, GiveUpReason reason, String lastFailure) {
                        if (reason == GiveUpReason.BUDGET_EXHAUSTED
                            || reason == GiveUpReason.NO_RECENT_SUCCESS) gaveUpOnBudget[0]++;
                      }
                    })
                .build());
    OkHttpClient client =
        new OkHttpClient.Builder()
            .addInterceptor(retry)
            .addInterceptor(flakyServer(failureRate, 42, hits))
            .build();
    int failed = 0;
    for (int i = 0; i < calls; i++) {
      clock.nanos += TimeUnit.MILLISECONDS.toNanos(1); // 1 000 calls per second
      try (Response r =
          client.newCall(new Request.Builder().url("http://example.test/").build()).execute()) {
        if (r.code() != 200) failed++;
      }
    }
    return new Run(calls, hits.get(), failed, gaveUpOnBudget[0]);
  }

  @Test
  void underPersistentFailureServerHitsPerCallConvergeToAtMost1point2() throws IOException {
    Run run = run(1.0, 5_000);
    Diagnostics.printf(
        "100%% failing server, 5000 calls at 1000/s: %.3f server hits per logical call (no budget:"
            + " 4.0)%n",
        run.hitsPerCall());
    assertThat(run.hitsPerCall()).isLessThanOrEqualTo(1.2);
  }

  @Test
  void withFivePercentFailuresEveryFailureIsStillRetried() throws IOException {
    Run run = run(0.05, 5_000);
    Diagnostics.printf(
        "5%% failing server, 5000 calls: %.3f hits per call, %d calls refused a retry by the"
            + " budget, %d calls ended on 503%n",
        run.hitsPerCall(), run.retriedFailures(), run.failedCalls());
    assertThat(run.retriedFailures()).as("calls refused a retry by the budget").isZero();
    assertThat(run.failedCalls()).isZero(); // 3 retries at 5% each: (1/20)^4 per call
  }

  @Test
  void realServerFailing100PercentFromEightThreads() throws Exception {
    AtomicInteger hits = new AtomicInteger();
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              hits.incrementAndGet();
              return new MockResponse.Builder().code(503).build();
            }
          });
      server.start();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .baseDelay(Duration.ofMillis(1))
                  .maxDelay(Duration.ofMillis(5))
                  .build());
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(retry).build();
      // Each held call waits its (1-5 ms) backoff and, at its last attempt, up to 100 ms for an
      // answer (no thread sends while all are held): 200 calls keep this near 3 s.
      int calls = 200;
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        Future<?>[] futures = new Future<?>[8];
        for (int t = 0; t < 8; t++) {
          futures[t] =
              pool.submit(
                  () -> {
                    for (int i = 0; i < calls / 8; i++) {
                      try (Response r =
                          client
                              .newCall(new Request.Builder().url(server.url("/")).build())
                              .execute()) {
                        assertThat(r.code()).isEqualTo(503);
                      }
                    }
                    return null;
                  });
        }
        for (Future<?> f : futures) f.get(60, TimeUnit.SECONDS);
      } finally {
        pool.shutdownNow();
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
      double perCall = hits.get() / (double) calls;
      Diagnostics.printf(
          "real MockWebServer failing 100%%, 8 threads x 25 calls: %.3f server hits per logical"
              + " call%n",
          perCall);
      assertThat(perCall).isLessThanOrEqualTo(1.2);
    }
  }

  static final Request EXAMPLE = new Request.Builder().url("http://example.test/").build();

  /**
   * A call of {@link #EXAMPLE} returns {@code code} after {@code attempts}, as LogicalCall reports
   * it.
   */
  static void returned(RetryBudget budget, int code, int attempts) {
    Response r =
        new Response.Builder()
            .request(EXAMPLE)
            .protocol(okhttp3.Protocol.HTTP_1_1)
            .code(code)
            .message("")
            .build();
    budget.returned(EXAMPLE, null, r, attempts, 0);
  }

  /** A retry of a call of {@link #EXAMPLE}, as LogicalCall asks for it. */
  static Payment pay(RetryBudget budget, Kind kind, int maxRetries, long nowNanos) {
    return budget.payForRetry(
        budget.streak(io.github.okretry.internal.OriginGate.origin(EXAMPLE.url())),
        kind,
        budget.price(kind),
        maxRetries,
        nowNanos);
  }

  @Test
  void depositsAreCappedAndReserveRefillsWithTime() {
    RetryBudget budget =
        RetryBudget.builder().percentCanRetry(0.5).maxTokens(2).minRetriesPerSecond(1).build();
    for (int i = 0; i < 100; i++) returned(budget, 200, 1);
    assertThat(budget.availableTokens()).isEqualTo(2.0);
    long t = 0;
    assertThat(budget.tryWithdraw(t)).isTrue();
    assertThat(budget.tryWithdraw(t)).isTrue();
    assertThat(budget.tryWithdraw(t)).as("reserve").isTrue();
    assertThat(budget.tryWithdraw(t)).as("reserve spent").isFalse();
    assertThat(budget.tryWithdraw(t + TimeUnit.MILLISECONDS.toNanos(500)))
        .as("half a second: half a token")
        .isFalse();
    assertThat(budget.tryWithdraw(t + TimeUnit.MILLISECONDS.toNanos(1000)))
        .as("a second: one token")
        .isTrue();
    returned(budget, 200, 1);
    assertThat(budget.availableTokens()).isEqualTo(0.5);
  }

  @Test
  void unlimitedNeverRefusesAndConfigurationIsValidated() {
    RetryBudget unlimited = RetryBudget.unlimited();
    for (int i = 0; i < 1_000; i++) assertThat(unlimited.tryWithdraw(0)).isTrue();
    assertThat(unlimited.availableTokens())
        .as("documented: never runs out")
        .isEqualTo(Double.POSITIVE_INFINITY);
    assertThatThrownBy(() -> RetryBudget.builder().percentCanRetry(1.5))
        .hasMessageContaining("percentCanRetry");
    assertThatThrownBy(() -> RetryBudget.builder().minRetriesPerSecond(-1))
        .hasMessageContaining("minRetriesPerSecond");
    assertThatThrownBy(() -> RetryBudget.builder().maxTokens(0)).hasMessageContaining("maxTokens");
    assertThatThrownBy(() -> RetryPolicy.builder().retryBudget(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void theEdgesOfEachSettingAreAcceptedAndTheValuesPastThemRejected() {
    RetryBudget nothingBack =
        RetryBudget.builder().percentCanRetry(0).maxTokens(1).minRetriesPerSecond(0).build();
    assertThat(nothingBack.availableTokens()).isEqualTo(1.0);
    assertThat(nothingBack.tryWithdraw(0)).isTrue();
    returned(nothingBack, 200, 1);
    assertThat(nothingBack.availableTokens())
        .as("percentCanRetry 0: successes pay nothing in")
        .isZero();
    RetryBudget wholeToken =
        RetryBudget.builder()
            .percentCanRetry(1)
            .maxTokens(1_000_000)
            .minRetriesPerSecond(1_000_000)
            .build();
    assertThat(wholeToken.availableTokens()).isEqualTo(1_000_000.0);
    assertThat(wholeToken.tryWithdraw(0)).isTrue();
    returned(wholeToken, 200, 1);
    assertThat(wholeToken.availableTokens())
        .as("percentCanRetry 1: a whole token per success")
        .isEqualTo(1_000_000.0);
    assertThatThrownBy(() -> RetryBudget.builder().percentCanRetry(-0.01))
        .hasMessage("percentCanRetry must be in [0, 1]: -0.01");
    assertThatThrownBy(() -> RetryBudget.builder().maxTokens(1_000_001))
        .hasMessage("maxTokens not in [1, 1000000]: 1000001");
    assertThatThrownBy(() -> RetryBudget.builder().minRetriesPerSecond(1_000_001))
        .hasMessage("minRetriesPerSecond not in [0, 1000000]: 1000001");
  }

  @Test
  void aNewBudgetStartsFullAndARetryAfterRetryAfterCostsHalfAToken() {
    assertThat(RetryBudget.builder().build().availableTokens()).isEqualTo(100.0);
    RetryBudget budget = RetryBudget.builder().maxTokens(2).minRetriesPerSecond(0).build();
    assertThat(budget.availableTokens()).isEqualTo(2.0);
    assertThat(pay(budget, Kind.RETRY_AFTER, 3, 0)).isEqualTo(Payment.PAID);
    assertThat(budget.availableTokens()).isEqualTo(1.5);
    assertThat(budget.tryWithdraw(0)).isTrue();
    assertThat(budget.tryWithdraw(0)).as("half a token left: not enough after an error").isFalse();
    assertThat(pay(budget, Kind.RETRY_AFTER, 3, 0))
        .as("enough to honour a Retry-After")
        .isEqualTo(Payment.PAID);
    assertThat(pay(budget, Kind.RETRY_AFTER, 3, 0)).isEqualTo(Payment.NO_TOKENS);
  }

  @Test
  void aQuietFleetOfFreshClientsGivesADeadServerOneCallsRetriesEachAndTheStrictRuleNone()
      throws IOException {
    // 200 fresh clients, 2 calls each to a server failing everything: each client's first call
    // makes its 3 retries, its second none (2.5 attempts per call, the least a client that
    // retries its first failure can send); with retryBeforeFirstSuccess(false), no retry at all.
    for (boolean strict : new boolean[] {false, true}) {
      AtomicInteger hits = new AtomicInteger();
      for (int c = 0; c < 200; c++) {
        FakeTime time = new FakeTime();
        RetryPolicy.Builder b = RetryPolicy.builder().timeSource(time);
        if (strict) b.retryBudget(RetryBudget.builder().retryBeforeFirstSuccess(false).build());
        RetryInterceptor retry = RetryInterceptor.create(b.build());
        OkHttpClient client =
            new OkHttpClient.Builder()
                .addInterceptor(retry)
                .addInterceptor(flakyServer(1.0, c, hits))
                .build();
        for (int call = 0; call < 2; call++) {
          try (Response r =
              client.newCall(new Request.Builder().url("http://example.test/").build()).execute()) {
            assertThat(r.code()).isEqualTo(503);
            assertThat(r.message()).as("the server's own response").isEqualTo("x");
          }
        }
        // The second call's retry is held through the backoff it would have waited (3 waits) and
        // at its last attempt 100 ms more (20 asks, 5 ms apart) in case the origin answers
        // meanwhile, and never sent; the strict rule refuses at once.
        assertThat(time.sleeps()).hasSize(strict ? 0 : 3 + 3 + 20);
      }
      assertThat(hits.get())
          .as(strict ? "strict: one attempt per call" : "4 + 1 attempts per client")
          .isEqualTo(strict ? 400 : 1000);
    }
    assertThat(RetryBudget.builder().build())
        .hasToString(
            "RetryBudget{percentCanRetry=0.2, minRetriesPerSecond=10, maxTokens=100,"
                + " retryBeforeFirstSuccess=true}");
    assertThat(RetryBudget.builder().retryBeforeFirstSuccess(false).build().toString())
        .endsWith("retryBeforeFirstSuccess=false}");
  }

  @Test
  void retriesSinceTheLastSuccessStopAtOneCallsWorth() {
    RetryBudget budget = RetryBudget.builder().build();
    for (int i = 0; i < 3; i++)
      assertThat(pay(budget, Kind.ERROR, 3, 0)).as("a new budget").isEqualTo(Payment.PAID);
    assertThat(pay(budget, Kind.ERROR, 3, 0))
        .as("held until the origin answers")
        .isEqualTo(Payment.HELD);
    returned(budget, 500, 1);
    returned(budget, 408, 1);
    returned(budget, 429, 2);
    assertThat(pay(budget, Kind.ERROR, 3, 0))
        .as("a 500, 408 or 429 is no success")
        .isEqualTo(Payment.HELD);
    assertThat(budget.availableTokens()).as("and pays nothing in").isEqualTo(97.0);
    returned(budget, 404, 2);
    assertThat(budget.availableTokens())
        .as("a retry's success earns nothing (no price given)")
        .isEqualTo(97.0);
    assertThat(pay(budget, Kind.ERROR, 3, 0))
        .as("but a 404 shows the server working")
        .isEqualTo(Payment.PAID);
    budget.refund(
        Kind.ERROR,
        1_000,
        budget.streak(io.github.okretry.internal.OriginGate.origin(EXAMPLE.url())));
    assertThat(budget.availableTokens()).as("a retry not sent is given back").isEqualTo(97.0);
    assertThat(pay(RetryBudget.unlimited(), Kind.ERROR, 0, 0)).isEqualTo(Payment.PAID);
  }

  @Test
  void interceptorsCanShareOneBudget() throws IOException {
    // Two tokens to start with and no reserve: every retry below is paid from the shared balance.
    RetryBudget shared = RetryBudget.builder().maxTokens(2).minRetriesPerSecond(0).build();
    SharedClock clock = new SharedClock();
    AtomicInteger hits = new AtomicInteger();
    OkHttpClient a =
        new OkHttpClient.Builder()
            .addInterceptor(
                RetryInterceptor.create(
                    RetryPolicy.builder().timeSource(clock).retryBudget(shared).build()))
            .addInterceptor(flakyServer(0.0, 1, hits))
            .build();
    OkHttpClient b =
        new OkHttpClient.Builder()
            .addInterceptor(
                RetryInterceptor.create(
                    RetryPolicy.builder().timeSource(clock).retryBudget(shared).build()))
            .addInterceptor(flakyServer(1.0, 1, hits))
            .build();
    b.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    assertThat(hits.get())
        .as("b's first attempt + 2 retries from the starting balance")
        .isEqualTo(3);
    b.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    assertThat(hits.get()).as("spent: no retry").isEqualTo(4);
    for (int i = 0; i < 10; i++)
      a.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    assertThat(shared.availableTokens()).isEqualTo(2.0);
    b.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    assertThat(hits.get()).isEqualTo(4 + 10 + 3); // b's first attempt + the 2 retries a paid for
  }
}
