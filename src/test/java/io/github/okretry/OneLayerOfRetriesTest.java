package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One layer of retries: how okretry coexists with OkHttp's own hidden retries, below every
 * application interceptor. OkHttp's follow-ups (a 408, a 503 with {@code Retry-After: 0}) and its
 * silent resend on a stale pooled connection stay on for safe requests, are reported as extra
 * network requests, and are turned off for a request okretry must not repeat; a {@code Retry-After}
 * OkHttp cannot parse cannot crash a call; okretry refuses to run as a network interceptor.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class OneLayerOfRetriesTest {
  MockWebServer server;
  final List<String> network = new CopyOnWriteArrayList<>();
  final RetryListener listener =
      new RetryListener() {
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

  @Nested
  class OkHttpFollowUps {
    @Test
    void okHttpsOwnRetryOfA503WithRetryAfterZeroIsReportedAsANetworkRequest() throws Exception {
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      OkHttpClient client =
          RetryInterceptor.create(RetryPolicy.builder().listener(listener).build())
              .install(new OkHttpClient.Builder())
              .build();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
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
      OkHttpClient client =
          RetryInterceptor.create(RetryPolicy.builder().listener(listener).build())
              .install(new OkHttpClient.Builder())
              .build();
      Request post =
          new Request.Builder()
              .url(server.url("/pay"))
              .post(RequestBody.create("{}", MediaType.get("application/json")))
              .tag(IdempotencyKey.class, IdempotencyKey.none())
              .build();
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
      OkHttpClient client =
          RetryInterceptor.create(RetryPolicy.builder().listener(listener).build())
              .install(new OkHttpClient.Builder())
              .build();
      Request post =
          new Request.Builder()
              .url(server.url("/pay"))
              .post(RequestBody.create("{}", MediaType.get("application/json")))
              .tag(IdempotencyKey.class, IdempotencyKey.none())
              .build();
      try (Response r = client.newCall(post).execute()) {
        assertThat(r.code()).isEqualTo(408);
      }
      assertThat(server.takeRequest(5, TimeUnit.SECONDS)).isNotNull();
      assertThat(server.takeRequest(300, TimeUnit.MILLISECONDS))
          .as("OkHttp did not resend the POST")
          .isNull();
      assertThat(network).containsExactly("1.1");
      close(client);
    }

    @Test
    void withoutOkretryOkHttpWouldResendThatPost() throws Exception {
      // The baseline the test above guards against: plain OkHttp repeats a POST after a 408.
      server.enqueue(new MockResponse.Builder().code(408).build());
      server.enqueue(new MockResponse.Builder().body("duplicate").build());
      OkHttpClient plain = new OkHttpClient();
      Request post =
          new Request.Builder()
              .url(server.url("/pay"))
              .post(RequestBody.create("{}", MediaType.get("application/json")))
              .build();
      try (Response r = plain.newCall(post).execute()) {
        assertThat(r.body().string()).isEqualTo("duplicate");
      }
      assertThat(server.getRequestCount()).isEqualTo(2);
      close(plain);
    }
  }

  @Nested
  class StaleConnections {
    @Test
    void okHttpsSilentRetryOfAStaleConnectionIsCountedForASafeRequest() throws Exception {
      server.enqueue(new MockResponse.Builder().body("warm").build());
      server.enqueue(
          new MockResponse.Builder()
              .onResponseStart(mockwebserver3.SocketEffect.ShutdownConnection.INSTANCE)
              .build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      OkHttpClient client =
          RetryInterceptor.create(
                  RetryPolicy.builder().listener(listener).baseDelay(Duration.ofMillis(1)).build())
              .install(new OkHttpClient.Builder())
              .build();
      client.newCall(new Request.Builder().url(server.url("/warm")).build()).execute().close();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
        assertThat(r.body().string()).isEqualTo("ok");
      }
      Diagnostics.println("GET over a pooled connection that dropped: network requests " + network);
      // warm-up; then okretry's attempt 1, which OkHttp sent twice because the pooled connection
      // dropped (safe: GET is idempotent), and the listener saw both
      assertThat(network).containsExactly("1.1", "1.1", "1.2");
      assertThat(server.getRequestCount()).isEqualTo(3);
      close(client);
    }

    @Test
    void aPostWithoutKeyIsNotResentWhenTheResponseIsLost() throws Exception {
      // The server processes the POST and drops the connection: OkHttp's own
      // retryOnConnectionFailure
      // would resend it silently; okretry turns that off for this attempt.
      server.enqueue(new MockResponse.Builder().body("warm-up").build());
      server.enqueue(
          new MockResponse.Builder()
              .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)
              .build());
      server.enqueue(new MockResponse.Builder().body("duplicate").build());
      OkHttpClient c =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .readTimeout(Duration.ofSeconds(5))
                  .addInterceptor(
                      RetryInterceptor.create(
                          RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).build()))
                  .build());
      c.newCall(new Request.Builder().url(server.url("/warm")).build())
          .execute()
          .close(); // pools a connection
      Request request =
          new Request.Builder()
              .url(server.url("/pay"))
              .post(RequestBody.create("{}", MediaType.get("application/json")))
              .tag(IdempotencyKey.class, IdempotencyKey.none())
              .build();
      assertThatThrownBy(() -> c.newCall(request).execute()).isInstanceOf(IOException.class);
      for (int i = 1; i <= 2; i++) {
        assertThat(server.takeRequest(10, TimeUnit.SECONDS)).as("request %d", i).isNotNull();
      }
      assertThat(server.takeRequest(300, TimeUnit.MILLISECONDS)).as("no request 3").isNull();
    }
  }

  /**
   * OkHttp's hidden retry, the one the fault matrix avoids with fresh connections: a request sent
   * on a <em>reused</em> pooled connection that drops before answering is resent by OkHttp itself
   * ({@code retryOnConnectionFailure}). The control client (plain OkHttp) shows it duplicating a
   * keyless POST; okretry must turn that off for exactly the requests it may not repeat, and leave
   * it on for the rest.
   *
   * <p>Each case: a warm-up GET opens the connection; the next request, on that same connection,
   * meets the fault; every later request gets 200. Arrivals count the warm-up too.
   */
  @Nested
  @Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
  class PooledConnections {
    static final List<String> PRINTED = new ArrayList<>();

    @AfterAll
    static void print() {
      Diagnostics.println(
          "Pooled connection (warm-up GET, then the request on the reused connection):");
      PRINTED.forEach(Diagnostics::println);
    }

    @ParameterizedTest(name = "{0} {1}: arrivals={2} caller={3}")
    @CsvSource({
      // client,   method,       arrivals, caller — arrivals include the warm-up GET
      "plain,      GET,          3, 200",
      "plain,      POST_NO_KEY,  3, 200", // OkHttp resends a POST the server may have processed
      "okretry,    GET,          3, 200",
      "okretry,    POST_KEY,     3, 200",
      "okretry,    POST_NO_KEY,  2, IOException", // okretry forbids the resend: sent once, error
    })
    void droppedAfterTheRequestWasSent(String client, String method, int arrivals, String caller)
        throws Exception {
      run(
          client,
          method,
          SocketEffect.ShutdownConnection.INSTANCE,
          arrivals,
          caller,
          "response-start drop");
    }

    /**
     * The server closes the idle pooled connection before the next request. OkHttp reads a pooled
     * socket for health only after 10 s idle, so it reuses the dead one and the write or the read
     * fails; the server never saw the request. Plain OkHttp resends it (safely here, but it cannot
     * know that). okretry resends a GET, but for a keyless POST the request headers had been
     * written, which does not prove the server ignored it, so it is not repeated: the price of
     * never duplicating is an IOException the caller must handle (or a key, which makes it
     * retryable).
     */
    @ParameterizedTest(name = "{0} {1} after idle close: arrivals={2} caller={3}")
    @CsvSource({
      "plain,   POST_NO_KEY, 2, 200",
      "okretry, GET,         2, 200",
      "okretry, POST_KEY,    2, 200",
      "okretry, POST_NO_KEY, 1, IOException",
    })
    void idleConnectionClosedByTheServer(String client, String method, int arrivals, String caller)
        throws Exception {
      run(client, method, null, arrivals, caller, "idle close");
    }

    static void run(
        String clientKind,
        String method,
        SocketEffect atResponseStart,
        int arrivals,
        String caller,
        String fault)
        throws Exception {
      try (MockWebServer server = new MockWebServer()) {
        MockResponse.Builder warmUp = new MockResponse.Builder().body("warm");
        if (atResponseStart == null) {
          warmUp.onResponseEnd(new SocketEffect.CloseSocket(true, false, false));
        }
        server.enqueue(warmUp.build());
        if (atResponseStart != null) {
          server.enqueue(
              new MockResponse.Builder().body("x").onResponseStart(atResponseStart).build());
        }
        for (int i = 0; i < 4; i++) server.enqueue(new MockResponse.Builder().body("ok").build());
        server.start();
        OkHttpClient.Builder b = new OkHttpClient.Builder();
        if (clientKind.equals("okretry")) {
          b.addInterceptor(
              RetryInterceptor.create(RetryPolicy.builder().timeSource(new FakeTime()).build()));
        }
        OkHttpClient client = LeakCheck.track(b.build());
        try (Response r =
            client.newCall(new Request.Builder().url(server.url("/warm")).build()).execute()) {
          assertThat(r.body().string()).isEqualTo("warm");
        }
        if (atResponseStart == null) TimeUnit.MILLISECONDS.sleep(100); // let the FIN arrive
        else assertThat(client.connectionPool().idleConnectionCount()).isEqualTo(1);

        Request.Builder rb = new Request.Builder().url(server.url("/pay"));
        RequestBody body = RequestBody.create("{}", MediaType.get("application/json"));
        switch (method) {
          case "GET" -> rb.get();
          case "POST_KEY" -> rb.post(body).tag(IdempotencyKey.class, IdempotencyKey.of("k-1"));
          default -> rb.post(body).tag(IdempotencyKey.class, IdempotencyKey.none());
        }
        String got;
        try (Response r = client.newCall(rb.build()).execute()) {
          got = r.code() + (r.body().string().equals("ok") ? "" : " unexpected body");
        } catch (IOException e) {
          got = "IOException";
        }
        String line =
            String.format(
                "  %-26s %-8s %-12s arrivals=%d caller=%s",
                fault, clientKind, method, server.getRequestCount(), got);
        PRINTED.add(line);
        assertThat(server.getRequestCount()).as(line).isEqualTo(arrivals);
        assertThat(got).as(line).isEqualTo(caller);
      }
    }
  }

  /**
   * install() adds {@link RetryAfterGuard}, which saturates a numeric Retry-After OkHttp 5.5.1
   * would throw on.
   */
  @Nested
  class RetryAfterGuards {
    @Test
    void aRetryAfterBeyondIntCrashesPlainOkHttpButNotAnInstalledOkretry() throws Exception {
      String hostile = "99999999999";
      server.enqueue(
          new MockResponse.Builder().code(503).addHeader("Retry-After", hostile).build());
      OkHttpClient plain = new OkHttpClient();
      assertThatThrownBy(
              () -> plain.newCall(new Request.Builder().url(server.url("/")).build()).execute())
          .isInstanceOf(NumberFormatException.class);
      close(plain);

      server.enqueue(
          new MockResponse.Builder().code(503).addHeader("Retry-After", hostile).build());
      List<GiveUpReason> reasons = new CopyOnWriteArrayList<>();
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .listener(
                      new RetryListener() {
                        @Override
                        public void onGaveUp(
                            Request request,
                            int attempts,
                            GiveUpReason reason,
                            String lastFailure) {
                          reasons.add(reason);
                        }
                      })
                  .build());
      OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
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
      assertThat(RetryAfterGuard.overflowsInt("00000000002147483648")).isTrue();
      assertThat(RetryAfterGuard.overflowsInt("10000000000")).isTrue();
      assertThat(RetryAfterGuard.overflowsInt("0000000000")).isFalse();
      assertThat(RetryAfterGuard.overflowsInt("99999999999999999999999")).isTrue();
      assertThat(RetryAfterGuard.overflowsInt("120")).isFalse();
      assertThat(RetryAfterGuard.overflowsInt("Wed, 21 Oct 2015 07:28:00 GMT")).isFalse();
      assertThat(RetryAfterGuard.overflowsInt(" 99999999999"))
          .isFalse(); // OkHttp's \\d+ does not match it either
    }
  }

  @Nested
  class Installing {
    @Test
    void rejectedAsANetworkInterceptor() {
      server.enqueue(new MockResponse.Builder().build());
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder().addNetworkInterceptor(RetryInterceptor.create()).build());
      assertThatThrownBy(
              () -> client.newCall(new Request.Builder().url(server.url("/")).build()).execute())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("addInterceptor");
    }
  }
}
