package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Hedges over real sockets, where the point is real cancellation: the slow attempt's OkHttp call
 * is canceled once the hedge answers, its connection is closed rather than left allocated, no
 * hedge timer stays queued on the factory's scheduler, and a cancel at a random moment of a
 * hedged call leaves nothing behind ({@link LeakCheck}). The decisions are tested on fake time
 * ({@link HedgingTest}, {@link HedgingDriverTest}).
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class HedgingIntegrationTest {

  static OkHttpClient client() {
    return LeakCheck.track(new OkHttpClient.Builder().connectionPool(new ConnectionPool()).readTimeout(Duration.ofSeconds(10)).build());
  }

  static RetryPolicy hedging() {
    return RetryPolicy.builder().hedgeAfter(100, TimeUnit.MILLISECONDS).build();
  }

  /** Answers {@code /warm} at once; of the others, the first after {@code slowMillis}, the rest at once. */
  static Dispatcher firstSlow(long slowMillis) {
    AtomicInteger n = new AtomicInteger();
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        if (request.getUrl().encodedPath().equals("/warm")) return new MockResponse.Builder().body("warm").build();
        int i = n.incrementAndGet();
        MockResponse.Builder r = new MockResponse.Builder().body("request " + i);
        if (i == 1) r.headersDelay(slowMillis, TimeUnit.MILLISECONDS);
        return r.build();
      }
    };
  }

  /** One call that the origin answers, so that a fixed delay may hedge it (it never hedges an origin that has not answered). */
  static void warm(Call.Factory calls, MockWebServer server) throws IOException {
    try (Response r = calls.newCall(new Request.Builder().url(server.url("/warm")).build()).execute()) {
      r.body().string();
    }
  }

  @Test
  void theHedgeAnswersTheLoserIsCanceledAndNoConnectionOrTimerIsLeft() throws Exception {
    OkHttpClient client = client();
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls = RetryingCallFactory.create(client, hedging())) {
      server.setDispatcher(firstSlow(3_000));
      server.start();
      warm(calls, server);
      long start = System.nanoTime();
      try (Response response = calls.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(response.body().string()).isEqualTo("request 2");
        assertThat(ms).as("hedged at 100 ms, not the slow 3 s").isBetween(100L, 2_000L);
      }
      assertThat(server.getRequestCount()).isEqualTo(3); // the warm-up, the slow attempt, the hedge
      ScheduledThreadPoolExecutor scheduler = (ScheduledThreadPoolExecutor) calls.scheduler;
      assertThat(scheduler.getQueue()).as("no hedge timer left").isEmpty();
      // The loser's connection was closed by its cancel, not returned to the pool mid-response.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (client.connectionPool().connectionCount() > 1 && System.nanoTime() < until) Thread.sleep(10);
      assertThat(client.connectionPool().connectionCount()).isLessThanOrEqualTo(1);
    }
  }

  @Test
  void theDeadlineHoldsWithAHedgeInFlight() throws Exception {
    OkHttpClient client = client();
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls = RetryingCallFactory.create(client,
            RetryPolicy.builder().hedgeAfter(100, TimeUnit.MILLISECONDS).deadline(300, TimeUnit.MILLISECONDS).build())) {
      server.setDispatcher(new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          if (request.getUrl().encodedPath().equals("/warm")) return new MockResponse.Builder().build();
          return new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build();
        }
      });
      server.start();
      warm(calls, server);
      long start = System.nanoTime();
      Call call = calls.newCall(new Request.Builder().url(server.url("/")).build());
      IOException thrown = null;
      try (Response ignored = call.execute()) {
        // not expected
      } catch (IOException e) {
        thrown = e;
      }
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(thrown).as("both attempts stalled past the deadline").isNotNull();
      assertThat(ms).isBetween(290L, 1_500L); // typically 300-310 ms; wide for a loaded machine
      assertThat(call.isCanceled()).as("timed out, as a plain OkHttp call reports it").isTrue();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (server.getRequestCount() < 3 && System.nanoTime() < until) Thread.sleep(10);
      assertThat(server.getRequestCount()).isEqualTo(3);
    }
  }

  @Test
  @Tag("slow")
  void hedgedCallsCanceledAtRandomMomentsLeaveNothingBehind() throws Exception {
    OkHttpClient client = client();
    SplittableRandom random = new SplittableRandom(21);
    AtomicInteger hedges = new AtomicInteger();
    RetryPolicy policy = RetryPolicy.builder().hedgeAfter(5, TimeUnit.MILLISECONDS).retryBudget(RetryBudget.unlimited())
        .listener(new RetryListener() {
          @Override
          public void onHedgeStarted(Request request, int attempt, long afterNanos) {
            hedges.incrementAndGet();
          }
        }).build();
    try (MockWebServer server = new MockWebServer();
        RetryingCallFactory calls = RetryingCallFactory.create(client, policy)) {
      server.setDispatcher(new Dispatcher() {
        final AtomicInteger n = new AtomicInteger();

        @Override
        public MockResponse dispatch(RecordedRequest request) {
          long delayMs = n.incrementAndGet() % 3 == 0 ? 40 : 2;
          return new MockResponse.Builder().headersDelay(delayMs, TimeUnit.MILLISECONDS).body("x").build();
        }
      });
      server.start();
      // -Dokretry.hedgedCalls=10000 for the soak figure; 200 in every build.
      int total = Integer.getInteger("okretry.hedgedCalls", 200);
      CountDownLatch done = new CountDownLatch(total);
      AtomicInteger callbacks = new AtomicInteger();
      for (int i = 0; i < total; i++) {
        Call call = calls.newCall(new Request.Builder().url(server.url("/" + i)).build());
        call.enqueue(new Callback() {
          @Override
          public void onResponse(Call c, Response response) {
            response.close();
            callbacks.incrementAndGet();
            done.countDown();
          }

          @Override
          public void onFailure(Call c, IOException e) {
            callbacks.incrementAndGet();
            done.countDown();
          }
        });
        Thread.sleep(random.nextInt(3));
        if (random.nextBoolean()) {
          Thread.sleep(random.nextInt(12)); // before, around or after the 5 ms hedge
          call.cancel();
        }
      }
      assertThat(done.await(30 + total / 50, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(100); // a callback counted twice would show by now
      assertThat(callbacks.get()).as("exactly one outcome per call").isEqualTo(total);
      assertThat(hedges.get()).as("hedges were sent, and canceled with their calls").isGreaterThan(total / 10);
      ScheduledThreadPoolExecutor scheduler = (ScheduledThreadPoolExecutor) calls.scheduler;
      assertThat(scheduler.getQueue()).as("no hedge timer left").isEmpty();
    }
  }
}
