package io.github.okretry.examples;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/** A GET that meets two 503s and then succeeds: three attempts, two jittered waits. */
public final class FlakyGet {
  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().body("hello").build());
      server.start();

      Timeline timeline = new Timeline(Duration.ofMillis(200));
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .maxRetries(3)
                  .baseDelay(Duration.ofMillis(200))
                  .listener(timeline)
                  .build());
      OkHttpClient client =
          new OkHttpClient.Builder()
              .addInterceptor(retry)
              .addInterceptor(timeline.attempts())
              .build();

      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/flaky")).build()).execute()) {
        timeline.print(
            "caller got HTTP " + response.code() + " \"" + response.body().string() + "\"");
      }
      timeline.print("server saw " + server.getRequestCount() + " requests");
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
