package io.github.okretry.examples;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A 2 s deadline against a server that first answers 503 and then takes 10 s: the client's read
 * timeout is 10 s, but okretry shrinks each attempt's timeouts to the time left, so the call ends
 * at about 2 s, not 10.
 */
public final class DeadlineExample {
  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(
          new MockResponse.Builder().body("too late").headersDelay(10, TimeUnit.SECONDS).build());
      server.start();

      Timeline timeline = new Timeline();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder().deadline(Duration.ofSeconds(2)).listener(timeline).build());
      OkHttpClient client =
          new OkHttpClient.Builder()
              .readTimeout(Duration.ofSeconds(10))
              .addInterceptor(retry)
              .addInterceptor(timeline.attempts())
              .build();

      timeline.restart("GET /slow: 503, then 10 s of silence; 2 s deadline, 10 s read timeout");
      long start = System.nanoTime();
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/slow")).build()).execute()) {
        timeline.print("caller got HTTP " + response.code());
      } catch (IOException e) {
        timeline.print("caller got " + e);
      }
      timeline.print(
          String.format(
              "elapsed %d ms (deadline 2000 ms, read timeout 10000 ms)",
              (System.nanoTime() - start) / 1_000_000));
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
