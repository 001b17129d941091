package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * OkHttp's hidden retry, the one the fault matrix avoids with fresh connections: a request sent on
 * a <em>reused</em> pooled connection that drops before answering is resent by OkHttp itself
 * ({@code retryOnConnectionFailure}), below every application interceptor. The control client
 * (plain OkHttp) shows it duplicating a keyless POST; okretry must turn that off for exactly the
 * requests it may not repeat, and leave it on for the rest.
 *
 * <p>Each case: a warm-up GET opens the connection; the next request, on that same connection,
 * meets the fault; every later request gets 200. Arrivals count the warm-up too.
 */
@Tag("slow")
@ExtendWith(LeakCheck.class)
class ReliabilityPooledConnectionTest {

  static final List<String> PRINTED = new ArrayList<>();

  @AfterAll
  static void print() {
    Diagnostics.println("Pooled connection (warm-up GET, then the request on the reused connection):");
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
  void droppedAfterTheRequestWasSent(String client, String method, int arrivals, String caller) throws Exception {
    run(client, method, SocketEffect.ShutdownConnection.INSTANCE, arrivals, caller, "response-start drop");
  }

  /**
   * The server closes the idle pooled connection before the next request. OkHttp reads a pooled
   * socket for health only after 10 s idle, so it reuses the dead one and the write or the read
   * fails; the server never saw the request. Plain OkHttp resends it (safely here, but it cannot
   * know that). okretry resends a GET, but for a keyless POST the request headers had been
   * written, which does not prove the server ignored it, so it is not repeated: the price of never
   * duplicating is an IOException the caller must handle (or a key, which makes it retryable).
   */
  @ParameterizedTest(name = "{0} {1} after idle close: arrivals={2} caller={3}")
  @CsvSource({
    "plain,   POST_NO_KEY, 2, 200",
    "okretry, GET,         2, 200",
    "okretry, POST_KEY,    2, 200",
    "okretry, POST_NO_KEY, 1, IOException",
  })
  void idleConnectionClosedByTheServer(String client, String method, int arrivals, String caller) throws Exception {
    run(client, method, null, arrivals, caller, "idle close");
  }

  static void run(String clientKind, String method, SocketEffect atResponseStart, int arrivals, String caller, String fault)
      throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      MockResponse.Builder warmUp = new MockResponse.Builder().body("warm");
      if (atResponseStart == null) warmUp.onResponseEnd(new SocketEffect.CloseSocket(true, false, false));
      server.enqueue(warmUp.build());
      if (atResponseStart != null) server.enqueue(new MockResponse.Builder().body("x").onResponseStart(atResponseStart).build());
      for (int i = 0; i < 4; i++) server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      OkHttpClient.Builder b = new OkHttpClient.Builder();
      if (clientKind.equals("okretry")) b.addInterceptor(RetryInterceptor.builder().timeSource(new FakeTime()).build());
      OkHttpClient client = LeakCheck.track(b.build());
      try (Response r = client.newCall(new Request.Builder().url(server.url("/warm")).build()).execute()) {
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
      String line = String.format("  %-26s %-8s %-12s arrivals=%d caller=%s", fault, clientKind, method, server.getRequestCount(), got);
      PRINTED.add(line);
      assertThat(server.getRequestCount()).as(line).isEqualTo(arrivals);
      assertThat(got).as(line).isEqualTo(caller);
    }
  }
}
