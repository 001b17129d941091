package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * With hedging, a leg whose 5xx is dropped (another leg still in flight) leaves its HTTP/1
 * connection too, so the call's retry does not take that failed connection from the pool.
 */
@Tag("integration")
class HedgedConnectionTest {

  MockWebServer server;
  RetryingCallFactory factory;
  final List<String> seen = new CopyOnWriteArrayList<>();
  volatile int sick = -1;
  volatile long t0 = System.nanoTime();

  long now() {
    return (System.nanoTime() - t0) / 1_000_000;
  }

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    AtomicInteger n = new AtomicInteger();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if (request.getUrl().encodedPath().equals("/warm")) {
              return new MockResponse.Builder().body("warm").build();
            }
            int i = n.getAndIncrement();
            int c = request.getConnectionIndex();
            if (i == 0) sick = c;
            seen.add("req " + i + " conn " + c + " at " + now());
            if (c == sick) { // the sick replica's connection: fails every request
              return new MockResponse.Builder()
                  .code(503)
                  .headersDelay(i == 0 ? 500 : 0, TimeUnit.MILLISECONDS)
                  .build();
            }
            if (i == 1) { // the hedge fails too, after the first leg
              return new MockResponse.Builder()
                  .code(503)
                  .headersDelay(1000, TimeUnit.MILLISECONDS)
                  .build();
            }
            return new MockResponse.Builder().body("ok").build();
          }
        });
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    if (factory != null) factory.close();
    server.close();
  }

  @Test
  void noAttemptAfterAFailureOnAConnectionGoesBackOverIt() throws Exception {
    OkHttpClient client = new OkHttpClient.Builder().build();
    OkHttpClient warm = client.newBuilder().build();
    Request w = new Request.Builder().url(server.url("/warm")).build();
    try (Response r1 = warm.newCall(w).execute();
        Response r2 = warm.newCall(w).execute()) {
      r1.body().string();
      r2.body().string();
    }
    RetryPolicy policy =
        RetryPolicy.builder()
            .baseDelay(Duration.ofMillis(5))
            .maxRetries(3)
            .listener(
                new RetryListener() {
                  @Override
                  public void onAttemptStarted(Request request, int attempt) {
                    seen.add("attempt " + attempt + " at " + now());
                  }

                  @Override
                  public void onHedgeStarted(Request request, int attempt, long afterNanos) {
                    seen.add("hedge " + attempt + " at " + now());
                  }

                  @Override
                  public void onRetryScheduled(
                      Request request, int attempt, String reason, long delayNanos) {
                    seen.add("retry after " + attempt + " at " + now());
                  }
                })
            .build();
    factory =
        RetryingCallFactory.create(
            client, policy, HedgingPolicy.after(100, TimeUnit.MILLISECONDS).maxHedges(1));
    try (Response r = factory.newCall(w).execute()) { // the origin answered once: hedges go
      r.body().string();
    }
    t0 = System.nanoTime();
    Request request = new Request.Builder().url(server.url("/x")).build();
    try (Response r = factory.newCall(request).execute()) {
      System.out.println("REVIEW " + seen + " -> " + r.code());
    }
    assertThat(seen).anyMatch(e -> e.startsWith("hedge"));
    List<String> requests = seen.stream().filter(e -> e.startsWith("req ")).toList();
    for (String e : requests.subList(1, requests.size())) {
      assertThat(e)
          .as("after the 503 on connection %s: %s", sick, seen)
          .doesNotContain("conn " + sick + " ");
    }
  }
}
