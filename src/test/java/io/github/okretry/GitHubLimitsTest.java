package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 30 items 6 and 7 in real time, on both drivers: 30 calls at once through one client to a
 * MockWebServer that limits as GitHub does ({@link GitHubLimiter}), with the policy GitHub's docs
 * ask for (retry a 403 that carries {@code Retry-After} or {@code X-RateLimit-Remaining: 0}) and
 * {@code maxRetryAfter(10 s)}. The same runs on fake time, exact: {@link GitHubCrowdTest}. The
 * bands allow for a loaded 2-core machine; {@code -Dokretry.printTables=true} prints the numbers. A
 * soak (about 40 s): {@code mvn -B test -Dokretry.excludedGroups= -Dgroups=soak
 * -Dtest=GitHubLimitsTest}.
 */
@Tag("soak")
@ParameterizedClass
@EnumSource(GitHubLimitsTest.Via.class)
class GitHubLimitsTest {

  /** How the 30 calls are made. */
  enum Via {
    /** {@link RetryInterceptor}: 30 threads, each {@code execute()}. */
    INTERCEPTOR,
    /** {@link RetryingCallFactory}: 30 {@code enqueue()}. */
    FACTORY
  }

  final Via via;

  GitHubLimitsTest(Via via) {
    this.via = via;
  }

  /**
   * 10 requests per window per bucket ({@code /search/…} is {@code search}, the rest {@code core}),
   * the window starting at its first request as GitHub's hour does; every answer carries {@code
   * X-RateLimit-Limit/Remaining/Used/Reset} (the reset in epoch seconds, rounded up), {@code
   * X-RateLimit-Resource} and {@code Date}; a request over the limit gets a 403 without {@code
   * Retry-After}. With {@code ietfPartition} it publishes a per-user IETF quota ({@code pk})
   * instead and refuses with a 429, still without {@code Retry-After}.
   */
  static final class GitHubLimiter extends Dispatcher {
    final long windowMillis;
    final boolean ietfPartition;
    final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger refused = new AtomicInteger();
    final ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
    // bucket -> {start millis, used}; guarded by this
    private final Map<String, long[]> windows = new HashMap<>();
    private final long start = System.currentTimeMillis();

    GitHubLimiter(long windowMillis, boolean ietfPartition) {
      this.windowMillis = windowMillis;
      this.ietfPartition = ietfPartition;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      requests.incrementAndGet();
      String bucket = request.getUrl().encodedPath().startsWith("/search/") ? "search" : "core";
      long now = System.currentTimeMillis();
      boolean admitted;
      long used;
      long end;
      synchronized (this) {
        long[] w = windows.computeIfAbsent(bucket, b -> new long[] {now, 0});
        if (now - w[0] >= windowMillis) {
          w[0] = now;
          w[1] = 0;
        }
        admitted = w[1] < 10;
        if (admitted) w[1]++;
        used = w[1];
        end = w[0] + windowMillis;
      }
      log.add((now - start) + bucket.substring(0, 2) + (admitted ? "+" : "-") + (10 - used));
      MockResponse.Builder b =
          new MockResponse.Builder()
              .addHeader(
                  "Date",
                  DateTimeFormatter.RFC_1123_DATE_TIME.format(
                      Instant.ofEpochMilli(now).atZone(ZoneOffset.UTC)));
      if (ietfPartition) {
        long t = (end - now + 999) / 1000; // whole seconds, rounded up
        b.addHeader("RateLimit-Policy", "\"user\";q=10;w=" + windowMillis / 1000 + ";pk=:dXNlcg==:")
            .addHeader("RateLimit", "\"user\";r=" + (10 - used) + ";t=" + t + ";pk=:dXNlcg==:");
        if (admitted) return b.body("ok").build();
        refused.incrementAndGet();
        return b.code(429).build();
      }
      b.addHeader("X-RateLimit-Limit", 10)
          .addHeader("X-RateLimit-Remaining", 10 - used)
          .addHeader("X-RateLimit-Used", used)
          .addHeader("X-RateLimit-Reset", (end + 999) / 1000)
          .addHeader("X-RateLimit-Resource", bucket);
      if (admitted) return b.body("ok").build();
      refused.incrementAndGet();
      return b.code(403).body("{\"message\":\"API rate limit exceeded\"}").build();
    }
  }

  static RetryPolicy policy(QuotaPacing pacing) {
    return RetryPolicy.builder()
        .retryOnResponse(
            r ->
                r.code() == 403
                    && (r.header("Retry-After") != null
                        || "0".equals(r.header("X-RateLimit-Remaining"))))
        .maxRetryAfter(Duration.ofSeconds(10))
        .quotaPacing(pacing)
        .build();
  }

  record Run(int ok, int requests, int refused, long makespanMs) {}

  /** One call per path, all at once through {@link #via}. */
  Run crowd(GitHubLimiter limiter, QuotaPacing pacing, List<String> paths) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(limiter);
      server.start();
      RetryPolicy policy = policy(pacing);
      OkHttpClient client = new OkHttpClient.Builder().build();
      client
          .dispatcher()
          .setMaxRequestsPerHost(64); // "at once": OkHttp's 5 per host would queue them
      client.dispatcher().setMaxRequests(128);
      AtomicInteger ok = new AtomicInteger();
      CountDownLatch done = new CountDownLatch(paths.size());
      long start;
      RetryingCallFactory factory = null;
      ExecutorService pool = null;
      try {
        if (via == Via.FACTORY) {
          factory = RetryingCallFactory.create(client, policy);
          start = System.nanoTime();
          for (String path : paths) {
            factory
                .newCall(new Request.Builder().url(server.url(path)).build())
                .enqueue(
                    new Callback() {
                      @Override
                      public void onResponse(Call call, Response response) {
                        if (response.code() == 200) ok.incrementAndGet();
                        response.close();
                        done.countDown();
                      }

                      @Override
                      public void onFailure(Call call, IOException e) {
                        done.countDown();
                      }
                    });
          }
        } else {
          OkHttpClient intercepted =
              RetryInterceptor.create(policy).install(client.newBuilder()).build();
          pool = Executors.newFixedThreadPool(paths.size());
          CountDownLatch go = new CountDownLatch(1);
          for (String path : paths) {
            pool.submit(
                () -> {
                  go.await();
                  try (Response r =
                      intercepted
                          .newCall(new Request.Builder().url(server.url(path)).build())
                          .execute()) {
                    if (r.code() == 200) ok.incrementAndGet();
                  } finally {
                    done.countDown();
                  }
                  return null;
                });
          }
          Thread.sleep(100); // every thread parked at the latch
          start = System.nanoTime();
          go.countDown();
        }
        assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
        long makespanMs = (System.nanoTime() - start) / 1_000_000;
        Run run = new Run(ok.get(), limiter.requests.get(), limiter.refused.get(), makespanMs);
        CrowdTest.print(
            "%s %s: %d/%d through, %d requests (%d refused), %d ms",
            via, pacing, run.ok(), paths.size(), run.requests(), run.refused(), run.makespanMs());
        CrowdTest.print("  %s", limiter.log);
        return run;
      } finally {
        if (factory != null) factory.close();
        if (pool != null) pool.shutdownNow();
        CrowdTest.shutdown(client);
      }
    }
  }

  static List<String> issues(int n) {
    return java.util.stream.IntStream.range(0, n).mapToObj(i -> "/issues/" + i).toList();
  }

  @Test
  void probingTheCoreBucketOnThirtyPathsSendsAboutOneRequestPerCall() throws Exception {
    Run run = crowd(new GitHubLimiter(2_000, false), QuotaPacing.PROBE, issues(30));
    // Before: 10 of 30 through, 50 to 62 requests, the rest ending with a 403 within a second.
    assertThat(run.ok()).isEqualTo(30);
    assertThat(run.requests()).isLessThanOrEqualTo(33);
    assertThat(run.makespanMs()).isLessThan(15_000);
  }

  @Test
  void byDefaultTheCoreBucketOnThirtyPathsIsRefusedOnlyForCallsSentBeforeTheFirstAnswer()
      throws Exception {
    // Issue 36 item 4: without a probe, the calls that leave before the first answer are refused
    // beyond the 10 it admits; the quota it publishes then holds the rest, counting those already
    // in flight (before, the rest went on top: 32 to 46 requests). 50 if all leave before it.
    Run run = crowd(new GitHubLimiter(2_000, false), QuotaPacing.PUBLISHED, issues(30));
    assertThat(run.ok()).isEqualTo(30);
    assertThat(run.requests()).isLessThanOrEqualTo(50);
    assertThat(run.makespanMs()).isLessThan(15_000);
  }

  @Test
  void aRetryThatNoPacerHoldsWaitsForTheResetItself() throws Exception {
    // A per-user quota okretry keys to each path (pk) and a 429 without Retry-After: only the
    // refusal's own reset holds its retry. Before: on the backoff, refused again, 10 of 30 through.
    Run run = crowd(new GitHubLimiter(1_000, true), QuotaPacing.PUBLISHED, issues(30));
    assertThat(run.ok()).isEqualTo(30);
    // 30 at once (20 refused), 20 retries at the reset (10 refused), 10 at the next: 60.
    assertThat(run.requests()).isLessThanOrEqualTo(70);
    assertThat(run.makespanMs()).isLessThan(15_000);
  }

  @Test
  void coreAndSearchBucketsOnOneOriginArePacedApart() throws Exception {
    List<String> paths = new java.util.ArrayList<>(issues(20));
    for (int i = 0; i < 10; i++) paths.add(i % 2 == 0 ? "/search/issues" : "/search/code");
    java.util.Collections.shuffle(paths, new java.util.Random(1));
    Run run = crowd(new GitHubLimiter(2_000, false), QuotaPacing.PROBE, paths);
    assertThat(run.ok()).isEqualTo(30);
    assertThat(run.requests()).isLessThanOrEqualTo(36);
    assertThat(run.makespanMs()).isLessThan(15_000);
  }
}
