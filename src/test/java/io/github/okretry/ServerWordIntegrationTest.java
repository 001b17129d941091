package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 45 items 1 and 4 on real sockets, both drivers: the attempt number the server receives on
 * each attempt ({@code attemptHeader}), and the server's {@code X-Should-Retry} obeyed.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class ServerWordIntegrationTest {
  MockWebServer server;
  RetryingCallFactory factory;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    if (factory != null) factory.close();
    server.close();
  }

  /** The blocking driver, or the async one's enqueue(), under {@code policy}. */
  RetryOutcomeIntegrationTest.Exec calls(String driver, RetryPolicy policy) {
    OkHttpClient base = LeakCheck.track(new OkHttpClient.Builder().build());
    if (driver.equals("blocking")) {
      OkHttpClient client = RetryInterceptor.create(policy).install(base.newBuilder()).build();
      return request -> client.newCall(request).execute();
    }
    factory = RetryingCallFactory.create(base, policy);
    return request ->
        new RetryOutcomeIntegrationTest.EnqueuedCall(factory.newCall(request)).execute();
  }

  static RetryPolicy.Builder fast() {
    return RetryPolicy.builder().baseDelay(Duration.ofMillis(1));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void theServerReceivesEachAttemptsNumber(String driver) throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(429).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    RetryPolicy policy = fast().maxRetries(2).attemptHeader("amz-sdk-request").build();
    try (Response r = calls(driver, policy).execute(get())) {
      assertThat(r.body().string()).isEqualTo("ok");
    }
    assertThat(server.getRequestCount()).isEqualTo(3);
    for (int n = 1; n <= 3; n++) {
      assertThat(server.takeRequest().getHeaders().get("amz-sdk-request"))
          .isEqualTo("attempt=" + n + "; max=3");
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void withoutTheSettingNoAttemptNumberIsSent(String driver) throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    try (Response r = calls(driver, fast().build()).execute(get())) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(server.takeRequest().getHeaders().get("amz-sdk-request")).isNull();
    assertThat(server.takeRequest().getHeaders().get("amz-sdk-request")).isNull();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void shouldRetryFalseEndsA503AndTrueRetriesA500(String driver) throws Exception {
    server.enqueue(
        new MockResponse.Builder().code(503).addHeader("X-Should-Retry", "false").build());
    server.enqueue(
        new MockResponse.Builder().code(500).addHeader("X-Should-Retry", "true").build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    RetryOutcomeIntegrationTest.Exec calls = calls(driver, fast().build());
    try (Response r = calls.execute(get())) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(RetryOutcome.of(r).giveUpReason()).isEqualTo(GiveUpReason.SERVER_SAID_NO_RETRY);
    }
    try (Response r = calls.execute(get())) {
      assertThat(r.body().string()).isEqualTo("ok");
      assertThat(RetryOutcome.of(r).attempts()).isEqualTo(2);
    }
    assertThat(server.getRequestCount()).isEqualTo(3);
  }

  Request get() {
    return new Request.Builder().url(server.url("/")).build();
  }
}
