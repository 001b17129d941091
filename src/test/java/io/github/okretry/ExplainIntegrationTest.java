package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A claim of {@link RetryPolicy#explain(OkHttpClient)} on a real server (issue 43.5): each of
 * OkHttp's follow-ups gets the timeouts afresh, so one attempt through redirects outlasts what one
 * request's timeouts add up to, and only a deadline bounds it.
 */
@Tag("integration")
@Tag("slow") // real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class ExplainIntegrationTest {
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
  void eachRedirectGetsTheTimeoutsAfresh() throws IOException {
    for (int i = 0; i < 4; i++) {
      server.enqueue(
          new MockResponse.Builder()
              .code(302)
              .addHeader("Location", "/next" + i)
              .headersDelay(250, TimeUnit.MILLISECONDS)
              .build());
    }
    server.enqueue(new MockResponse.Builder().body("there").build());
    RetryPolicy policy = RetryPolicy.builder().maxRetries(0).quotaPacing(QuotaPacing.OFF).build();
    OkHttpClient client =
        LeakCheck.track(
            RetryInterceptor.create(policy)
                .install(
                    new OkHttpClient.Builder()
                        .connectTimeout(Duration.ofMillis(100))
                        .writeTimeout(Duration.ofMillis(100))
                        .readTimeout(Duration.ofMillis(400)))
                .build());
    assertThat(policy.explain(client))
        .contains(
            "1 × 0.6 s = 0.6 s.",
            "Each redirect or auth follow-up (OkHttp makes up to 20) gets them afresh.");

    long start = System.nanoTime();
    try (Response response =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(response.body().string()).isEqualTo("there");
    }
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(tookMillis).as("4 redirects of 250 ms, past one request's 0.6 s").isGreaterThan(900);
    assertThat(server.getRequestCount()).isEqualTo(5);
  }
}
