package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
import org.junit.jupiter.api.Test;

/**
 * Real OkHttp calls against a MockWebServer on loopback. Waits are real only where time is the
 * point (deadline, cancel, interrupt); bounds are wide enough for a slow, noisy 2-core machine.
 */
class RetryInterceptorIntegrationTest {
  MockWebServer server;
  OkHttpClient client;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      assertThat(client.connectionPool().connectionCount())
          .as("no connection still allocated")
          .isEqualTo(client.connectionPool().idleConnectionCount());
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
    server.close();
  }

  static RequestBody json() {
    return RequestBody.create("{\"amount\":42}", MediaType.get("application/json"));
  }

  OkHttpClient client(RetryInterceptor retry, Duration readTimeout) {
    client = new OkHttpClient.Builder().readTimeout(readTimeout).addInterceptor(retry).build();
    return client;
  }

  @Test
  void stalledServerWithLongReadTimeoutEndsAtTheDeadline() {
    server.enqueue(new MockResponse.Builder().headersDelay(1, TimeUnit.HOURS).build());
    server.enqueue(new MockResponse.Builder().headersDelay(1, TimeUnit.HOURS).build());
    RetryInterceptor retry = RetryInterceptor.builder().deadline(Duration.ofSeconds(1)).build();
    OkHttpClient c = client(retry, Duration.ofSeconds(10));
    long start = System.nanoTime();
    assertThatThrownBy(() -> c.newCall(new Request.Builder().url(server.url("/slow")).build()).execute())
        .isInstanceOf(SocketTimeoutException.class);
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    Diagnostics.println("stalled server, 10 s read timeout, 1 s deadline: call ended after " + elapsedMs + " ms");
    assertThat(elapsedMs).isBetween(900L, 2_500L);
  }

  @Test
  void theDeadlineAlsoEndsAnAttemptWhosePeerTricklesBytes() throws Exception {
    try (Trickler trickler = new Trickler()) {
      RetryInterceptor retry = RetryInterceptor.builder().deadline(Duration.ofSeconds(1)).build();
      OkHttpClient c = client(retry, Duration.ofSeconds(10));
      long start = System.nanoTime();
      assertThatThrownBy(() -> c.newCall(new Request.Builder().url(trickler.url()).build()).execute())
          .isInstanceOf(SocketTimeoutException.class)
          .hasMessageContaining("deadline");
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;
      Diagnostics.println("peer trickling a byte every 100 ms, 1 s deadline: call ended after " + elapsedMs + " ms");
      assertThat(elapsedMs).isBetween(900L, 2_500L);
    }
  }

  @Test
  void postWithoutKeyIsNotRetriedAfterAReadTimeout() throws Exception {
    server.enqueue(new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build());
    server.enqueue(new MockResponse.Builder().body("second").build());
    OkHttpClient c = client(RetryInterceptor.builder().baseDelay(Duration.ofMillis(1)).build(), Duration.ofMillis(200));
    Request request =
        new Request.Builder().url(server.url("/pay")).post(json()).tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    assertThatThrownBy(() -> c.newCall(request).execute()).isInstanceOf(SocketTimeoutException.class);
    assertExactlyRequests(1);
  }

  /** Waits for {@code n} requests, then makes sure no further one arrives. */
  void assertExactlyRequests(int n) throws InterruptedException {
    for (int i = 0; i < n; i++) {
      assertThat(server.takeRequest(10, TimeUnit.SECONDS)).as("request %d", i + 1).isNotNull();
    }
    assertThat(server.takeRequest(300, TimeUnit.MILLISECONDS)).as("no request %d", n + 1).isNull();
  }

  @Test
  void postWithoutKeyIsNotResentWhenTheResponseIsLost() throws Exception {
    // The server processes the POST and drops the connection: OkHttp's own retryOnConnectionFailure
    // would resend it silently; okretry turns that off for this attempt.
    server.enqueue(new MockResponse.Builder().body("warm-up").build());
    server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
    server.enqueue(new MockResponse.Builder().body("duplicate").build());
    OkHttpClient c = client(RetryInterceptor.builder().baseDelay(Duration.ofMillis(1)).build(), Duration.ofSeconds(5));
    c.newCall(new Request.Builder().url(server.url("/warm")).build()).execute().close(); // pools a connection
    Request request =
        new Request.Builder().url(server.url("/pay")).post(json()).tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    assertThatThrownBy(() -> c.newCall(request).execute()).isInstanceOf(IOException.class);
    assertExactlyRequests(2);
  }

  @Test
  void postWithKeyIsRetriedWithTheSameKeyWhenTheResponseIsLost() throws Exception {
    server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
    server.enqueue(new MockResponse.Builder().body("charged").build());
    OkHttpClient c = client(RetryInterceptor.builder().baseDelay(Duration.ofMillis(1)).build(), Duration.ofSeconds(5));
    try (Response r = c.newCall(new Request.Builder().url(server.url("/pay")).post(json()).build()).execute()) {
      assertThat(r.body().string()).isEqualTo("charged");
    }
    RecordedRequest first = server.takeRequest();
    RecordedRequest second = server.takeRequest();
    assertThat(first.getHeaders().get("Idempotency-Key")).isNotBlank().isEqualTo(second.getHeaders().get("Idempotency-Key"));
    assertThat(first.getBody().utf8()).isEqualTo(second.getBody().utf8()).isEqualTo("{\"amount\":42}");
  }

  @Test
  void postWithoutKeyIsRetriedWhenTheConnectionIsRefused() throws IOException {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    int[] attempts = {0};
    RetryInterceptor retry =
        RetryInterceptor.builder()
            .baseDelay(Duration.ofMillis(1))
            .maxRetries(2)
            .listener(new RetryListener() {
              @Override
              public void onAttemptStarted(Request request, int attempt) {
                attempts[0] = attempt;
              }
            })
            .build();
    OkHttpClient c = client(retry, Duration.ofSeconds(5));
    Request request =
        new Request.Builder().url("http://127.0.0.1:" + closedPort + "/pay").post(json())
            .tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    assertThatThrownBy(() -> c.newCall(request).execute())
        .isInstanceOf(java.net.ConnectException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(2));
    assertThat(attempts[0]).isEqualTo(3);
  }

  @Test
  void cancelDuringAWaitEndsTheCallWithin50ms() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build());
    OkHttpClient c = client(RetryInterceptor.builder().build(), Duration.ofSeconds(5));
    okhttp3.Call call = c.newCall(new Request.Builder().url(server.url("/")).build());
    CompletableFuture<Throwable> outcome = CompletableFuture.supplyAsync(() -> {
      try {
        call.execute().close();
        return null;
      } catch (Throwable t) {
        return t;
      }
    });
    server.takeRequest();
    Thread.sleep(100); // now in the 30 s wait
    long canceledAt = System.nanoTime();
    call.cancel();
    Throwable t = outcome.get(5, TimeUnit.SECONDS);
    long reactionMs = (System.nanoTime() - canceledAt) / 1_000_000;
    Diagnostics.println("cancel during a wait: call ended " + reactionMs + " ms after cancel()");
    assertThat(t).isInstanceOf(IOException.class).hasMessageContaining("Canceled");
    assertThat(reactionMs).isLessThan(500); // typically ≤ 10 ms; wide for a loaded CI machine
  }

  @Test
  void interruptDuringAWaitThrowsInterruptedIOExceptionAndKeepsTheFlag() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "30").build());
    OkHttpClient c = client(RetryInterceptor.builder().build(), Duration.ofSeconds(5));
    Throwable[] thrown = new Throwable[1];
    boolean[] flag = new boolean[1];
    Thread caller = new Thread(() -> {
      try {
        c.newCall(new Request.Builder().url(server.url("/")).build()).execute().close();
      } catch (Throwable t) {
        thrown[0] = t;
        flag[0] = Thread.currentThread().isInterrupted();
      }
    });
    caller.start();
    server.takeRequest();
    Thread.sleep(100);
    caller.interrupt();
    caller.join(5_000);
    assertThat(caller.isAlive()).isFalse();
    assertThat(thrown[0]).isInstanceOf(InterruptedIOException.class);
    assertThat(flag[0]).as("interrupt flag restored").isTrue();
  }

  @Test
  void aWaitThatFitsTheCallTimeoutIsTaken() {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build());
    server.enqueue(new MockResponse.Builder().body("too late").build());
    client = new OkHttpClient.Builder()
        .callTimeout(Duration.ofMillis(1500))
        .addInterceptor(RetryInterceptor.builder().build())
        .build();
    // Retry-After 1 s fits the 1.5 s call timeout, so the wait starts and the retry lands in time.
    long start = System.nanoTime();
    try (Response r = client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.body().string()).isEqualTo("too late");
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    assertThat((System.nanoTime() - start) / 1_000_000).isBetween(900L, 1_600L);
  }

  @Test
  void retryAfterLongerThanCallTimeoutReturnsTheResponseAtOnce() throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "5").build());
    client = new OkHttpClient.Builder()
        .callTimeout(Duration.ofSeconds(2))
        .addInterceptor(RetryInterceptor.builder().build())
        .build();
    long start = System.nanoTime();
    try (Response r = client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_000L);
    assertExactlyRequests(1);
  }

  @Test
  void rejectedAsANetworkInterceptor() {
    server.enqueue(new MockResponse.Builder().build());
    client = new OkHttpClient.Builder().addNetworkInterceptor(RetryInterceptor.create()).build();
    assertThatThrownBy(() -> client.newCall(new Request.Builder().url(server.url("/")).build()).execute())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("addInterceptor");
  }
}
