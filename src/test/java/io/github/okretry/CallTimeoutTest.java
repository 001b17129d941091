package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15.1: {@code call.timeout()} of a {@link RetryingCallFactory} call (initially the client's
 * {@code callTimeout}) bounds the whole logical call, on both paths, even when an attempt's peer
 * trickles its response headers a byte every 200 ms, so that no shrunk read timeout ever fires.
 * Real time: each case takes about 2 s; the band allows a loaded machine.
 */
@Tag("slow")
@ExtendWith(LeakCheck.class)
class CallTimeoutTest {

  static final long LIMIT_MS = 2_000;
  static final boolean PRINT = Boolean.getBoolean("okretry.printTables");

  /** {@code call.timeout()} of 2 s, no client callTimeout, a peer trickling from the start. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "enqueue"})
  void callTimeoutBoundsAnAttemptWhosePeerTricklesItsHeaders(String path) throws Exception {
    try (RawServer server = new RawServer(RawServer.trickle(200))) {
      OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build());
      try (RetryingCallFactory calls = RetryingCallFactory.create(client, RetryInterceptor.create())) {
        Call call = calls.newCall(new Request.Builder().url(server.url()).build());
        call.timeout().timeout(LIMIT_MS, TimeUnit.MILLISECONDS);
        assertEndsAtTheLimit(path, call, "call.timeout() 2 s, trickling peer");
      }
    }
  }

  /** The same limit set as {@code call.timeout().deadline(…)}, which OkHttp's own calls honor too. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "enqueue"})
  void aDeadlineOnTheCallsTimeoutCountsToo(String path) throws Exception {
    try (RawServer server = new RawServer(RawServer.trickle(200))) {
      OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build());
      try (RetryingCallFactory calls = RetryingCallFactory.create(client, RetryInterceptor.create())) {
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
    String unavailable = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    try (RawServer server = new RawServer(RawServer.after(1_500, unavailable), RawServer.trickle(200))) {
      OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder()
          .callTimeout(Duration.ofMillis(LIMIT_MS))
          .readTimeout(Duration.ofSeconds(10))
          .build());
      RetryInterceptor retry = RetryInterceptor.builder()
          .baseDelay(Duration.ofMillis(1)).jitter(Jitter.NONE) // retry at once: the time left is small
          .build();
      try (RetryingCallFactory calls = RetryingCallFactory.create(client, retry)) {
        Call call = calls.newCall(new Request.Builder().url(server.url()).build());
        assertEndsAtTheLimit(path, call, "client callTimeout 2 s, 503 at 1.5 s, then a trickling peer");
      }
      assertThat(server.connections()).as("the retry reached the trickling peer").isEqualTo(2);
    }
  }

  static void assertEndsAtTheLimit(String path, Call call, String scenario) throws Exception {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    long start = System.nanoTime();
    if (path.equals("enqueue")) {
      call.enqueue(new Callback() {
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
      Thread caller = new Thread(() -> {
        try (Response response = call.execute()) {
          outcome.complete(response);
        } catch (IOException e) {
          outcome.complete(e);
        }
      }, "execute");
      caller.start();
    }
    Object result;
    try {
      result = outcome.get(LIMIT_MS + 3_000, TimeUnit.MILLISECONDS);
    } finally {
      call.cancel(); // ends an attempt that ran past the limit, so nothing is left behind
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    if (PRINT) System.out.printf("%s, %s: ended after %d ms%n", path, scenario, ms);
    assertThat(result).isInstanceOf(InterruptedIOException.class);
    assertThat(ms).as("ended after (ms)").isBetween(LIMIT_MS - 100, LIMIT_MS + 600);
  }
}
