package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What a retry the budget holds costs the rest of the process (issue 42), against a real
 * MockWebServer on loopback, through the public API only. The origin is dead: it answers 503 with a
 * 64 KiB maintenance page to everything, and one failing call first spends the budget's count for
 * it ({@link #spendTheCount}), so the calls measured are the ones whose retries the budget holds.
 *
 * <ul>
 *   <li><b>Memory</b>: {@value #HELD_CALLS} factory calls waiting out a long backoff keep no more
 *       heap (after a full collection) than twice what the same calls keep with {@link
 *       RetryBudget#unlimited()}: no error body is kept across a wait. (Main at 34cc5b2: 70 000 B a
 *       call against 2 300.)
 *   <li><b>Dispatcher slots</b>: while factory calls to a host are held on a 503 whose page
 *       trickles, a healthy call to another path of the same host (OkHttp's 5 slots per host) is
 *       answered no later than twice as late as with no budget, and half a second: no held body is
 *       read on OkHttp's dispatcher thread. (Main: 3.7 s against 0.28 s.)
 *   <li><b>Deadline</b>: a call bounded by {@code deadline(1 s)} or OkHttp's {@code callTimeout} of
 *       1 s, on both drivers, whose schedule (0.5 s, 1 s) cannot fit, ends within 1.25 s, and one
 *       that ran out of time says {@link GiveUpReason#DEADLINE_EXCEEDED}. (Main: 1.50 s, {@code
 *       NO_RECENT_SUCCESS}, but for the interceptor's {@code callTimeout}, which OkHttp enforces.)
 * </ul>
 *
 * <p>The heavier rows (10 000 held calls, the default backoff under 1 s and 3 s deadlines, a
 * 50-thread closed loop against a dead origin) are in {@link HeldCostSoakTest}. The figures are
 * printed with {@code mvn -B test -Dtest=HeldCostRealServerTest -Dokretry.printTables=true}.
 */
@Tag("integration")
@Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class HeldCostRealServerTest {

  /** The held calls of the default run's memory row ({@link HeldCostSoakTest}: 10 000). */
  static final int HELD_CALLS = 2_000;

  /** A dead origin's error page: as large as the budget ever kept of one (issue 42). */
  static final int PAGE_BYTES = 64 * 1024;

  private static final String PAGE = "m".repeat(PAGE_BYTES);

  /** 503 with a 64 KiB maintenance page, sent at once. */
  static MockResponse maintenancePage() {
    return new MockResponse.Builder().code(503).body(PAGE).build();
  }

  /**
   * 503 with a 64 KiB maintenance page that trickles, 8 KiB every 250 ms (2 s in all): a dead
   * origin behind a slow link or a struggling proxy.
   */
  static MockResponse tricklingPage() {
    return new MockResponse.Builder()
        .code(503)
        .body(PAGE)
        .throttleBody(8 * 1024, 250, TimeUnit.MILLISECONDS)
        .build();
  }

  /** {@code /ok}: 200; {@code /warm}: an empty 503; anything else {@code page}. */
  static Dispatcher deadBesideHealthy(boolean trickling) {
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getUrl().encodedPath();
        if (path.equals("/ok")) return new MockResponse.Builder().body("ok").build();
        if (path.equals("/warm")) return new MockResponse.Builder().code(503).build();
        return trickling ? tricklingPage() : maintenancePage();
      }
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Memory

  /**
   * {@code calls} factory calls waiting their backoff, and what they keep.
   *
   * @param waiting calls that had not ended when the heap was measured
   * @param ended calls that had ended by then (a design that fails them fast keeps nothing)
   * @param bytesPerCall the heap used after a full collection, less the same before the calls, over
   *     {@code calls}
   * @param millisToSettle from the first enqueue until every call waited or ended, the dispatcher
   *     idle
   */
  record Held(int calls, int waiting, int ended, long bytesPerCall, long millisToSettle) {}

  /**
   * {@code calls} calls of a {@link RetryingCallFactory} with the default budget ({@code budgeted})
   * or none, enqueued at once against a server that answers every request 503 with a 64 KiB page,
   * after one failing call (with a short backoff, on the same budget) has spent the origin's count.
   * Their backoff is 60 s without jitter, so each waits its first backoff when the heap is measured
   * (once the server has answered every first attempt and OkHttp's dispatcher is idle); closing the
   * factory then ends them.
   */
  static Held heldFactoryCalls(boolean budgeted, int calls) throws Exception {
    OkHttpClient base = LeakCheck.track(new OkHttpClient.Builder().build());
    base.dispatcher().setMaxRequests(64);
    base.dispatcher().setMaxRequestsPerHost(64);
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              return maintenancePage();
            }
          });
      server.start();
      Request request = new Request.Builder().url(server.url("/")).build();
      RetryBudget budget = budgeted ? RetryBudget.builder().build() : RetryBudget.unlimited();
      spendTheCount(base, budget, request);
      RetryPolicy policy =
          RetryPolicy.builder()
              .baseDelay(Duration.ofSeconds(60))
              .maxDelay(Duration.ofSeconds(120))
              .jitter(Jitter.NONE)
              .retryBudget(budget)
              .build();
      int warmRequests = server.getRequestCount();
      forgetRecordedRequests(server);
      long before = heapAfterGc();
      Ends ends = new Ends();
      RetryingCallFactory factory = RetryingCallFactory.create(base, policy);
      try {
        long start = System.nanoTime();
        for (int i = 0; i < calls; i++) factory.newCall(request).enqueue(ends);
        // Every first attempt answered and handled (nothing left on OkHttp's dispatcher): each
        // call now waits on the factory's scheduler, or has ended.
        awaitTrue(
            () ->
                server.getRequestCount() >= warmRequests + calls
                    && base.dispatcher().runningCallsCount() == 0
                    && base.dispatcher().queuedCallsCount() == 0,
            Duration.ofSeconds(180));
        long settled = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        forgetRecordedRequests(server);
        long after = heapAfterGc();
        int ended = ends.count();
        return new Held(calls, calls - ended, ended, (after - before) / calls, settled);
      } finally {
        factory.close();
        ends.await(calls, Duration.ofSeconds(60));
      }
    } finally {
      shutDown(base);
    }
  }

  @Test
  void heldFactoryCallsKeepNoMoreHeapThanTwiceWhatUnbudgetedOnesKeep() throws Exception {
    assertHeldCallsCostAsUnbudgetedOnes(HELD_CALLS);
  }

  static void assertHeldCallsCostAsUnbudgetedOnes(int calls) throws Exception {
    Held unlimited = heldFactoryCalls(false, calls);
    Held budgeted = heldFactoryCalls(true, calls);
    Diagnostics.printf(
        "memory, %d factory calls waiting on a 503 with a %d KiB page: default budget %,d B a call"
            + " (%d waiting, %d ended, settled in %d ms); unlimited %,d B a call (%d waiting, %d"
            + " ended, %d ms)%n",
        calls,
        PAGE_BYTES / 1024,
        budgeted.bytesPerCall(),
        budgeted.waiting(),
        budgeted.ended(),
        budgeted.millisToSettle(),
        unlimited.bytesPerCall(),
        unlimited.waiting(),
        unlimited.ended(),
        unlimited.millisToSettle());
    // The unbudgeted calls all wait: what each keeps is a call's own state, the baseline.
    assertThat(unlimited.waiting()).isEqualTo(calls);
    // 2x, as issue 42 asks, plus 512 B a call for what a full collection leaves to chance (1 MB
    // over 2 000 calls); a kept 64 KiB page is 130 times that.
    assertThat(budgeted.bytesPerCall())
        .as("heap a held call keeps, against %d B an unbudgeted one", unlimited.bytesPerCall())
        .isLessThanOrEqualTo(2 * Math.max(0, unlimited.bytesPerCall()) + 512);
  }

  /**
   * Spends the budget's count for {@code request}'s origin: one call that fails every attempt (the
   * default policy's 3 retries, so one failing call's worth for the calls measured), with a 1 ms
   * backoff so it takes no time, on a policy that shares {@code budget}. The origin has then failed
   * for a few milliseconds: far less than twice any measured call's schedule, after which a budget
   * may fail its calls at once.
   */
  static void spendTheCount(OkHttpClient base, RetryBudget budget, Request request)
      throws IOException {
    RetryPolicy warm =
        RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).retryBudget(budget).build();
    OkHttpClient client =
        RetryInterceptor.create(warm).install(base.newBuilder().callTimeout(Duration.ZERO)).build();
    try (Response response = client.newCall(request).execute()) {
      response.body().string();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Dispatcher slots

  /**
   * What a healthy call waited beside held ones.
   *
   * @param healthyMillis from enqueue to its response, for each healthy call
   */
  record Slots(List<Long> healthyMillis) {
    long maxMillis() {
      return Collections.max(healthyMillis);
    }
  }

  /**
   * A factory with the default policy and the default budget ({@code budgeted}) or none, over a
   * client with OkHttp's 5 slots per host. One failing call to {@code /warm} (an empty 503) spends
   * the origin's count; then {@code deadCalls} calls to {@code /dead} are enqueued at once, whose
   * 503 sends its 64 KiB page slowly (8 KiB every 250 ms), and 300, 600 and 900 ms later a healthy
   * call to {@code /ok} each (200): how long each of those waited for its answer.
   */
  static Slots healthyCallsBesideHeldOnes(boolean budgeted, int deadCalls) throws Exception {
    OkHttpClient base = LeakCheck.track(new OkHttpClient.Builder().build());
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(deadBesideHealthy(true));
      server.start();
      RetryBudget budget = budgeted ? RetryBudget.builder().build() : RetryBudget.unlimited();
      spendTheCount(base, budget, new Request.Builder().url(server.url("/warm")).build());
      RetryingCallFactory factory =
          RetryingCallFactory.create(base, RetryPolicy.builder().retryBudget(budget).build());
      Ends dead = new Ends();
      try {
        Request deadRequest = new Request.Builder().url(server.url("/dead")).build();
        for (int i = 0; i < deadCalls; i++) factory.newCall(deadRequest).enqueue(dead);
        List<Long> healthy = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch answered = new CountDownLatch(3);
        for (int i = 0; i < 3; i++) {
          Thread.sleep(300);
          long sent = System.nanoTime();
          factory
              .newCall(new Request.Builder().url(server.url("/ok")).build())
              .enqueue(
                  new Callback() {
                    @Override
                    public void onResponse(Call call, Response response) {
                      response.close();
                      healthy.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent));
                      answered.countDown();
                    }

                    @Override
                    public void onFailure(Call call, IOException e) {
                      healthy.add(Long.MAX_VALUE);
                      answered.countDown();
                    }
                  });
        }
        assertThat(answered.await(60, TimeUnit.SECONDS)).as("healthy calls answered").isTrue();
        return new Slots(List.copyOf(healthy));
      } finally {
        factory.close();
        base.dispatcher().cancelAll();
        dead.await(deadCalls, Duration.ofSeconds(30));
      }
    } finally {
      shutDown(base);
    }
  }

  @Test
  void aHealthyCallToTheSameHostWaitsNoLongerBesideHeldCallsThanWithoutABudget() throws Exception {
    int deadCalls = 20;
    Slots unlimited = healthyCallsBesideHeldOnes(false, deadCalls);
    Slots budgeted = healthyCallsBesideHeldOnes(true, deadCalls);
    Diagnostics.printf(
        "dispatcher slots, %d factory calls on a 503 whose 64 KiB page trickles, 5 slots a host:"
            + " healthy calls waited %s ms with the default budget, %s ms with none%n",
        deadCalls, budgeted.healthyMillis(), unlimited.healthyMillis());
    // Twice, plus half a second: real time on a shared machine. Reading held bodies on the
    // dispatcher took the slots for a second each (issue 42: 3.9 s against 0.3 s).
    assertThat(budgeted.maxMillis())
        .as("longest wait of a healthy call, against %d ms without a budget", unlimited.maxMillis())
        .isLessThanOrEqualTo(2 * unlimited.maxMillis() + 500);
  }

  // ---------------------------------------------------------------------------------------------
  // Deadline

  /** How one call bounded in time ended. */
  record Ended(long millis, @Nullable GiveUpReason reason, long waitedMillis, String what) {}

  /**
   * {@code calls} calls at once, each bounded by {@code limit}: okretry's {@code deadline} or, if
   * {@code callTimeout}, OkHttp's {@code callTimeout} on the client; through the factory ({@code
   * enqueue}) or the interceptor ({@code execute}, a thread each), with the default policy but what
   * {@code schedule} sets. The server answers 503 with a 64 KiB page that trickles ({@link
   * #tricklingPage}); one failing call first spends the origin's count on the same budget ({@link
   * #spendTheCount}, its 503s empty). Why each gave up: {@link RetryOutcome#of} its response or
   * exception, or else what {@link RetryListener#onGaveUp} said.
   */
  static List<Ended> boundedCalls(
      boolean factory,
      Duration limit,
      boolean callTimeout,
      int calls,
      UnaryOperator<RetryPolicy.Builder> schedule)
      throws Exception {
    OkHttpClient base =
        LeakCheck.track(
            new OkHttpClient.Builder().callTimeout(callTimeout ? limit : Duration.ZERO).build());
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(deadBesideHealthy(true));
      server.start();
      RetryBudget budget = RetryBudget.builder().build();
      spendTheCount(base, budget, new Request.Builder().url(server.url("/warm")).build());
      Map<String, GiveUpReason> gaveUp = new ConcurrentHashMap<>();
      RetryPolicy.Builder b =
          schedule
              .apply(RetryPolicy.builder())
              .retryBudget(budget)
              .listener(
                  new RetryListener() {
                    @Override
                    public void onGaveUp(
                        Request request, int attempts, GiveUpReason reason, String lastFailure) {
                      gaveUp.put(request.url().toString(), reason);
                    }
                  });
      if (!callTimeout) b.deadline(limit);
      RetryPolicy policy = b.build();
      List<Ended> ended = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch done = new CountDownLatch(calls);
      if (factory) {
        try (RetryingCallFactory f = RetryingCallFactory.create(base, policy)) {
          for (int i = 0; i < calls; i++) {
            Request request = new Request.Builder().url(server.url("/?call=" + i)).build();
            long start = System.nanoTime();
            f.newCall(request)
                .enqueue(
                    new Callback() {
                      @Override
                      public void onResponse(Call call, Response response) {
                        try (response) {
                          ended.add(
                              ended(start, RetryOutcome.of(response), request, gaveUp, response));
                        }
                        done.countDown();
                      }

                      @Override
                      public void onFailure(Call call, IOException e) {
                        ended.add(ended(start, RetryOutcome.of(e), request, gaveUp, e));
                        done.countDown();
                      }
                    });
          }
          assertThat(done.await(60, TimeUnit.SECONDS)).as("calls ended").isTrue();
        }
      } else {
        OkHttpClient client = RetryInterceptor.create(policy).install(base.newBuilder()).build();
        ExecutorService threads = Executors.newFixedThreadPool(calls);
        try {
          for (int i = 0; i < calls; i++) {
            Request request = new Request.Builder().url(server.url("/?call=" + i)).build();
            threads.execute(
                () -> {
                  long start = System.nanoTime();
                  try (Response response = client.newCall(request).execute()) {
                    ended.add(ended(start, RetryOutcome.of(response), request, gaveUp, response));
                  } catch (IOException e) {
                    ended.add(ended(start, RetryOutcome.of(e), request, gaveUp, e));
                  } finally {
                    done.countDown();
                  }
                });
          }
          assertThat(done.await(60, TimeUnit.SECONDS)).as("calls ended").isTrue();
        } finally {
          threads.shutdownNow();
          assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
      }
      return List.copyOf(ended);
    } finally {
      shutDown(base);
    }
  }

  private static Ended ended(
      long startNanos,
      @Nullable RetryOutcome outcome,
      Request request,
      Map<String, GiveUpReason> gaveUp,
      Object what) {
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    GiveUpReason reason =
        outcome != null ? outcome.giveUpReason() : gaveUp.get(request.url().toString());
    long waited = outcome == null ? -1 : TimeUnit.NANOSECONDS.toMillis(outcome.waitedNanos());
    String description =
        what instanceof Response r ? "HTTP " + r.code() : what.getClass().getSimpleName();
    return new Ended(millis, reason, waited, description);
  }

  /**
   * Each call ends within {@code limit} and a quarter of a second, and one that ran out of time
   * (ended at or past {@code limit}) says {@link GiveUpReason#DEADLINE_EXCEEDED}. A call may end
   * sooner, for whatever reason: its schedule done, or its dead origin failed fast.
   */
  static void assertEndsInTime(
      boolean factory,
      Duration limit,
      boolean callTimeout,
      String scheduleName,
      UnaryOperator<RetryPolicy.Builder> schedule)
      throws Exception {
    List<Ended> ended = boundedCalls(factory, limit, callTimeout, 3, schedule);
    Diagnostics.printf(
        "deadline, %s, %s %d ms, %s, dead origin (its page trickles), count spent: %s%n",
        factory ? "factory" : "interceptor",
        callTimeout ? "callTimeout" : "deadline",
        limit.toMillis(),
        scheduleName,
        ended);
    for (Ended e : ended) {
      assertThat(e.millis()).as("%s", e).isLessThanOrEqualTo(limit.toMillis() + 250);
      if (e.millis() >= limit.toMillis()) {
        assertThat(e.reason()).as("%s", e).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
      }
    }
  }

  /**
   * Waits of 0.5 s and 1 s, without jitter: the schedule cannot fit in 1 s, so every call runs out
   * of time, or gives up before the wait that would. (The default backoff's, 1 s and 3 s: {@link
   * HeldCostSoakTest}.)
   */
  @ParameterizedTest(name = "factory: {0}, callTimeout: {1}")
  @CsvSource({"false, false", "true, false", "false, true", "true, true"})
  void aCallOnADeadOriginEndsByItsDeadlineAndSaysSo(boolean factory, boolean callTimeout)
      throws Exception {
    assertEndsInTime(
        factory,
        Duration.ofSeconds(1),
        callTimeout,
        "base 500 ms, no jitter",
        b -> b.baseDelay(Duration.ofMillis(500)).jitter(Jitter.NONE));
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /** Counts the calls that ended, closing any response. */
  static final class Ends implements Callback {
    private final AtomicInteger count = new AtomicInteger();

    int count() {
      return count.get();
    }

    @Override
    public void onResponse(Call call, Response response) {
      response.close();
      count.incrementAndGet();
    }

    @Override
    public void onFailure(Call call, IOException e) {
      count.incrementAndGet();
    }

    void await(int calls, Duration atMost) throws InterruptedException {
      awaitTrue(() -> count.get() >= calls, atMost);
    }
  }

  /** Polls {@code condition} every 20 ms until true; fails after {@code atMost}. */
  static void awaitTrue(BooleanSupplier condition, Duration atMost) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) throw new AssertionError("not within " + atMost);
      Thread.sleep(20);
    }
  }

  /**
   * The heap in use after full collections, the least of three: what is reachable, with little of a
   * collector's timing in it.
   */
  static long heapAfterGc() throws InterruptedException {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
      least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
    }
    return least;
  }

  /** MockWebServer keeps every request it answered until taken: take them, so none is counted. */
  static void forgetRecordedRequests(MockWebServer server) throws InterruptedException {
    while (server.takeRequest(0, TimeUnit.MILLISECONDS) != null) {
      // taken
    }
  }

  static void shutDown(OkHttpClient base) {
    base.dispatcher().cancelAll();
    base.dispatcher().executorService().shutdown();
    base.connectionPool().evictAll();
  }
}
