package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Honoring {@code Retry-After: 1} to the millisecond brings every rejected caller back at the same
 * instant, and a rate limiter rejects them all again; spreading the wait upward lets them through.
 * The comparison with exact honoring is a soak ({@link SoakTest}).
 */
@Tag("integration")
class SpreadRetryAfterTest {

  /**
   * A token bucket allowing {@code perSecond} requests per second with bursts of as many. Like many
   * real limiters it charges rejected requests too (down to one second of debt), so callers that
   * come back in lockstep find the bucket empty again and again.
   */
  static final class RateLimiter extends Dispatcher {
    private final int perSecond;
    private double tokens;
    private long refilledAt = System.nanoTime();
    final AtomicInteger requests = new AtomicInteger();

    RateLimiter(int perSecond) {
      this.perSecond = perSecond;
      this.tokens = perSecond;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      requests.incrementAndGet();
      boolean allowed;
      synchronized (this) {
        long now = System.nanoTime();
        tokens = Math.min(perSecond, tokens + (now - refilledAt) * perSecond / 1e9);
        refilledAt = now;
        allowed = tokens >= 1;
        tokens = Math.max(-perSecond, tokens - 1);
      }
      if (!allowed) {
        return new MockResponse.Builder().code(429).addHeader("Retry-After", "1").build();
      }
      return new MockResponse.Builder().body("ok").build();
    }
  }

  record Result(int succeeded, int callers, double attemptsPerCaller, long elapsedMs) {}

  static Result run(double spread, long seed) throws Exception {
    RateLimiter limiter = new RateLimiter(20);
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(limiter);
      server.start();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .retryAfterSpread(spread)
                  .maxRetries(100)
                  .deadline(Duration.ofSeconds(20))
                  .retryBudget(RetryBudget.unlimited()) // measure the spread alone
                  .random(new java.util.SplittableRandom(seed)::nextLong)
                  .build());
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(retry).build();
      client.dispatcher().setMaxRequestsPerHost(64);
      ExecutorService pool = Executors.newFixedThreadPool(40);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> results = new ArrayList<>();
      long start = System.nanoTime();
      try {
        for (int i = 0; i < 40; i++) {
          results.add(
              pool.submit(
                  () -> {
                    go.await();
                    try (Response r =
                        client
                            .newCall(new Request.Builder().url(server.url("/")).build())
                            .execute()) {
                      return r.code();
                    }
                  }));
        }
        go.countDown();
        int ok = 0;
        for (Future<Integer> f : results) {
          if (f.get(30, TimeUnit.SECONDS) == 200) {
            ok++;
          }
        }
        return new Result(
            ok, 40, limiter.requests.get() / 40.0, (System.nanoTime() - start) / 1_000_000);
      } finally {
        pool.shutdownNow();
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }

  @Test
  void spreadRetryAfterLetsFortyCallersThroughATwentyPerSecondLimiter() throws Exception {
    Result spread = run(0.5, 7);
    Diagnostics.printf(
        "Retry-After spread 0.5 (default): %d/%d callers got 200 in %d ms, %.2f attempts per"
            + " caller%n",
        spread.succeeded(), spread.callers(), spread.elapsedMs(), spread.attemptsPerCaller());
    assertThat(spread.succeeded()).isEqualTo(40);
    assertThat(spread.attemptsPerCaller()).isLessThanOrEqualTo(4.0);
    assertThat(spread.elapsedMs()).isLessThan(15_000);
  }
}
