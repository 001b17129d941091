package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * HTTP/2 stream resets (h2 prior knowledge, so no TLS): the server resets the request's stream
 * with an error code. RFC 9113 §8.7: REFUSED_STREAM means "the stream was closed before any
 * processing", so any request may be repeated; other codes (CANCEL, INTERNAL_ERROR) prove nothing.
 */
@Tag("slow")
@ExtendWith(LeakCheck.class)
class ReliabilityHttp2Test {

  static final int REFUSED_STREAM = 0x7;
  static final int INTERNAL_ERROR = 0x2;
  static final List<String> PRINTED = new ArrayList<>();

  @AfterAll
  static void print() {
    Diagnostics.println("HTTP/2 stream resets:");
    PRINTED.forEach(Diagnostics::println);
  }

  @ParameterizedTest(name = "{0} {1}: arrivals={2} caller={3}")
  @CsvSource({
    "REFUSED_STREAM, GET,         2, 200",
    "REFUSED_STREAM, POST_KEY,    2, 200",
    "REFUSED_STREAM, POST_NO_KEY, 2, 200", // refused before any processing: safe even without a key
    "INTERNAL_ERROR, GET,         2, 200",
    "INTERNAL_ERROR, POST_NO_KEY, 1, IOException",
    // GOAWAY once the request is read (MockWebServer's ShutdownConnection on HTTP/2) names this
    // stream as accepted, then no answer comes: a read timeout, which proves nothing for the keyless POST.
    "GOAWAY,         GET,         2, 200",
    "GOAWAY,         POST_NO_KEY, 1, IOException",
  })
  void streamReset(String code, String method, int arrivals, String caller) throws Exception {
    run(code, method, arrivals, caller);
  }

  static String run(String code, String method, int arrivals, String caller) throws Exception {
    int errorCode = code.equals("REFUSED_STREAM") ? REFUSED_STREAM : INTERNAL_ERROR;
    SocketEffect effect = code.equals("GOAWAY") ? SocketEffect.ShutdownConnection.INSTANCE : new SocketEffect.CloseStream(errorCode);
    MockWebServer server = new MockWebServer();
    server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    // At response start, not request start: MockWebServer applies a request-start effect from
    // peek() and dequeues the response only afterwards, so a retry arriving in between on a new
    // stream saw the same effect again (3 arrivals in ~1 % of runs).
    server.enqueue(new MockResponse.Builder().body("x").onResponseStart(effect).build());
    for (int i = 0; i < 4; i++) server.enqueue(new MockResponse.Builder().body("ok").build());
    String got;
    try (server) {
      server.start();
      OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder()
          .protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE))
          .retryOnConnectionFailure(false) // okretry's decision alone
          .readTimeout(java.time.Duration.ofMillis(300))
          .addInterceptor(RetryInterceptor.builder().timeSource(new FakeTime()).build())
          .build());
      Request.Builder rb = new Request.Builder().url(server.url("/"));
      RequestBody body = RequestBody.create("{}", MediaType.get("application/json"));
      switch (method) {
        case "GET" -> rb.get();
        case "POST_KEY" -> rb.post(body);
        default -> rb.post(body).tag(IdempotencyKey.class, IdempotencyKey.none());
      }
      try (Response r = client.newCall(rb.build()).execute()) {
        got = String.valueOf(r.code());
        r.body().string();
      } catch (IOException e) {
        got = "IOException";
        PRINTED.add("    (" + e + ")");
      }
    }
    String line = String.format("  %-15s %-12s arrivals=%d caller=%s", code, method, server.getRequestCount(), got);
    PRINTED.add(line);
    assertThat(server.getRequestCount()).as(line).isEqualTo(arrivals);
    assertThat(got).as(line).isEqualTo(caller);
    return got;
  }
}
