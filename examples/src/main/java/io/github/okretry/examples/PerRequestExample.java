package io.github.okretry.examples;

import io.github.okretry.IdempotencyKey;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryOverrides;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * One client, three requests that each choose differently with request tags: a POST with {@link
 * IdempotencyKey#none()} is not repeated after a timeout (the server may have acted on it); a POST
 * with the caller's key {@code order-42} is; and a GET with a tighter {@link RetryOverrides}
 * deadline stops sooner than the client's.
 */
public final class PerRequestExample {
  private static final MediaType JSON = MediaType.get("application/json");

  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      AtomicInteger keyedRequests = new AtomicInteger();
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              String key = request.getHeaders().get("Idempotency-Key");
              System.out.println(
                  "           server: "
                      + request.getMethod()
                      + " "
                      + request.getUrl().encodedPath()
                      + " key="
                      + (key == null ? "none" : key));
              MockResponse.Builder slow =
                  new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS);
              switch (request.getUrl().encodedPath()) {
                case "/orders/keyed":
                  // Slow the first time only: the retry, with the same key, gets its answer.
                  return keyedRequests.incrementAndGet() == 1
                      ? slow.code(201).body("created").build()
                      : new MockResponse.Builder().code(201).body("created").build();
                default:
                  return slow.body("too late").build();
              }
            }
          });
      server.start();

      Timeline timeline = new Timeline(Duration.ofMillis(100));
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .maxRetries(3)
                  .baseDelay(Duration.ofMillis(100))
                  .deadline(Duration.ofSeconds(5))
                  .listener(timeline)
                  .build());
      OkHttpClient client =
          new OkHttpClient.Builder()
              .readTimeout(Duration.ofMillis(500))
              .addInterceptor(retry)
              .addInterceptor(timeline.attempts())
              .build();

      timeline.restart(
          "POST with IdempotencyKey.none(): a timeout may hide a processed order, so 1 attempt");
      execute(
          client,
          timeline,
          new Request.Builder()
              .url(server.url("/orders/unkeyed"))
              .post(RequestBody.create("{\"item\":42}", JSON))
              .tag(IdempotencyKey.class, IdempotencyKey.none())
              .build());

      timeline.restart(
          "POST with IdempotencyKey.of(\"order-42\"): the server can de-duplicate, so retried");
      execute(
          client,
          timeline,
          new Request.Builder()
              .url(server.url("/orders/keyed"))
              .post(RequestBody.create("{\"item\":42}", JSON))
              .tag(IdempotencyKey.class, IdempotencyKey.of("order-42"))
              .build());

      timeline.restart("GET with RetryOverrides deadline 800 ms (the client's is 5 s)");
      execute(
          client,
          timeline,
          new Request.Builder()
              .url(server.url("/orders/42"))
              .tag(
                  RetryOverrides.class,
                  RetryOverrides.builder().deadline(Duration.ofMillis(800)).build())
              .build());

      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  private static void execute(OkHttpClient client, Timeline timeline, Request request) {
    long start = System.nanoTime();
    try (Response response = client.newCall(request).execute()) {
      timeline.print(
          "caller got HTTP " + response.code() + " \"" + response.body().string() + "\"");
    } catch (IOException e) {
      timeline.print("caller got " + e);
    }
    timeline.print(String.format("elapsed %d ms", (System.nanoTime() - start) / 1_000_000));
  }
}
