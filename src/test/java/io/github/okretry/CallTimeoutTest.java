package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * OkHttp's call timeout as a deadline, with real sockets and real time: a {@code Retry-After} that
 * fits the client's {@code callTimeout} is waited out, one that does not is returned at once; and
 * (issue 15.1, {@link TricklingPeer}) {@code call.timeout()} of a {@link RetryingCallFactory} call
 * bounds the whole logical call on both paths, even when a peer trickles its response headers so
 * that no shrunk read timeout ever fires. On fake time: {@link DeadlineTest}.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class CallTimeoutTest {

  static final long LIMIT_MS = 2_000;

  @Test
  void aWaitThatFitsTheCallTimeoutIsTaken() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build());
      server.enqueue(new MockResponse.Builder().body("too late").build());
      server.start();
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .callTimeout(Duration.ofMillis(1500))
                  .addInterceptor(RetryInterceptor.create(RetryPolicy.builder().build()))
                  .build());
      // Retry-After 1 s fits the 1.5 s call timeout, so the wait starts and the retry lands in
      // time.
      long start = System.nanoTime();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
        assertThat(r.body().string()).isEqualTo("too late");
      }
      assertThat((System.nanoTime() - start) / 1_000_000).isBetween(900L, 1_600L);
    }
  }

  @Test
  void aRetryAfterLongerThanTheCallTimeoutReturnsTheResponseAtOnce() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "5").build());
      server.start();
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .callTimeout(Duration.ofSeconds(2))
                  .addInterceptor(RetryInterceptor.create(RetryPolicy.builder().build()))
                  .build());
      long start = System.nanoTime();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
        assertThat(r.code()).isEqualTo(503);
      }
      assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_000L);
      assertThat(server.takeRequest(10, TimeUnit.SECONDS)).as("request 1").isNotNull();
      assertThat(server.takeRequest(300, TimeUnit.MILLISECONDS)).as("no request 2").isNull();
    }
  }

  /** Each case takes about 2 s; the band allows a loaded machine. */
  @Nested
  @Tag("slow") // real time: in mvn test, but left out of mutation testing
  class TricklingPeer {
    /** {@code call.timeout()} of 2 s, no client callTimeout, a peer trickling from the start. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"execute", "enqueue"})
    void callTimeoutBoundsAnAttemptWhosePeerTricklesItsHeaders(String path) throws Exception {
      try (RawServer server = new RawServer(RawServer.trickle(200))) {
        OkHttpClient client =
            LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build());
        try (RetryingCallFactory calls =
            RetryingCallFactory.create(client, RetryPolicy.builder().build())) {
          Call call = calls.newCall(new Request.Builder().url(server.url()).build());
          call.timeout().timeout(LIMIT_MS, TimeUnit.MILLISECONDS);
          assertEndsAtTheLimit(path, call, "call.timeout() 2 s, trickling peer");
        }
      }
    }

    /**
     * The same limit set as {@code call.timeout().deadline(…)}, which OkHttp's own calls honor too.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"execute", "enqueue"})
    void aDeadlineOnTheCallsTimeoutCountsToo(String path) throws Exception {
      try (RawServer server = new RawServer(RawServer.trickle(200))) {
        OkHttpClient client =
            LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build());
        try (RetryingCallFactory calls =
            RetryingCallFactory.create(client, RetryPolicy.builder().build())) {
          Call call = calls.newCall(new Request.Builder().url(server.url()).build());
          call.timeout().deadline(LIMIT_MS, TimeUnit.MILLISECONDS);
          assertEndsAtTheLimit(path, call, "call.timeout().deadline() 2 s, trickling peer");
        }
      }
    }

    /**
     * Client {@code callTimeout} of 2 s; the first attempt gets a 503 after 1.5 s, the retry a
     * trickling peer. The retry must get the 0.5 s left, not a fresh 2 s.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"execute", "enqueue"})
    void theClientsCallTimeoutBoundsTheRetryAsWellAsTheFirstAttempt(String path) throws Exception {
      String unavailable =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      try (RawServer server =
          new RawServer(RawServer.after(1_500, unavailable), RawServer.trickle(200))) {
        OkHttpClient client =
            LeakCheck.track(
                new OkHttpClient.Builder()
                    .callTimeout(Duration.ofMillis(LIMIT_MS))
                    .readTimeout(Duration.ofSeconds(10))
                    .build());
        RetryPolicy policy =
            RetryPolicy.builder()
                .baseDelay(Duration.ofMillis(1))
                .jitter(Jitter.NONE) // retry at once: the time left is small
                .build();
        try (RetryingCallFactory calls = RetryingCallFactory.create(client, policy)) {
          Call call = calls.newCall(new Request.Builder().url(server.url()).build());
          assertEndsAtTheLimit(
              path, call, "client callTimeout 2 s, 503 at 1.5 s, then a trickling peer");
        }
        assertThat(server.connections()).as("the retry reached the trickling peer").isEqualTo(2);
      }
    }
  }

  static void assertEndsAtTheLimit(String path, Call call, String scenario) throws Exception {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    long start = System.nanoTime();
    if (path.equals("enqueue")) {
      call.enqueue(
          new Callback() {
            @Override
            public void onFailure(Call c, IOException e) {
              outcome.complete(e);
            }

            @Override
            public void onResponse(Call c, Response response) {
              response.close();
              outcome.complete(response);
            }
          });
    } else {
      Thread caller =
          new Thread(
              () -> {
                try (Response response = call.execute()) {
                  outcome.complete(response);
                } catch (IOException e) {
                  outcome.complete(e);
                }
              },
              "execute");
      caller.start();
    }
    Object result;
    try {
      result = outcome.get(LIMIT_MS + 3_000, TimeUnit.MILLISECONDS);
    } finally {
      call.cancel(); // ends an attempt that ran past the limit, so nothing is left behind
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    Diagnostics.printf("%s, %s: ended after %d ms%n", path, scenario, ms);
    assertThat(result).isInstanceOf(InterruptedIOException.class);
    assertThat(ms).as("ended after (ms)").isBetween(LIMIT_MS - 100, LIMIT_MS + 600);
  }
}
