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
 * Issue 35's blips on a real server, in real time (seconds each, so soak): a busy client with
 * every default through a blip of 503s, beside the same client with {@code
 * RetryBudget.unlimited()}, on both drivers. Closed loop: {@code threads} calling back to back
 * for 2.5 s, every request answered 503 from 0.5 s to 0.5 s + {@code blipMillis}; open loop:
 * 100 calls/s for 3 s, 503s from 1 s for {@code blipMillis}. The calls failed are printed:
 *
 * <pre>mvn -B test -Dokretry.excludedGroups= -Dgroups=soak -Dtest=BlipRealServerTest -Dokretry.printTables=true</pre>
 */
@Tag("soak")
class BlipRealServerTest {

  record Run(int calls, int failed, int requests) {}

  static Run run(boolean factory, boolean unlimited, int threads, long blipMillis, boolean openLoop) throws Exception {
    OkHttpClient base = new OkHttpClient.Builder().build();
    base.dispatcher().setMaxRequestsPerHost(256);
    base.dispatcher().setMaxRequests(256);
    try (MockWebServer server = new MockWebServer()) {
      long startNanos = System.nanoTime();
      long blipFrom = TimeUnit.MILLISECONDS.toNanos(openLoop ? 1_000 : 500);
      long blipUntil = blipFrom + TimeUnit.MILLISECONDS.toNanos(blipMillis);
      server.setDispatcher(new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          long t = System.nanoTime() - startNanos;
          return t >= blipFrom && t < blipUntil ? new MockResponse.Builder().code(503).build()
              : new MockResponse.Builder().code(200).body("ok").build();
        }
      });
      server.start();
      RetryPolicy.Builder b = RetryPolicy.builder();
      if (unlimited) b.retryBudget(RetryBudget.unlimited());
      RetryPolicy policy = b.build();
      Call.Factory client = factory ? RetryingCallFactory.create(base, policy) : RetryInterceptor.create(policy).install(base.newBuilder()).build();
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
            clock.schedule(() -> client.newCall(request).enqueue(l), i * 10L, TimeUnit.MILLISECONDS);
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
          loops.add(pool.submit(() -> {
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
      return new Run(calls.get(), failed.get(), server.getRequestCount());
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
  @CsvSource({"false, 8, 500, false", "true, 8, 500, false", "false, 2, 500, false", "true, 2, 500, false",
      "false, 0, 1000, true", "true, 0, 1000, true"})
  void aBusyClientLosesNoMoreCallsToABlipThanOneWithoutABudget(boolean factory, int threads, long blipMillis, boolean openLoop)
      throws Exception {
    Run okretry = run(factory, false, threads, blipMillis, openLoop);
    Run unlimited = run(factory, true, threads, blipMillis, openLoop);
    Diagnostics.printf("blip %d ms, %s, %s: default %d of %d calls failed (%d requests); unlimited %d of %d (%d requests)%n", blipMillis,
        openLoop ? "open loop 100/s" : threads + " threads back to back", factory ? "factory" : "interceptor", okretry.failed(),
        okretry.calls(), okretry.requests(), unlimited.failed(), unlimited.calls(), unlimited.requests());
    // Real time on a shared machine: each side's luck in its jitter draws varies by a few calls.
    assertThat(okretry.failed()).isLessThanOrEqualTo(unlimited.failed() + 2 + okretry.calls() / 200);
  }
}
