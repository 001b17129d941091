package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * When repeating is safe, with real OkHttp calls to a MockWebServer on loopback: a keyless POST is
 * not repeated after a read timeout (it may have been processed), but is after a refused
 * connection, and "did this attempt send anything" is decided afresh for each attempt. The rules on
 * fake time: {@link SafeToRepeatTest}; every fault at once: {@link FaultMatrixTest}.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class SafeToRepeatIntegrationTest {
  MockWebServer server;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static RequestBody json() {
    return RequestBody.create("{\"amount\":42}", MediaType.get("application/json"));
  }

  static OkHttpClient client(RetryInterceptor retry, Duration readTimeout) {
    return LeakCheck.track(
        new OkHttpClient.Builder().readTimeout(readTimeout).addInterceptor(retry).build());
  }

  /** Waits for {@code n} requests, then makes sure no further one arrives. */
  void assertExactlyRequests(int n) throws InterruptedException {
    for (int i = 0; i < n; i++) {
      assertThat(server.takeRequest(10, TimeUnit.SECONDS)).as("request %d", i + 1).isNotNull();
    }
    assertThat(server.takeRequest(300, TimeUnit.MILLISECONDS)).as("no request %d", n + 1).isNull();
  }

  @Test
  void aPostWithoutKeyIsNotRetriedAfterAReadTimeout() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build());
    server.enqueue(new MockResponse.Builder().body("second").build());
    OkHttpClient c =
        client(
            RetryInterceptor.create(RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).build()),
            Duration.ofMillis(200));
    Request request =
        new Request.Builder()
            .url(server.url("/pay"))
            .post(json())
            .tag(IdempotencyKey.class, IdempotencyKey.none())
            .build();
    assertThatThrownBy(() -> c.newCall(request).execute())
        .isInstanceOf(SocketTimeoutException.class);
    assertExactlyRequests(1);
  }

  @Test
  void aPostWithoutKeyIsRetriedWhenTheConnectionIsRefused() throws IOException {
    try (RefusingPort refusing = new RefusingPort()) {
      postWithoutKeyToARefusingPort(refusing.port());
    }
  }

  private void postWithoutKeyToARefusingPort(int closedPort) throws IOException {
    int[] attempts = {0};
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .baseDelay(Duration.ofMillis(1))
                .maxRetries(2)
                .listener(
                    new RetryListener() {
                      @Override
                      public void onAttemptStarted(Request request, int attempt) {
                        attempts[0] = attempt;
                      }
                    })
                .build());
    OkHttpClient c = client(retry, Duration.ofSeconds(5));
    Request request =
        new Request.Builder()
            .url("http://127.0.0.1:" + closedPort + "/pay")
            .post(json())
            .tag(IdempotencyKey.class, IdempotencyKey.none())
            .build();
    assertThatThrownBy(() -> c.newCall(request).execute())
        .isInstanceOf(java.net.ConnectException.class)
        .satisfies(e -> assertThat(EarlierFailures.of(e)).hasSize(2));
    assertThat(attempts[0]).isEqualTo(3);
  }

  /**
   * The server answers 503 and then goes away (a restart): the keyless POST's first attempt wrote
   * its headers, the later ones are refused before writing anything. Each attempt's "did it send"
   * starts afresh, so the refusals prove non-processing and are retried until exhausted.
   */
  @Test
  void serverGoneBetweenAttemptsKeylessPostStillRetried() throws Exception {
    // "Connection: close", so the next attempt cannot pick a stale pooled connection (that case,
    // which is not retried for a keyless POST, is OneLayerOfRetriesTest.PooledConnections).
    server.enqueue(
        new MockResponse.Builder()
            .code(503)
            .addHeader("Connection", "close")
            .body("restarting")
            .build());
    List<Integer> attempts = new ArrayList<>();
    RetryListener stopServer =
        new RetryListener() {
          @Override
          public void onAttemptStarted(Request r, int attempt) {
            attempts.add(attempt);
          }

          @Override
          public void onRetryScheduled(Request r, int attempt, String why, long delayNanos) {
            if (attempt == 1) server.close();
          }
        };
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(RetryInterceptor.create(quietRetry().listener(stopServer).build()))
                .build());
    Request post =
        new Request.Builder()
            .url(server.url("/"))
            .post(RequestBody.create("x", MediaType.get("text/plain")))
            .build();
    assertThatThrownBy(() -> client.newCall(post).execute())
        .isInstanceOf(java.net.ConnectException.class);
    assertThat(attempts).containsExactly(1, 2, 3, 4);
    assertThat(server.getRequestCount()).isEqualTo(1);
  }

  /**
   * Each attempt's "did it start sending" starts afresh: attempt 1 reaches the server (503),
   * attempt 2 fails in a later application interceptor before any byte leaves, which proves
   * non-processing even though attempt 1 did send; attempt 3 succeeds.
   */
  @Test
  void sendTrackingIsPerAttempt() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).body("busy").build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    int[] calls = {0};
    Interceptor tokenService =
        chain -> {
          if (++calls[0] == 2) throw new java.net.SocketException("token service unreachable");
          return chain.proceed(chain.request());
        };
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(RetryInterceptor.create(quietRetry().build()))
                .addInterceptor(tokenService)
                .build());
    Request post =
        new Request.Builder()
            .url(server.url("/"))
            .post(RequestBody.create("x", MediaType.get("text/plain")))
            .build();
    try (Response r = client.newCall(post).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(calls[0]).isEqualTo(3);
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  /** Fake time (no real waits), keys off: a POST is keyless. */
  static RetryPolicy.Builder quietRetry() {
    return RetryPolicy.builder()
        .timeSource(new FakeTime())
        .random(() -> 0L)
        .generateIdempotencyKeys(false);
  }
}
