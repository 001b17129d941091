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
 * Issue 20's quiet fleet against a real server, in real time: 200 client instances in one JVM
 * (each its own {@link RetryInterceptor} with every default, as 200 processes would have; their
 * OkHttp clients share one connection pool and dispatcher), each making one GET every 2 s (random
 * phase) for 20 s, against a MockWebServer answering 503 to everything without {@code
 * Retry-After}. Server requests per logical call, with the default budget and with the budget
 * before issue 20 ({@code failureStreak(0)}). About 45 s:
 * {@code mvn -B test -Dokretry.excludedGroups= -Dgroups=soak -Dtest=QuietFleetRealServerTest -Dokretry.printTables=true}.
 */
@Tag("soak")
class QuietFleetRealServerTest {

  static final int CLIENTS = 200;
  static final long PERIOD_MILLIS = 2_000;
  static final long RUN_MILLIS = 20_000;

  record Run(int calls, int requests) {
    double perCall() {
      return requests / (double) calls;
    }
  }

  static Run fleet(boolean evidenceRule) throws Exception {
    AtomicInteger requests = new AtomicInteger();
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          requests.incrementAndGet();
          return new MockResponse.Builder().code(503).body("down").build();
        }
      });
      server.start();
      OkHttpClient base = new OkHttpClient.Builder().connectionPool(new ConnectionPool(50, 1, TimeUnit.MINUTES)).build();
      List<OkHttpClient> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        RetryPolicy.Builder policy = RetryPolicy.builder();
        if (!evidenceRule) policy.retryBudget(RetryBudget.builder().failureStreak(0).build());
        clients.add(base.newBuilder().addInterceptor(RetryInterceptor.create(policy.build())).build());
      }
      ScheduledExecutorService ticks = Executors.newScheduledThreadPool(2);
      ExecutorService callers = Executors.newFixedThreadPool(400); // a call may wait 1.4 s in all
      List<Future<?>> calls = java.util.Collections.synchronizedList(new ArrayList<>());
      SplittableRandom phases = new SplittableRandom(1);
      long start = System.nanoTime();
      try {
        for (OkHttpClient client : clients) {
          long phase = phases.nextLong(PERIOD_MILLIS);
          ticks.scheduleAtFixedRate(() -> {
            if (System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS)) return;
            calls.add(callers.submit(() -> {
              try (Response r = client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
                assertThat(r.code()).isEqualTo(503);
              }
              return null;
            }));
          }, phase, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        }
        Thread.sleep(RUN_MILLIS + 200);
        ticks.shutdownNow();
        ticks.awaitTermination(5, TimeUnit.SECONDS);
        List<Future<?>> all;
        synchronized (calls) {
          all = new ArrayList<>(calls);
        }
        for (Future<?> f : all) f.get(30, TimeUnit.SECONDS);
        return new Run(all.size(), requests.get());
      } finally {
        ticks.shutdownNow();
        callers.shutdownNow();
        base.dispatcher().executorService().shutdown();
        base.connectionPool().evictAll();
      }
    }
  }

  @Test
  void aQuietFleetOfDefaultClientsLeavesADeadServerAlone() throws Exception {
    Run before = fleet(false);
    Run after = fleet(true);
    if (Boolean.getBoolean("okretry.printTables")) {
      System.out.printf("real server, %d clients x one GET per 2 s for 20 s, 503 to everything:%n", CLIENTS);
      System.out.printf("  failureStreak(0) (before): %d calls, %d requests: %.2fx%n", before.calls(), before.requests(), before.perCall());
      System.out.printf("  default:                   %d calls, %d requests: %.2fx%n", after.calls(), after.requests(), after.perCall());
    }
    assertThat(before.calls()).isBetween(1_900, 2_100);
    assertThat(before.perCall()).as("every call retried 3 times").isGreaterThan(3.9);
    assertThat(after.calls()).isBetween(1_900, 2_100);
    assertThat(after.perCall()).as("issue 20's target").isLessThanOrEqualTo(1.2);
  }
}
