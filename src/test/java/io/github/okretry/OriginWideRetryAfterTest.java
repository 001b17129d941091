package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A Retry-After from one call holds back every call to that origin through the interceptor. */
@Tag("integration")
class OriginWideRetryAfterTest {

  @Test
  void afterTheFirst429NoRequestReachesTheServerBeforeTheRetryAfterTime() throws Exception {
    ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();
    AtomicBoolean first = new AtomicBoolean(true);
    long[] rejectedAt = new long[1];
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              long now = System.nanoTime();
              if (first.getAndSet(false)) {
                rejectedAt[0] = now;
                return new MockResponse.Builder().code(429).addHeader("Retry-After", "1").build();
              }
              arrivals.add(now);
              return new MockResponse.Builder().body("ok").build();
            }
          });
      server.start();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .originWideRetryAfter(true)
                  .deadline(Duration.ofSeconds(10))
                  .build());
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(retry).build();
      client.dispatcher().setMaxRequestsPerHost(64);
      client.dispatcher().setMaxRequests(64);

      ExecutorService pool = Executors.newFixedThreadPool(50);
      List<Future<Integer>> results = new ArrayList<>();
      try {
        // The first caller meets the 429; the other 49 start while the origin is closed.
        results.add(pool.submit(() -> call(client, server)));
        while (rejectedAt[0] == 0) Thread.sleep(1);
        Thread.sleep(20);
        CountDownLatch go = new CountDownLatch(1);
        for (int i = 0; i < 49; i++) {
          results.add(
              pool.submit(
                  () -> {
                    go.await();
                    return call(client, server);
                  }));
        }
        go.countDown();
        for (Future<Integer> f : results) assertThat(f.get(20, TimeUnit.SECONDS)).isEqualTo(200);
      } finally {
        pool.shutdownNow();
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
      long earliestMs =
          arrivals.stream().mapToLong(t -> (t - rejectedAt[0]) / 1_000_000).min().orElseThrow();
      long latestMs =
          arrivals.stream().mapToLong(t -> (t - rejectedAt[0]) / 1_000_000).max().orElseThrow();
      Diagnostics.printf(
          "50 callers, Retry-After: 1 on the first: %d later requests arrived %d..%d ms after the"
              + " 429%n",
          arrivals.size(), earliestMs, latestMs);
      assertThat(arrivals).hasSize(50);
      assertThat(earliestMs).isGreaterThanOrEqualTo(1_000);
      assertThat(latestMs)
          .as("spread upward by at most half")
          .isLessThan(1_500 + 1_000 /* slow machine */);
    }
  }

  @Test
  void afterARedirectTheOriginThatAnsweredIsClosedNotTheOneFirstAsked() throws Exception {
    try (MockWebServer a = new MockWebServer();
        MockWebServer b = new MockWebServer()) {
      startRedirectToThrottled(a, b);
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .originWideRetryAfter(true)
                  .deadline(Duration.ofSeconds(5))
                  .build());
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(retry).build();
      try {
        // A → 302 → B → 503 Retry-After: 30, which does not fit 5 s: returned at once.
        try (Response r =
            client.newCall(new Request.Builder().url(a.url("/start")).build()).execute()) {
          assertThat(r.code()).isEqualTo(503);
          assertThat(r.request().url().port()).isEqualTo(b.getPort());
        }
        // A did not ask anyone to wait: the next call reaches it.
        try (Response r =
            client.newCall(new Request.Builder().url(a.url("/again")).build()).execute()) {
          assertThat(r.code()).isEqualTo(200);
          assertThat(r.body().string()).isEqualTo("a is fine");
        }
        assertThat(a.getRequestCount()).isEqualTo(2);
        // B did: a call to it gets the local 503 and B sees nothing more.
        try (Response r =
            client.newCall(new Request.Builder().url(b.url("/direct")).build()).execute()) {
          assertThat(r.code()).isEqualTo(503);
          assertThat(r.message()).contains("okretry");
        }
        assertThat(b.getRequestCount()).isEqualTo(1);
      } finally {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }

  /**
   * A answers its first call with 302 to B, its second with 200 "a is fine"; B answers 503
   * Retry-After: 30. Shared with the async twin in DriverParityTest.
   */
  static void startRedirectToThrottled(MockWebServer a, MockWebServer b) throws IOException {
    b.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build());
    b.start();
    a.enqueue(new MockResponse.Builder().code(302).addHeader("Location", b.url("/moved")).build());
    a.enqueue(new MockResponse.Builder().body("a is fine").build());
    a.start();
  }

  static int call(OkHttpClient client, MockWebServer server) throws Exception {
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/any/path")).build()).execute()) {
      return r.code();
    }
  }

  @Test
  void aCallThatCannotWaitGetsTheStoredStatusAtOnceWithoutARequest() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build());
      server.start();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .originWideRetryAfter(true)
                  .deadline(Duration.ofSeconds(5))
                  .build());
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(retry).build();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/a")).build()).execute()) {
        assertThat(r.code()).isEqualTo(503); // 30 s does not fit 5 s: returned at once
      }
      long start = System.nanoTime();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/b")).build()).execute()) {
        assertThat(r.code()).isEqualTo(503);
        assertThat(Long.parseLong(r.header("Retry-After"))).isBetween(25L, 30L);
        assertThat(r.message()).contains("okretry");
      }
      assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(500);
      assertThat(server.getRequestCount()).isEqualTo(1);
      // Another origin is not affected.
      try (MockWebServer other = new MockWebServer()) {
        other.enqueue(new MockResponse.Builder().body("fine").build());
        other.start();
        try (Response r =
            client.newCall(new Request.Builder().url(other.url("/")).build()).execute()) {
          assertThat(r.code()).isEqualTo(200);
        }
      }
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  /**
   * The gate on fake time, through the interceptor and a {@link Script}: exact waits, no sockets.
   */
  @Nested
  class OnFakeTime extends ScriptedTest {
    @Test
    void aCallWhoseTimeLeftIsExactlyTheOriginsWaitGetsTheLocalResponseAtOnce() throws IOException {
      script.status(503, "Retry-After", "1");
      Call.Factory c = client(retry().originWideRetryAfter(true).deadline(Duration.ofSeconds(1)));
      assertThat(code(c, get()))
          .as("1 s does not fit 1 s: returned, and the origin closed for 1 s")
          .isEqualTo(503);
      try (Response r = c.newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(503);
        assertThat(r.message()).isEqualTo("Throttled locally by okretry: origin asked to wait");
        assertThat(r.header("Retry-After")).isEqualTo("1");
      }
      assertThat(script.attempts()).as("nothing sent").isEqualTo(1);
      assertThat(time.sleeps()).isEmpty();
      assertThat(events.lines("gaveUp"))
          .containsExactly(
              "gaveUp 1 DEADLINE_EXCEEDED HTTP 503", "gaveUp 0 ORIGIN_THROTTLED HTTP 503 (origin)");
    }

    @Test
    void theLocalRetryAfterIsTheWaitLeftRoundedUpToWholeSeconds() throws IOException {
      script.status(429, "Retry-After", "3");
      Call.Factory c = client(retry().originWideRetryAfter(true).deadline(Duration.ofSeconds(1)));
      assertThat(code(c, get()))
          .as("3 s does not fit 1 s: returned, and the origin closed for 3 s")
          .isEqualTo(429);
      time.advance(Duration.ofMillis(1_500));
      try (Response r = c.newCall(get()).execute()) {
        assertThat(r.code()).as("the stored status").isEqualTo(429);
        assertThat(r.header("Retry-After")).as("1.5 s left, rounded up").isEqualTo("2");
        assertThat(r.body().string()).isEmpty();
      }
      assertThat(script.attempts()).isEqualTo(1);
    }

    /** Even a call that would make its first attempt without per-call state consults the gate. */
    @Test
    void aCallWithNoDeadlineAndNoListenerStillWaitsForAClosedOrigin() throws IOException {
      script.status(503, "Retry-After", "99999999").status(200);
      Call.Factory c =
          client(quietRetry().originWideRetryAfter(true).maxRetryAfter(Duration.ofSeconds(2)));
      assertThat(code(c, get())).isEqualTo(503);
      assertThat(code(c, get())).isEqualTo(200);
      assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(2));
    }
  }
}
