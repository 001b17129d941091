package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

class SmokeTest {
  @Test
  void postKeepsKeyAcrossAttempts() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.start();
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      FakeTime time = new FakeTime();
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(RetryInterceptor.builder().timeSource(time).build()).build();
      Request request = new Request.Builder().url(server.url("/")).post(RequestBody.create("x", MediaType.get("text/plain"))).build();
      try (Response r = client.newCall(request).execute()) {
        assertThat(r.body().string()).isEqualTo("ok");
      }
      String k1 = server.takeRequest().getHeaders().get("Idempotency-Key");
      String k2 = server.takeRequest().getHeaders().get("Idempotency-Key");
      String k3 = server.takeRequest().getHeaders().get("Idempotency-Key");
      assertThat(k1).isNotNull().isEqualTo(k2).isEqualTo(k3);
      assertThat(time.sleeps()).hasSizeBetween(1, 2);
      System.out.println(time.sleeps());
    }
  }

  @Test
  void postWithoutKeyNotRetriedAfterResponseStartDrop() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.start();
      server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      FakeTime time = new FakeTime();
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(RetryInterceptor.builder().timeSource(time).build()).build();
      Request request = new Request.Builder().url(server.url("/")).tag(IdempotencyKey.class, IdempotencyKey.none())
          .post(RequestBody.create("x", MediaType.get("text/plain"))).build();
      try {
        client.newCall(request).execute().close();
        throw new AssertionError("expected failure");
      } catch (java.io.IOException expected) {
        System.out.println("got " + expected);
      }
      assertThat(server.getRequestCount()).isEqualTo(1);
    }
  }
}
