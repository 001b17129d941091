package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The fleet simulator's quiet fleets against a real server, in real time: 200 client instances in
 * one JVM (each its own {@link RetryInterceptor}, as 200 processes would have; their OkHttp clients
 * share one connection pool and dispatcher), each making one GET every 2 s (random phase), against
 * a MockWebServer answering 503 without {@code Retry-After} to everything (fresh fleets, 20 s), or
 * 200 for 8 s and then 503 for 20 s (the warm fleet). Requests per call over the calls started
 * while the server fails, counted per call on the client. About 80 s: {@code mvn -B test
 * -Dokretry.excludedGroups= -Dgroups=soak -Dtest=QuietFleetRealServerTest
 * -Dokretry.printTables=true}.
 */
@Tag("soak")
class QuietFleetRealServerTest {

  static final int CLIENTS = 200;
  static final long PERIOD_MILLIS = 2_000;

  record Run(int calls, int requests) {
    double perCall() {
      return requests / (double) calls;
    }
  }

  /**
   * The fleet of {@code budget}s for {@code runMillis}, its server answering 200 for {@code
   * healthyMillis} and then 503; counts the calls started after that and their requests.
   */
  static Run fleet(Supplier<RetryBudget> budget, long healthyMillis, long runMillis)
      throws Exception {
    long[] start = {0};
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              boolean healthy =
                  System.nanoTime() - start[0] < TimeUnit.MILLISECONDS.toNanos(healthyMillis);
              return new MockResponse.Builder()
                  .code(healthy ? 200 : 503)
                  .body(healthy ? "ok" : "down")
                  .build();
            }
          });
      server.start();
      OkHttpClient base =
          new OkHttpClient.Builder()
              .connectionPool(new ConnectionPool(50, 1, TimeUnit.MINUTES))
              .addInterceptor(
                  chain -> { // below okretry: one count per attempt, on the call's own counter
                    AtomicInteger attempts = chain.request().tag(AtomicInteger.class);
                    if (attempts != null) attempts.incrementAndGet();
                    return chain.proceed(chain.request());
                  })
              .build();
      List<OkHttpClient> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        RetryInterceptor retry =
            RetryInterceptor.create(RetryPolicy.builder().retryBudget(budget.get()).build());
        OkHttpClient.Builder b = base.newBuilder();
        b.interceptors().add(0, retry); // above the counter
        clients.add(b.build());
      }
      ScheduledExecutorService ticks = Executors.newScheduledThreadPool(2);
      ExecutorService callers = Executors.newFixedThreadPool(400); // a call may wait 1.4 s in all
      List<Future<Integer>> failing = java.util.Collections.synchronizedList(new ArrayList<>());
      List<Future<Integer>> all = java.util.Collections.synchronizedList(new ArrayList<>());
      SplittableRandom phases = new SplittableRandom(1);
      start[0] = System.nanoTime();
      try {
        for (OkHttpClient client : clients) {
          long phase = phases.nextLong(PERIOD_MILLIS);
          ticks.scheduleAtFixedRate(
              () -> {
                long elapsed = System.nanoTime() - start[0];
                if (elapsed >= TimeUnit.MILLISECONDS.toNanos(runMillis)) return;
                Future<Integer> f =
                    callers.submit(
                        () -> {
                          AtomicInteger attempts = new AtomicInteger();
                          Request request =
                              new Request.Builder()
                                  .url(server.url("/"))
                                  .tag(AtomicInteger.class, attempts)
                                  .build();
                          try (Response r = client.newCall(request).execute()) {
                            if (RetryOutcome.of(r) == null
                                || RetryOutcome.of(r).giveUpReason() == null) {
                              r.body().string(); // a skipped call's 503 kept no body to read
                            }
                          }
                          return attempts.get();
                        });
                all.add(f);
                if (elapsed >= TimeUnit.MILLISECONDS.toNanos(healthyMillis)) failing.add(f);
              },
              phase,
              PERIOD_MILLIS,
              TimeUnit.MILLISECONDS);
        }
        Thread.sleep(runMillis + 200);
        ticks.shutdownNow();
        ticks.awaitTermination(5, TimeUnit.SECONDS);
        for (Future<Integer> f : snapshot(all)) f.get(30, TimeUnit.SECONDS);
        int requests = 0;
        List<Future<Integer>> counted = snapshot(failing);
        for (Future<Integer> f : counted) requests += f.get();
        return new Run(counted.size(), requests);
      } finally {
        ticks.shutdownNow();
        callers.shutdownNow();
        base.dispatcher().executorService().shutdown();
        base.connectionPool().evictAll();
      }
    }
  }

  private static List<Future<Integer>> snapshot(List<Future<Integer>> list) {
    synchronized (list) {
      return new ArrayList<>(list);
    }
  }

  @Test
  void aQuietFleetSendsOneCallsRetriesPerProcessAndTheStrictRuleNone() throws Exception {
    Run fresh = fleet(() -> RetryBudget.builder().build(), 0, 20_000);
    Run strict =
        fleet(() -> RetryBudget.builder().retryBeforeFirstSuccess(false).build(), 0, 20_000);
    Run warm = fleet(() -> RetryBudget.builder().build(), 8_000, 28_000);
    if (Boolean.getBoolean("okretry.printTables")) {
      System.out.printf(
          "real server, %d clients x one GET per 2 s; requests per call over the calls made while"
              + " it fails:%n",
          CLIENTS);
      System.out.printf(
          "  fresh, dead for 20 s, default:                  %d calls, %d requests: %.2fx%n",
          fresh.calls(), fresh.requests(), fresh.perCall());
      System.out.printf(
          "  fresh, dead for 20 s, retryBeforeFirstSuccess(false): %d calls, %d requests: %.2fx%n",
          strict.calls(), strict.requests(), strict.perCall());
      System.out.printf(
          "  warm, 200 for 8 s then 503 for 20 s, default:  %d calls, %d requests: %.2fx%n",
          warm.calls(), warm.requests(), warm.perCall());
    }
    // 10 calls per process while it fails, the first with its 3 retries: 1.30x, the least a
    // process that retries its first failing call can send (docs/fleet.md).
    assertThat(fresh.calls()).isBetween(1_900, 2_100);
    assertThat(fresh.perCall()).isBetween(1.25, 1.35);
    assertThat(strict.calls()).isBetween(1_900, 2_100);
    assertThat(strict.perCall()).isEqualTo(1.0);
    assertThat(warm.calls()).isBetween(1_900, 2_100);
    assertThat(warm.perCall()).isBetween(1.25, 1.35);
  }
}
