package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.RetryBudget.Verdict;
import io.github.okretry.internal.RetryKind;
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

  /** An origin no test fails: what a hedge to it pays is one retry's cost. */
  static final Request HEDGED = new Request.Builder().url("http://hedged.test/").build();

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
    budget.returned(EXAMPLE.url(), r, attempts, null, timeAt(0));
  }

  /**
   * A retry of a call of {@link #EXAMPLE} about to leave, as LogicalCall asks for it (the default
   * schedule: 1.4 s).
   */
  static Verdict pay(RetryBudget budget, RetryKind kind, int maxRetries, long nowNanos) {
    return budget.admit(EXAMPLE.url(), kind, maxRetries, 1_400_000_000L, nowNanos, true);
  }

  /**
   * One retry's cost taken from the balance or the reserve, as a hedge to a healthy origin pays.
   */
  static boolean withdraw(RetryBudget budget, long nowNanos) {
    return budget.payForHedge(HEDGED.url(), nowNanos);
  }

  @Test
  void depositsAreCappedAndReserveRefillsWithTime() {
    RetryBudget budget =
        RetryBudget.builder().percentCanRetry(0.5).maxTokens(2).minRetriesPerSecond(1).build();
    for (int i = 0; i < 100; i++) returned(budget, 200, 1);
    assertThat(budget.availableTokens()).isEqualTo(2.0);
    long t = 0;
    assertThat(withdraw(budget, t)).isTrue();
    assertThat(withdraw(budget, t)).isTrue();
    assertThat(withdraw(budget, t)).as("reserve").isTrue();
    assertThat(withdraw(budget, t)).as("reserve spent").isFalse();
    assertThat(withdraw(budget, t + TimeUnit.MILLISECONDS.toNanos(500)))
        .as("half a second: half a token")
        .isFalse();
    assertThat(withdraw(budget, t + TimeUnit.MILLISECONDS.toNanos(1000)))
        .as("a second: one token")
        .isTrue();
    returned(budget, 200, 1);
    assertThat(budget.availableTokens()).isEqualTo(0.5);
  }

  @Test
  void unlimitedNeverRefusesAndConfigurationIsValidated() {
    RetryBudget unlimited = RetryBudget.unlimited();
    for (int i = 0; i < 1_000; i++) assertThat(withdraw(unlimited, 0)).isTrue();
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
    assertThat(withdraw(nothingBack, 0)).isTrue();
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
    assertThat(withdraw(wholeToken, 0)).isTrue();
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
    assertThat(pay(budget, RetryKind.UNAVAILABLE_SAYS_WHEN, 3, 0)).isEqualTo(Verdict.SEND);
    assertThat(budget.availableTokens()).isEqualTo(1.5);
    assertThat(withdraw(budget, 0)).isTrue();
    assertThat(withdraw(budget, 0)).as("half a token left: not enough after an error").isFalse();
    assertThat(pay(budget, RetryKind.UNAVAILABLE_SAYS_WHEN, 3, 0))
        .as("enough to honour a Retry-After")
        .isEqualTo(Verdict.SEND);
    assertThat(pay(budget, RetryKind.UNAVAILABLE_SAYS_WHEN, 3, 0)).isEqualTo(Verdict.NO_TOKENS);
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
        // The second call's retry is skipped through the backoff it would have waited (3 waits)
        // and a quarter of its base delay more in case the origin answers meanwhile, and never
        // sent; the strict rule refuses at once.
        assertThat(time.sleeps()).hasSize(strict ? 0 : 3 + 3 + 1);
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
    for (int i = 0; i < 3; i++) {
      assertThat(pay(budget, RetryKind.ERROR, 3, 0)).as("a new budget").isEqualTo(Verdict.SEND);
    }
    assertThat(pay(budget, RetryKind.ERROR, 3, 0))
        .as("held until the origin answers")
        .isEqualTo(Verdict.SKIP);
    returned(budget, 500, 1);
    returned(budget, 408, 1);
    returned(budget, 429, 2);
    assertThat(pay(budget, RetryKind.ERROR, 3, 0))
        .as("a 500, 408 or 429 is no success")
        .isEqualTo(Verdict.SKIP);
    assertThat(budget.availableTokens()).as("and pays nothing in").isEqualTo(97.0);
    returned(budget, 404, 2);
    assertThat(budget.availableTokens())
        .as("a retry's success earns nothing (no price given)")
        .isEqualTo(97.0);
    assertThat(pay(budget, RetryKind.ERROR, 3, 0))
        .as("but a 404 shows the server working")
        .isEqualTo(Verdict.SEND);
    assertThat(pay(RetryBudget.unlimited(), RetryKind.ERROR, 0, 0)).isEqualTo(Verdict.SEND);
  }

  @Test
  void anOriginThatFailedEverythingForTwoSchedulesEndsItsCallsAtOnce() {
    RetryBudget budget = RetryBudget.builder().build();
    long second = 1_000_000_000L;
    budget.failed(EXAMPLE.url(), 0);
    for (int i = 0; i < 3; i++) {
      assertThat(pay(budget, RetryKind.ERROR, 3, 0)).isEqualTo(Verdict.SEND);
    }
    budget.failed(EXAMPLE.url(), 2 * second);
    assertThat(pay(budget, RetryKind.ERROR, 3, 2 * second))
        .as("2 s of failures, within two 1.4 s schedules: skipped")
        .isEqualTo(Verdict.SKIP);
    assertThat(pay(budget, RetryKind.ERROR, 3, 3 * second))
        .as("3 s: down, the call ends")
        .isEqualTo(Verdict.ORIGIN_DOWN);
    assertThat(budget.admit(EXAMPLE.url(), RetryKind.ERROR, 3, 1_400_000_000L, 3 * second, false))
        .as("asked before the wait too")
        .isEqualTo(Verdict.ORIGIN_DOWN);
    assertThat(pay(budget, RetryKind.THROTTLED, 3, 3 * second))
        .as("a throttled client's retry counts nothing")
        .isEqualTo(Verdict.SEND);
    Request other = new Request.Builder().url("http://other.test/").build();
    assertThat(budget.admit(other.url(), RetryKind.ERROR, 3, 1_400_000_000L, 3 * second, true))
        .as("another origin is another streak")
        .isEqualTo(Verdict.SEND);
    budget.returned(EXAMPLE.url(), okResponse(), 1, null, timeAt(3 * second));
    assertThat(pay(budget, RetryKind.ERROR, 3, 3 * second))
        .as("an answer ends the streak")
        .isEqualTo(Verdict.SEND);
    budget.failed(EXAMPLE.url(), 4 * second);
    for (int i = 0; i < 2; i++) pay(budget, RetryKind.ERROR, 3, 4 * second);
    assertThat(pay(budget, RetryKind.ERROR, 3, 4 * second)).isEqualTo(Verdict.SKIP);
    assertThat(pay(budget, RetryKind.ERROR, 3, 40 * second))
        .as("forgotten 30 s after its last failure")
        .isEqualTo(Verdict.SEND);
  }

  @Test
  void noHedgeGoesToAnOriginThatFailedSinceItLastAnswered() {
    RetryBudget budget = RetryBudget.builder().build();
    assertThat(budget.payForHedge(EXAMPLE.url(), 0)).isTrue();
    budget.failed(EXAMPLE.url(), 0);
    assertThat(budget.payForHedge(EXAMPLE.url(), 0)).isFalse();
    assertThat(withdraw(budget, 0)).as("another origin").isTrue();
    budget.returned(EXAMPLE.url(), okResponse(), 1, null, timeAt(0));
    assertThat(budget.payForHedge(EXAMPLE.url(), 0)).isTrue();
  }

  static TimeSource timeAt(long nanos) {
    return new TimeSource() {
      @Override
      public long nanoTime() {
        return nanos;
      }

      @Override
      public void sleep(long sleepNanos, Call call) {
        throw new AssertionError("no wait here");
      }
    };
  }

  private static Response okResponse() {
    return new Response.Builder()
        .request(EXAMPLE)
        .protocol(okhttp3.Protocol.HTTP_1_1)
        .code(200)
        .message("")
        .build();
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
    for (int i = 0; i < 10; i++) {
      a.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    }
    assertThat(shared.availableTokens()).isEqualTo(2.0);
    b.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    assertThat(hits.get()).isEqualTo(4 + 10 + 3); // b's first attempt + the 2 retries a paid for
  }
}
