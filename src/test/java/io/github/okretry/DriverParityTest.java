package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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

/**
 * The async driver ({@link RetryingCallFactory}, {@code enqueue()}) keeps its promises where real
 * threads and sockets are the point: a close() races the scheduler thread, a callback never runs on
 * the scheduler thread, and a POST whose response was lost after it reached a real server is not
 * sent again. Each case was a defect found in review. The cases that need neither run on fake time
 * on both drivers: a cancel from outside ({@code CancellationTest}), OkHttp's call timeout ({@code
 * DeadlineTest}), the origin that answered after a redirect ({@code ThrottledOriginTest}), a bug
 * below okretry ({@code RetryListenerTest}); the cut-short precedence is {@link SeenTest}'s.
 */
@Tag("integration")
class DriverParityTest {

  static final class Outcome implements Callback {
    final CompletableFuture<Object> result = new CompletableFuture<>();
    volatile String thread;

    @Override
    public void onFailure(Call call, IOException e) {
      thread = Thread.currentThread().getName();
      result.complete(e);
    }

    @Override
    public void onResponse(Call call, Response response) {
      thread = Thread.currentThread().getName();
      response.close();
      result.complete(response.code());
    }
  }

  static Request get(String url) {
    return new Request.Builder().url(url).build();
  }

  /**
   * close() ends a wait even when the thread that scheduled it was preempted until the waiting task
   * had run its attempt and scheduled the next wait: a stale future must not hide the live one. The
   * scheduler returns late from its first schedule() only.
   */
  @Test
  void closeEndsAWaitEvenIfTheSchedulingThreadWasPreempted() throws Exception {
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(1) {
          final AtomicBoolean first = new AtomicBoolean(true);

          @Override
          public ScheduledFuture<?> schedule(Runnable r, long delay, TimeUnit unit) {
            ScheduledFuture<?> f = super.schedule(r, delay, unit);
            if (first.getAndSet(false)) {
              try {
                Thread.sleep(500);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return f;
          }
        };
    OkHttpClient client = new OkHttpClient.Builder().build();
    RetryPolicy policy =
        RetryPolicy.builder()
            .jitter(Jitter.NONE)
            .baseDelay(1, TimeUnit.MILLISECONDS)
            .multiplier(10_000)
            .maxDelay(20, TimeUnit.SECONDS)
            .retryBudget(RetryBudget.unlimited())
            .build();
    RetryingCallFactory calls = RetryingCallFactory.create(client, policy, scheduler);
    try (RefusingPort refusing = new RefusingPort()) {
      int port = refusing.port(); // connections are refused, fast and retryable
      Outcome outcome = new Outcome();
      calls.newCall(get("http://127.0.0.1:" + port + "/")).enqueue(outcome);
      Thread.sleep(1_000); // attempt 2 failed; its 10 s wait is scheduled
      calls.close();
      assertThat(outcome.result.get(3, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
    } finally {
      scheduler.shutdownNow();
      client.dispatcher().executorService().shutdown();
    }
  }

  /**
   * A callback decided on the scheduler thread (here: throttled at the origin gate) runs elsewhere.
   */
  @Test
  void callbacksDoNotRunOnTheSchedulerThread() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest r) {
              String retryAfter = r.getUrl().encodedPath().equals("/a") ? "1" : "60";
              return new MockResponse.Builder()
                  .code(503)
                  .addHeader("Retry-After", retryAfter)
                  .build();
            }
          });
      server.start();
      OkHttpClient client = new OkHttpClient.Builder().build();
      RetryPolicy policy =
          RetryPolicy.builder()
              .originWideRetryAfter(true)
              .retryAfterSpread(0)
              .maxRetryAfter(10, TimeUnit.SECONDS)
              .deadline(3, TimeUnit.SECONDS)
              .build();
      try (RetryingCallFactory calls = RetryingCallFactory.create(client, policy)) {
        Outcome outcome = new Outcome();
        calls.newCall(get(server.url("/a").toString())).enqueue(outcome);
        Thread.sleep(300);
        calls
            .newCall(get(server.url("/b").toString()))
            .execute()
            .close(); // closes the origin for 10 s
        assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isEqualTo(503);
        assertThat(outcome.thread).doesNotContain("okretry scheduler");
      } finally {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }

  /**
   * Issue 15.3 on the async path: the POST was processed, then the connection dropped before the
   * answer; a blank Idempotency-Key is no key, so it is not sent again (the blocking twin is in
   * IdempotencyKeyIntegrationTest).
   */
  @Test
  void aPostWithABlankKeyWhoseResponseIsLostReachesTheServerOnceOnTheAsyncPath() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(
          new MockResponse.Builder()
              .onResponseStart(mockwebserver3.SocketEffect.ShutdownConnection.INSTANCE)
              .build());
      server.enqueue(new MockResponse.Builder().body("charged again").build());
      server.start();
      OkHttpClient client = new OkHttpClient.Builder().build();
      EventLog events = new EventLog();
      RetryPolicy policy =
          RetryPolicy.builder().baseDelay(1, TimeUnit.MILLISECONDS).listener(events).build();
      try (RetryingCallFactory calls = RetryingCallFactory.create(client, policy)) {
        Outcome outcome = new Outcome();
        calls
            .newCall(
                new Request.Builder()
                    .url(server.url("/pay"))
                    .header("Idempotency-Key", " ")
                    .post(
                        okhttp3.RequestBody.create("{}", okhttp3.MediaType.get("application/json")))
                    .build())
            .enqueue(outcome);
        assertThat(outcome.result.get(5, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
        assertThat(server.getRequestCount()).as("requests that reached the server").isEqualTo(1);
        assertThat(events.lines("gaveUp"))
            .singleElement()
            .asString()
            .startsWith("gaveUp 1 NOT_SAFE_TO_REPEAT");
      } finally {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }
}
