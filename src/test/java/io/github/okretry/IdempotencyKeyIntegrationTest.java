package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Idempotency keys with real OkHttp calls to a MockWebServer on loopback. The server processes the
 * POST, then the connection drops before the answer: a POST with a key is sent again with the same
 * key and body; one with a blank key header (a missing value that app code filled with {@code ""},
 * issue 15.3) is no key and must not be sent again, and okretry leaves the header as the caller set
 * it. The rules on fake time: {@link IdempotencyKeyTest}.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class IdempotencyKeyIntegrationTest {

  MockWebServer server;
  final List<String> gaveUp = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.enqueue(
        new MockResponse.Builder()
            .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)
            .build());
    server.enqueue(new MockResponse.Builder().body("charged again").build());
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  OkHttpClient client() {
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .timeSource(new FakeTime())
                .listener(
                    new RetryListener() {
                      @Override
                      public void onGaveUp(
                          Request request, int attempts, GiveUpReason reason, String lastFailure) {
                        gaveUp.add(reason + " after " + attempts);
                      }
                    })
                .build());
    return LeakCheck.track(retry.install(new OkHttpClient.Builder()).build());
  }

  Request post(String keyHeader) {
    return new Request.Builder()
        .url(server.url("/pay"))
        .header("Idempotency-Key", keyHeader)
        .post(RequestBody.create("{\"amount\":42}", MediaType.get("application/json")))
        .build();
  }

  @ParameterizedTest(name = "Idempotency-Key: [{0}]")
  @ValueSource(strings = {"", "   ", "\t", "\"\"", "\" \""})
  void aPostWithABlankKeyWhoseResponseIsLostReachesTheServerOnce(String blank) throws Exception {
    assertThatThrownBy(() -> client().newCall(post(blank)).execute())
        .isInstanceOf(IOException.class);
    assertThat(server.getRequestCount()).as("requests that reached the server").isEqualTo(1);
    assertThat(gaveUp).containsExactly("NOT_SAFE_TO_REPEAT after 1");
    // sent as the caller set it (OkHttp trims surrounding whitespace): okretry neither strips nor
    // replaces it
    assertThat(server.takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(blank.trim());
  }

  @Test
  void aPostWithAKeyIsResentWithTheSameKeyAndBodyWhenTheResponseIsLost() throws Exception {
    RetryInterceptor retry =
        RetryInterceptor.create(RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).build());
    OkHttpClient c =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .readTimeout(Duration.ofSeconds(5))
                .addInterceptor(retry)
                .build());
    try (Response r =
        c.newCall(
                new Request.Builder()
                    .url(server.url("/pay"))
                    .post(RequestBody.create("{\"amount\":42}", MediaType.get("application/json")))
                    .build())
            .execute()) {
      assertThat(r.body().string()).isEqualTo("charged again");
    }
    RecordedRequest first = server.takeRequest();
    RecordedRequest second = server.takeRequest();
    assertThat(first.getHeaders().get("Idempotency-Key"))
        .isNotBlank()
        .isEqualTo(second.getHeaders().get("Idempotency-Key"));
    assertThat(first.getBody().utf8())
        .isEqualTo(second.getBody().utf8())
        .isEqualTo("{\"amount\":42}");
  }

  @Test
  void aRealKeyStillMakesTheSamePostSafeToRepeat() throws Exception {
    try (Response response = client().newCall(post("order-42")).execute()) {
      assertThat(response.body().string()).isEqualTo("charged again");
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @Test
  void aBlankKeyOnAnIdempotentMethodChangesNothing() throws Exception {
    Request put =
        post("")
            .newBuilder()
            .put(RequestBody.create("{}", MediaType.get("application/json")))
            .build();
    try (Response response = client().newCall(put).execute()) {
      assertThat(response.body().string()).isEqualTo("charged again");
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
  }
}
