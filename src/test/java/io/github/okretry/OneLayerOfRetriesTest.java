package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How okretry coexists with OkHttp's own hidden retries: unsafe requests are not repeated
 * underneath it, OkHttp's extra requests are reported, and a hostile Retry-After cannot crash a
 * call.
 */
class OneLayerOfRetriesTest {
  MockWebServer server;
  final List<String> network = new CopyOnWriteArrayList<>();
  final RetryListener listener = new RetryListener() {
    @Override
    public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
      network.add(attempt + "." + requestInAttempt);
    }
  };

  @BeforeEach
  void start() throws Exception {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static OkHttpClient close(OkHttpClient c) {
    c.dispatcher().executorService().shutdown();
    c.connectionPool().evictAll();
    return c;
  }

  @Test
  void okHttpsOwnRetryOfA503WithRetryAfterZeroIsReportedAsANetworkRequest() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    OkHttpClient client = RetryInterceptor.builder().listener(listener).build().install(new OkHttpClient.Builder()).build();
    try (Response r = client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    Diagnostics.println("503 + Retry-After: 0, network requests (attempt.request): " + network);
    assertThat(network).containsExactly("1.1", "1.2"); // OkHttp repeated attempt 1 by itself
    close(client);
  }

  @Test
  void okHttpRepeatsEvenAKeylessPostOnA503WithRetryAfterZero() throws Exception {
    // What the README states: OkHttp's own follow-up for 503 + Retry-After: 0 ignores
    // retryOnConnectionFailure, so even a keyless POST reaches the server twice. A 503 says the
    // first was not processed, so this repeats no side effect.
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    OkHttpClient client = RetryInterceptor.builder().listener(listener).build().install(new OkHttpClient.Builder()).build();
    Request post = new Request.Builder().url(server.url("/pay")).post(RequestBody.create("{}", MediaType.get("application/json")))
        .tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    try (Response r = client.newCall(post).execute()) {
      assertThat(r.body().string()).isEqualTo("ok");
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
    assertThat(network).containsExactly("1.1", "1.2");
    close(client);
  }

  @Test
  void a408IsNotRepeatedUnderneathForAPostWithoutKey() throws Exception {
    server.enqueue(new MockResponse.Builder().code(408).build());
    server.enqueue(new MockResponse.Builder().body("duplicate").build());
    OkHttpClient client = RetryInterceptor.builder().listener(listener).build().install(new OkHttpClient.Builder()).build();
    Request post = new Request.Builder().url(server.url("/pay")).post(RequestBody.create("{}", MediaType.get("application/json")))
        .tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    try (Response r = client.newCall(post).execute()) {
      assertThat(r.code()).isEqualTo(408);
    }
    assertThat(server.takeRequest(5, TimeUnit.SECONDS)).isNotNull();
    assertThat(server.takeRequest(300, TimeUnit.MILLISECONDS)).as("OkHttp did not resend the POST").isNull();
    assertThat(network).containsExactly("1.1");
    close(client);
  }

  @Test
  void withoutOkretryOkHttpWouldResendThatPost() throws Exception {
    // The baseline the test above guards against: plain OkHttp repeats a POST after a 408.
    server.enqueue(new MockResponse.Builder().code(408).build());
    server.enqueue(new MockResponse.Builder().body("duplicate").build());
    OkHttpClient plain = new OkHttpClient();
    Request post = new Request.Builder().url(server.url("/pay")).post(RequestBody.create("{}", MediaType.get("application/json"))).build();
    try (Response r = plain.newCall(post).execute()) {
      assertThat(r.body().string()).isEqualTo("duplicate");
    }
    assertThat(server.getRequestCount()).isEqualTo(2);
    close(plain);
  }

  @Test
  void aRetryAfterBeyondIntCrashesPlainOkHttpButNotAnInstalledOkretry() throws Exception {
    String hostile = "99999999999";
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", hostile).build());
    OkHttpClient plain = new OkHttpClient();
    assertThatThrownBy(() -> plain.newCall(new Request.Builder().url(server.url("/")).build()).execute())
        .isInstanceOf(NumberFormatException.class);
    close(plain);

    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", hostile).build());
    List<GiveUpReason> reasons = new CopyOnWriteArrayList<>();
    RetryInterceptor retry = RetryInterceptor.builder().listener(new RetryListener() {
      @Override
      public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
        reasons.add(reason);
      }
    }).build();
    OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
    try (Response r = client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.header("Retry-After")).isEqualTo("2147483647");
    }
    assertThat(reasons).containsExactly(GiveUpReason.RETRY_AFTER_TOO_LONG);
    close(client);
  }

  @Test
  void guardRecognisesExactlyTheValuesOkHttpCannotParse() {
    assertThat(RetryAfterGuard.overflowsInt("2147483647")).isFalse();
    assertThat(RetryAfterGuard.overflowsInt("2147483648")).isTrue();
    assertThat(RetryAfterGuard.overflowsInt("00000000000000002147483647")).isFalse();
    assertThat(RetryAfterGuard.overflowsInt("99999999999999999999999")).isTrue();
    assertThat(RetryAfterGuard.overflowsInt("120")).isFalse();
    assertThat(RetryAfterGuard.overflowsInt("Wed, 21 Oct 2015 07:28:00 GMT")).isFalse();
    assertThat(RetryAfterGuard.overflowsInt(" 99999999999")).isFalse(); // OkHttp's \\d+ does not match it either
  }

  @Test
  void okHttpsSilentRetryOfAStaleConnectionIsCountedForASafeRequest() throws Exception {
    server.enqueue(new MockResponse.Builder().body("warm").build());
    server.enqueue(new MockResponse.Builder().onResponseStart(mockwebserver3.SocketEffect.ShutdownConnection.INSTANCE).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    OkHttpClient client = RetryInterceptor.builder().listener(listener).baseDelay(Duration.ofMillis(1)).build()
        .install(new OkHttpClient.Builder()).build();
    client.newCall(new Request.Builder().url(server.url("/warm")).build()).execute().close();
    try (Response r = client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.body().string()).isEqualTo("ok");
    }
    Diagnostics.println("GET over a pooled connection that dropped: network requests " + network);
    // warm-up; then okretry's attempt 1, which OkHttp sent twice because the pooled connection
    // dropped (safe: GET is idempotent), and the listener saw both
    assertThat(network).containsExactly("1.1", "1.1", "1.2");
    assertThat(server.getRequestCount()).isEqualTo(3);
    close(client);
  }
}
