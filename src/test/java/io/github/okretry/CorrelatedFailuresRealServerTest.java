package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 35 on a real server, in real time (seconds each, so soak). Blips: a busy client with every
 * default through a blip of 503s, beside the same client with {@code RetryBudget.unlimited()}, on
 * both drivers. Closed loop: {@code threads} calling back to back for 2.5 s, every request answered
 * 503 from 0.5 s to 0.5 s + {@code blipMillis}; open loop: 100 calls/s for 3 s, 503s from 1 s for
 * {@code blipMillis}. A server's pacing on another status: a burst of 30 against GitHub's secondary
 * limit (a 403 with {@code Retry-After}). A crowd of 30 against 429s whose published quota resets
 * in 0 s. The figures are printed:
 *
 * <pre>
 * mvn -B test -Dokretry.excludedGroups= -Dgroups=soak -Dtest=CorrelatedFailuresRealServerTest -Dokretry.printTables=true
 * </pre>
 */
@Tag("soak")
class CorrelatedFailuresRealServerTest {

  /**
   * What ran: calls, calls that failed, requests the server saw, and why the calls that failed gave
   * up.
   */
  record Run(int calls, int failed, int requests, java.util.Map<GiveUpReason, Integer> gaveUp) {}

  static Run run(boolean factory, boolean unlimited, int threads, long blipMillis, boolean openLoop)
      throws Exception {
    OkHttpClient base = new OkHttpClient.Builder().build();
    base.dispatcher().setMaxRequestsPerHost(256);
    base.dispatcher().setMaxRequests(256);
    try (MockWebServer server = new MockWebServer()) {
      long startNanos = System.nanoTime();
      long blipFrom = TimeUnit.MILLISECONDS.toNanos(openLoop ? 1_000 : 500);
      long blipUntil = blipFrom + TimeUnit.MILLISECONDS.toNanos(blipMillis);
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              long t = System.nanoTime() - startNanos;
              return t >= blipFrom && t < blipUntil
                  ? new MockResponse.Builder().code(503).build()
                  : new MockResponse.Builder().code(200).body("ok").build();
            }
          });
      server.start();
      java.util.Map<GiveUpReason, Integer> gaveUp =
          new java.util.concurrent.ConcurrentSkipListMap<>();
      RetryPolicy.Builder b =
          RetryPolicy.builder()
              .listener(
                  new RetryListener() {
                    @Override
                    public void onGaveUp(
                        Request request, int attempts, GiveUpReason reason, String lastFailure) {
                      gaveUp.merge(reason, 1, Integer::sum);
                    }
                  });
      if (unlimited) b.retryBudget(RetryBudget.unlimited());
      RetryPolicy policy = b.build();
      Call.Factory client =
          factory
              ? RetryingCallFactory.create(base, policy)
              : RetryInterceptor.create(policy).install(base.newBuilder()).build();
      AtomicInteger calls = new AtomicInteger();
      AtomicInteger failed = new AtomicInteger();
      Request request = new Request.Builder().url(server.url("/")).build();
      if (openLoop) {
        List<CallbackLatch> pending = new ArrayList<>();
        ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
        try {
          for (int i = 0; i < 300; i++) {
            CallbackLatch l = new CallbackLatch(failed);
            pending.add(l);
            clock.schedule(
                () -> client.newCall(request).enqueue(l), i * 10L, TimeUnit.MILLISECONDS);
          }
          for (CallbackLatch l : pending) l.await();
        } finally {
          clock.shutdownNow();
        }
        calls.set(300);
      } else {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long endNanos = startNanos + TimeUnit.MILLISECONDS.toNanos(2_500);
        List<Future<?>> loops = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          loops.add(
              pool.submit(
                  () -> {
                    while (System.nanoTime() < endNanos) {
                      calls.incrementAndGet();
                      try (Response r = client.newCall(request).execute()) {
                        r.body().string();
                        if (r.code() != 200) failed.incrementAndGet();
                      } catch (IOException e) {
                        failed.incrementAndGet();
                      }
                    }
                    return null;
                  }));
        }
        for (Future<?> f : loops) f.get(30, TimeUnit.SECONDS);
        pool.shutdownNow();
      }
      if (client instanceof RetryingCallFactory f) f.close();
      return new Run(calls.get(), failed.get(), server.getRequestCount(), gaveUp);
    } finally {
      base.dispatcher().executorService().shutdown();
      base.connectionPool().evictAll();
    }
  }

  /** A callback that counts a failure and lets the test wait for it. */
  static final class CallbackLatch implements Callback {
    final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    final AtomicInteger failed;

    CallbackLatch(AtomicInteger failed) {
      this.failed = failed;
    }

    @Override
    public void onFailure(Call call, IOException e) {
      failed.incrementAndGet();
      done.countDown();
    }

    @Override
    public void onResponse(Call call, Response response) {
      try (response) {
        if (response.code() != 200) failed.incrementAndGet();
      }
      done.countDown();
    }

    void await() throws InterruptedException {
      done.await(30, TimeUnit.SECONDS);
    }
  }

  @ParameterizedTest(name = "factory: {0}, {1} threads, {2} ms, open loop: {3}")
  @CsvSource({
    "false, 8, 500, false",
    "true, 8, 500, false",
    "false, 2, 500, false",
    "true, 2, 500, false",
    "false, 0, 1000, true",
    "true, 0, 1000, true"
  })
  void aBusyClientLosesNoMoreCallsToABlipThanOneWithoutABudget(
      boolean factory, int threads, long blipMillis, boolean openLoop) throws Exception {
    Run okretry = run(factory, false, threads, blipMillis, openLoop);
    Run unlimited = run(factory, true, threads, blipMillis, openLoop);
    Diagnostics.printf(
        "blip %d ms, %s, %s: default %d of %d calls failed (%d requests, %s); unlimited %d of %d"
            + " (%d requests, %s)%n",
        blipMillis,
        openLoop ? "open loop 100/s" : threads + " threads back to back",
        factory ? "factory" : "interceptor",
        okretry.failed(),
        okretry.calls(),
        okretry.requests(),
        okretry.gaveUp(),
        unlimited.failed(),
        unlimited.calls(),
        unlimited.requests(),
        unlimited.gaveUp());
    // Real time on a shared machine: each side's luck in its jitter draws varies by a few calls
    // (the open loop's unbudgeted runs lost 27 to 37 of 300); the means over runs are in
    // docs/fleet.md.
    assertThat(okretry.failed()).isLessThanOrEqualTo(unlimited.failed() + 2 + okretry.calls() / 50);
  }

  /**
   * {@code n} calls of {@code url} at once, by {@code execute()} on threads or by {@code
   * enqueue()}: how many came back 200.
   */
  static int burst(Call.Factory client, okhttp3.HttpUrl url, int n, boolean enqueue)
      throws Exception {
    AtomicInteger failed = new AtomicInteger();
    Request request = new Request.Builder().url(url).build();
    if (enqueue) {
      List<CallbackLatch> latches = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        CallbackLatch l = new CallbackLatch(failed);
        latches.add(l);
        client.newCall(request).enqueue(l);
      }
      for (CallbackLatch l : latches) l.await();
      return n - failed.get();
    }
    return CorrelatedFailuresIntegrationTest.concurrently(client, url, n);
  }

  static Call.Factory client(OkHttpClient base, boolean factory, RetryPolicy policy) {
    return factory
        ? RetryingCallFactory.create(base, policy)
        : RetryInterceptor.create(policy).install(base.newBuilder()).build();
  }

  @ParameterizedTest(name = "factory: {0}, enqueue: {1}")
  @CsvSource({"false, false", "false, true", "true, false", "true, true"})
  void aBurstAgainstGitHubsSecondaryLimitAllGetsThrough(boolean factory, boolean enqueue)
      throws Exception {
    // 10 requests per second window; past that, 403 with Retry-After: 1, as GitHub's secondary
    // rate limit answers. The user retries 403s, as the guide describes GitHub's.
    OkHttpClient base = new OkHttpClient.Builder().build();
    base.dispatcher().setMaxRequestsPerHost(64);
    try (MockWebServer server = new MockWebServer()) {
      long start = System.nanoTime();
      int[] window = {-1, 0};
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public synchronized MockResponse dispatch(RecordedRequest request) {
              int w = (int) ((System.nanoTime() - start) / 1_000_000_000L);
              if (w != window[0]) {
                window[0] = w;
                window[1] = 0;
              }
              return ++window[1] <= 10
                  ? new MockResponse.Builder().code(200).body("ok").build()
                  : new MockResponse.Builder().code(403).addHeader("Retry-After", "1").build();
            }
          });
      server.start();
      Call.Factory client = client(base, factory, RetryPolicy.builder().retryOnStatus(403).build());
      int ok = burst(client, server.url("/repos/x/issues"), 30, enqueue);
      Diagnostics.printf(
          "30 at once against 403 + Retry-After (10 per second), %s, %s: %d of 30 through, %d"
              + " requests%n",
          factory ? "factory" : "interceptor",
          enqueue ? "enqueue" : "execute",
          ok,
          server.getRequestCount());
      if (client instanceof RetryingCallFactory f) f.close();
      assertThat(ok).as("issue 35: 28 and 23 of 30 before").isEqualTo(30);
    } finally {
      base.dispatcher().executorService().shutdown();
      base.connectionPool().evictAll();
    }
  }

  @ParameterizedTest(name = "factory: {0}, {1}")
  @CsvSource({
    "false, ietf",
    "true, ietf",
    "false, x-ratelimit",
    "true, x-ratelimit",
    "false, github",
    "true, github",
    "false, reset-after",
    "true, reset-after"
  })
  void aCrowdAgainst429sWhoseQuotaResetsInZeroSecondsRetriesWithBackoff(
      boolean factory, String family) throws Exception {
    OkHttpClient base = new OkHttpClient.Builder().build();
    base.dispatcher().setMaxRequestsPerHost(64);
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              MockResponse.Builder b = new MockResponse.Builder().code(429);
              long now = System.currentTimeMillis() / 1000;
              switch (family) {
                case "ietf" ->
                    b.addHeader("RateLimit", "\"default\";r=0;t=0")
                        .addHeader("RateLimit-Policy", "\"default\";q=10;w=1");
                case "x-ratelimit" ->
                    b.addHeader("X-RateLimit-Limit", "10")
                        .addHeader("X-RateLimit-Remaining", "0")
                        .addHeader("X-RateLimit-Reset", "0");
                case "github" ->
                    b.addHeader("X-RateLimit-Limit", "10")
                        .addHeader("X-RateLimit-Remaining", "0")
                        .addHeader("X-RateLimit-Reset", Long.toString(now))
                        .addHeader(
                            "Date",
                            java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
                                java.time.Instant.ofEpochSecond(now)
                                    .atZone(java.time.ZoneOffset.UTC)));
                default ->
                    b.addHeader("X-RateLimit-Limit", "10")
                        .addHeader("X-RateLimit-Remaining", "0")
                        .addHeader("X-RateLimit-Reset-After", "0.000");
              }
              return b.build();
            }
          });
      server.start();
      Call.Factory client = client(base, factory, RetryPolicy.builder().build());
      long startNanos = System.nanoTime();
      burst(client, server.url("/"), 30, false);
      double perCall = server.getRequestCount() / 30.0;
      Diagnostics.printf(
          "30 at once against 429 with a %s reset of 0, %s: %.2f requests per call in %d ms%n",
          family,
          factory ? "factory" : "interceptor",
          perCall,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
      if (client instanceof RetryingCallFactory f) f.close();
      assertThat(perCall).as("issue 35: 4.00 before").isLessThanOrEqualTo(1.2);
    } finally {
      base.dispatcher().executorService().shutdown();
      base.connectionPool().evictAll();
    }
  }
}
