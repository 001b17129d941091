package io.github.okretry.examples;

import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * {@link RetryMetrics} on a {@link SimpleMeterRegistry}: ten healthy calls (the retry budget starts
 * full, so their deposits find no room), then four calls fail in four ways (two 503s, a read
 * timeout, a server that stays down, a {@code Retry-After} too long to wait), and the meters show
 * attempts, retries by reason, give-ups by reason and the budget's tokens.
 */
public final class MicrometerExample {
  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      Map<String, Queue<MockResponse>> script = new ConcurrentHashMap<>();
      script.put("/flaky", queue(status(503), status(503)));
      script.put(
          "/slow",
          queue(
              new MockResponse.Builder()
                  .headersDelay(500, TimeUnit.MILLISECONDS)
                  .body("late")
                  .build()));
      script.put("/down", queue(status(503), status(503), status(503), status(503)));
      script.put(
          "/busy",
          queue(new MockResponse.Builder().code(429).addHeader("Retry-After", "120").build()));
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              MockResponse next =
                  script
                      .getOrDefault(request.getUrl().encodedPath(), new ConcurrentLinkedQueue<>())
                      .poll();
              return next != null ? next : new MockResponse.Builder().body("ok").build();
            }
          });
      server.start();

      MeterRegistry registry = new SimpleMeterRegistry();
      RetryBudget budget = RetryBudget.builder().build();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .maxRetries(3)
                  .baseDelay(Duration.ofMillis(50))
                  .retryBudget(budget)
                  .listener(new RetryMetrics(registry, budget, Tags.of("client", "orders")))
                  .build());
      OkHttpClient client =
          retry.install(new OkHttpClient.Builder()).readTimeout(Duration.ofMillis(200)).build();

      for (int i = 0; i < 10; i++) call(client, server, "/healthy");
      System.out.printf(
          "after 10 healthy calls: okretry.budget.tokens = %.1f (a new budget starts full; a"
              + " first-attempt success adds 0.2 while there is room)%n",
          budget.availableTokens());
      for (String path : List.of("/flaky", "/slow", "/down", "/busy")) call(client, server, path);

      System.out.println("meters:");
      for (String line : describe(registry)) System.out.println("  " + line);
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  private static void call(OkHttpClient client, MockWebServer server, String path) {
    try (Response response =
        client.newCall(new Request.Builder().url(server.url(path)).build()).execute()) {
      if (!path.equals("/healthy")) {
        System.out.println("GET " + path + " -> HTTP " + response.code());
      }
    } catch (IOException e) {
      System.out.println("GET " + path + " -> " + e);
    }
  }

  /** Each meter as {@code name{tags} value}, sorted, as a dashboard would show the totals. */
  static List<String> describe(MeterRegistry registry) {
    List<String> lines = new ArrayList<>();
    for (Meter meter : registry.getMeters()) {
      String tags =
          meter.getId().getTags().stream()
              .map(t -> t.getKey() + "=" + t.getValue())
              .collect(Collectors.joining(",", "{", "}"));
      double value = meter.measure().iterator().next().getValue();
      String shown =
          meter instanceof Gauge ? String.format("%.1f", value) : Long.toString((long) value);
      lines.add(meter.getId().getName() + tags + " " + shown);
    }
    lines.sort(null);
    return lines;
  }

  private static MockResponse status(int code) {
    return new MockResponse.Builder().code(code).build();
  }

  private static Queue<MockResponse> queue(MockResponse... responses) {
    return new ConcurrentLinkedQueue<>(List.of(responses));
  }
}
