package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
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
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The budget's evidence rule on real sockets, both drivers: the response kept open through a
 * refused retry's one wait reaches the caller as the server sent it, and its connection is never
 * leaked, whether it is returned or closed for a retry ({@link LeakCheck}). The leak check guards
 * the async driver (each attempt its own OkHttp call: a held response left open shows as an
 * allocated connection); on the blocking driver it passes even without the close, which
 * BudgetEvidenceTest's closed-body check guards instead.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class HeldResponseIntegrationTest {

  /** Calls {@code request} through the blocking driver, or through {@code enqueue()} of the async one. */
  private static Response call(OkHttpClient client, RetryPolicy policy, boolean async, Request request) throws Exception {
    if (!async) return client.newBuilder().addInterceptor(RetryInterceptor.create(policy)).build().newCall(request).execute();
    RetryingCallFactory factory = RetryingCallFactory.create(client, policy);
    try {
      CompletableFuture<Response> outcome = new CompletableFuture<>();
      factory.newCall(request).enqueue(new Callback() {
        @Override
        public void onResponse(Call call, Response response) {
          outcome.complete(response);
        }

        @Override
        public void onFailure(Call call, IOException e) {
          outcome.completeExceptionally(e);
        }
      });
      return outcome.get(10, TimeUnit.SECONDS);
    } finally {
      factory.close();
    }
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void aFreshClientsFirst503ArrivesAsSentAndItsConnectionGoesBackToThePool(boolean async) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("X-Origin", "real").body("down for maintenance").build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(5)).build());
      RetryPolicy policy = RetryPolicy.builder().build(); // the default budget: no evidence yet
      Request request = new Request.Builder().url(server.url("/")).build();
      try (Response r = call(client, policy, async, request)) {
        assertThat(r.code()).isEqualTo(503);
        assertThat(r.header("X-Origin")).isEqualTo("real");
        assertThat(r.body().string()).isEqualTo("down for maintenance");
      }
      assertThat(server.getRequestCount()).as("nothing sent after the wait").isEqualTo(1);
      try (Response r = call(client, policy, async, request)) {
        assertThat(r.body().string()).isEqualTo("ok");
      }
      RecordedRequest first = server.takeRequest();
      RecordedRequest second = server.takeRequest();
      assertThat(second.getConnectionIndex()).as("the held response's connection, reused").isEqualTo(first.getConnectionIndex());
    }
  }

  @ParameterizedTest(name = "async={0}")
  @ValueSource(booleans = {false, true})
  void aCallSucceedingDuringTheWaitLetsTheRetryGoAndTheHeldResponseIsClosed(boolean async) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      // Answers by path, not by arrival: takeRequest() returns once the 503's request is read,
      // which may be before it is answered, so the other call could otherwise take the 503.
      AtomicInteger firstCalls = new AtomicInteger();
      server.setDispatcher(new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest r) {
          if (r.getUrl().encodedPath().equals("/other")) return new MockResponse.Builder().body("other").build();
          return firstCalls.getAndIncrement() == 0
              ? new MockResponse.Builder().code(503).body("down").build()
              : new MockResponse.Builder().body("retried").build();
        }
      });
      server.start();
      OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(5)).build());
      // A 1 s wait, exactly: time enough for the other call on a slow machine.
      RetryPolicy policy = RetryPolicy.builder().baseDelay(Duration.ofSeconds(1)).jitter(Jitter.NONE).build();
      Request request = new Request.Builder().url(server.url("/")).build();
      // The test owns its caller thread: a pool worker would outlive the test and read as a leak.
      CompletableFuture<String> first = new CompletableFuture<>();
      Thread caller = new Thread(() -> {
        try (Response r = call(client, policy, async, request)) {
          first.complete(r.code() + " " + r.body().string());
        } catch (Throwable t) {
          first.completeExceptionally(t);
        }
      }, "held-response caller");
      caller.start();
      server.takeRequest(5, TimeUnit.SECONDS); // the 503 is in: the first call now waits, holding it
      try (Response other = call(client, policy, async, request.newBuilder().url(server.url("/other")).build())) {
        assertThat(other.body().string()).isEqualTo("other");
      }
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("200 retried");
      caller.join(5_000);
      assertThat(server.getRequestCount()).isEqualTo(3);
    }
  }
}
