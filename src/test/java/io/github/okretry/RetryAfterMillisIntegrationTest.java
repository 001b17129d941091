package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The millisecond {@code Retry-After} forms through the blocking driver, on a real socket and fake
 * time: a 429 with {@code retry-after-ms: 1500} waits exactly 1.5 s (spread off), and it takes
 * precedence over a {@code Retry-After} on the same response.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class RetryAfterMillisIntegrationTest {
  MockWebServer server;
  final FakeTime time = new FakeTime();

  @BeforeEach
  void start() throws Exception {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @ParameterizedTest(name = "429 + {0}: {1} -> waits {2} ns")
  @CsvSource({
    "retry-after-ms, 1500, 1500000000",
    "x-ms-retry-after-ms, 1500, 1500000000",
    "retry-after-ms, 0.25, 250000",
    "Retry-After, 2, 2000000000",
  })
  void aThrottledCallWaitsTheMillisecondsItWasTold(String name, String value, long waitNanos)
      throws Exception {
    server.enqueue(new MockResponse.Builder().code(429).addHeader(name, value).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    assertThat(call()).isEqualTo("ok");
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(time.sleeps()).containsExactly(Duration.ofNanos(waitNanos));
  }

  @Test
  void theMillisecondFormTakesPrecedenceOverRetryAfter() throws Exception {
    server.enqueue(
        new MockResponse.Builder()
            .code(503)
            .addHeader("Retry-After", "30")
            .addHeader("retry-after-ms", "1500")
            .build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    assertThat(call()).isEqualTo("ok");
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(1500));
  }

  String call() throws Exception {
    RetryPolicy policy = RetryPolicy.builder().timeSource(time).retryAfterSpread(0).build();
    OkHttpClient client =
        RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      return r.body().string();
    } finally {
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
