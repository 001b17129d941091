package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The interceptor's attempts are requests of one OkHttp call, which reuses its own connection for
 * the next without a {@code connectionAcquired} event: a retry still does not go back over the
 * HTTP/1 connection that failed it when an earlier attempt kept it (a 503 with {@code
 * Retry-After}), and a server that paces with {@code x-ms-retry-after-ms} keeps its connection.
 */
@Tag("integration")
class InterceptorConnectionTest {

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

  @Test
  void aRetryAfterA5xxWithoutRetryAfterTakesAnotherConnection() throws Exception {
    // 1: paced (Retry-After: the connection is kept, as documented); 2: failed (it must be left)
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    RetryPolicy policy =
        RetryPolicy.builder().baseDelay(Duration.ofMillis(5)).maxRetries(3).build();
    OkHttpClient client =
        RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    RecordedRequest first = server.takeRequest();
    RecordedRequest failed = server.takeRequest();
    RecordedRequest retry = server.takeRequest();
    assertThat(failed.getConnectionIndex())
        .as("the paced 503's connection is kept")
        .isEqualTo(first.getConnectionIndex());
    assertThat(retry.getConnectionIndex())
        .as("the retry after a 503 without Retry-After avoids its connection")
        .isNotEqualTo(failed.getConnectionIndex());
  }

  @Test
  void controlAFirstAttemptFailureIsLeft() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    RetryPolicy policy = RetryPolicy.builder().baseDelay(Duration.ofMillis(5)).build();
    OkHttpClient client =
        RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    RecordedRequest failed = server.takeRequest();
    RecordedRequest retry = server.takeRequest();
    assertThat(retry.getConnectionIndex()).isNotEqualTo(failed.getConnectionIndex());
  }

  /**
   * A 503 paced by {@code x-ms-retry-after-ms} (which okretry honours as a Retry-After,
   * RetryAfter's MILLIS_FIELDS) is a server pacing the client, not a sick replica: its connection
   * is kept, as for Retry-After and retry-after-ms (ConnectionCheck.failed once read only those).
   */
  @Test
  void aServerPacingWithXMsRetryAfterMsKeepsItsConnection() throws Exception {
    server.enqueue(
        new MockResponse.Builder().code(503).addHeader("x-ms-retry-after-ms", "10").build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    RetryPolicy policy = RetryPolicy.builder().baseDelay(Duration.ofMillis(5)).build();
    OkHttpClient client =
        RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    RecordedRequest paced = server.takeRequest();
    RecordedRequest retry = server.takeRequest();
    assertThat(retry.getConnectionIndex()).isEqualTo(paced.getConnectionIndex());
  }
}
