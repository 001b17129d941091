package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Connection;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.internal.connection.RealConnection;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HTTP/2 (h2 prior knowledge, so no TLS) with real sockets: a stream reset by the server is retried
 * when its code proves the request was not processed ({@link StreamResets}), and a keyless POST
 * that a GOAWAY stopped before its headers were written is retried on a new connection ({@link
 * Goaway}).
 */
@Tag("integration")
@Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class Http2Test {

  /**
   * HTTP/2 stream resets (h2 prior knowledge, so no TLS): the server resets the request's stream
   * with an error code. RFC 9113 §8.7: REFUSED_STREAM means "the stream was closed before any
   * processing", so any request may be repeated; other codes (CANCEL, INTERNAL_ERROR) prove
   * nothing.
   */
  @Nested
  class StreamResets {

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
      "REFUSED_STREAM, POST_NO_KEY, 2, 200", // refused before any processing: safe even without a
      // key
      "INTERNAL_ERROR, GET,         2, 200",
      "INTERNAL_ERROR, POST_NO_KEY, 1, IOException",
      // GOAWAY once the request is read (MockWebServer's ShutdownConnection on HTTP/2) names this
      // stream as accepted, then no answer comes: a read timeout, which proves nothing for the
      // keyless POST.
      "GOAWAY,         GET,         2, 200",
      "GOAWAY,         POST_NO_KEY, 1, IOException",
    })
    void streamReset(String code, String method, int arrivals, String caller) throws Exception {
      run(code, method, arrivals, caller);
    }

    static String run(String code, String method, int arrivals, String caller) throws Exception {
      int errorCode = code.equals("REFUSED_STREAM") ? REFUSED_STREAM : INTERNAL_ERROR;
      SocketEffect effect =
          code.equals("GOAWAY")
              ? SocketEffect.ShutdownConnection.INSTANCE
              : new SocketEffect.CloseStream(errorCode);
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
        OkHttpClient client =
            LeakCheck.track(
                new OkHttpClient.Builder()
                    .protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE))
                    .retryOnConnectionFailure(false) // okretry's decision alone
                    .readTimeout(java.time.Duration.ofMillis(300))
                    .addInterceptor(
                        RetryInterceptor.create(
                            RetryPolicy.builder().timeSource(new FakeTime()).build()))
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
      String line =
          String.format(
              "  %-15s %-12s arrivals=%d caller=%s", code, method, server.getRequestCount(), got);
      PRINTED.add(line);
      assertThat(server.getRequestCount()).as(line).isEqualTo(arrivals);
      assertThat(got).as(line).isEqualTo(caller);
      return got;
    }
  }

  /**
   * Issue 14.3: a request whose headers were never completely written cannot have been processed.
   * The race a server's GOAWAY opens, made deterministic: a keyless POST takes a pooled HTTP/2
   * connection (held there by an event listener), the server answers another call on it and sends
   * GOAWAY, the client reads the GOAWAY, and only then does the POST try to open its stream: OkHttp
   * throws {@code ConnectionShutdownException} before writing a byte. okretry must retry it on a
   * new connection, so the server sees the POST exactly once and the caller gets the answer.
   *
   * <p>The tests (not okretry) look inside OkHttp only to know when the client has read the GOAWAY
   * ({@link RealConnection#isHealthy}) and to build the exception OkHttp throws.
   */
  @Nested
  class Goaway {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"execute", "enqueue"})
    void aKeylessPostThatGoawayStoppedBeforeItsHeadersWereWrittenIsRetried(String path)
        throws Exception {
      CountDownLatch firstArrived = new CountDownLatch(1);
      CountDownLatch postHoldsTheConnection = new CountDownLatch(1);
      AtomicInteger posts = new AtomicInteger();
      try (MockWebServer server = new MockWebServer()) {
        server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
        server.setDispatcher(
            new Dispatcher() {
              volatile boolean firstAnswered;

              /**
               * On HTTP/2, MockWebServer takes a stream's socket effects from peek(), made as the
               * stream opens.
               */
              @Override
              public MockResponse peek() {
                // Until /first is answered: answer, then GOAWAY (the connection takes no new
                // stream).
                return firstAnswered
                    ? new MockResponse.Builder().build()
                    : new MockResponse.Builder()
                        .onResponseEnd(SocketEffect.ShutdownConnection.INSTANCE)
                        .build();
              }

              @Override
              public MockResponse dispatch(RecordedRequest request) {
                if (request.getUrl().encodedPath().equals("/first")) {
                  firstArrived.countDown();
                  await(postHoldsTheConnection);
                  firstAnswered = true;
                  return new MockResponse.Builder().body("first").build();
                }
                posts.incrementAndGet();
                return new MockResponse.Builder().body("paid").build();
              }
            });
        server.start();

        OkHttpClient base =
            LeakCheck.track(
                new OkHttpClient.Builder().protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE)).build());
        RetryInterceptor retry =
            RetryInterceptor.create(RetryPolicy.builder().baseDelay(Duration.ofMillis(10)).build());

        // 1. A call that opens the HTTP/2 connection and keeps a stream on it until released.
        CompletableFuture<String> first = new CompletableFuture<>();
        base.newCall(new Request.Builder().url(server.url("/first")).build())
            .enqueue(
                new Callback() {
                  @Override
                  public void onFailure(Call call, IOException e) {
                    first.completeExceptionally(e);
                  }

                  @Override
                  public void onResponse(Call call, Response response) throws IOException {
                    try (response) {
                      first.complete(response.body().string());
                    }
                  }
                });
        assertThat(firstArrived.await(5, TimeUnit.SECONDS)).isTrue();

        // 2. The keyless POST takes that connection, then waits there until the client has read
        //    the GOAWAY, so its stream is opened on a connection already shut down.
        EventListener holdUntilGoaway =
            new EventListener() {
              final AtomicBoolean once = new AtomicBoolean();

              @Override
              public void connectionAcquired(Call call, Connection connection) {
                if (!once.compareAndSet(false, true)) return; // only the first attempt
                postHoldsTheConnection.countDown();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (((RealConnection) connection).isHealthy(false) && System.nanoTime() < end) {
                  sleepMillis(5);
                }
              }
            };
        Request post =
            new Request.Builder()
                .url(server.url("/pay"))
                .post(RequestBody.create("{\"amount\":42}", MediaType.get("application/json")))
                .tag(IdempotencyKey.class, IdempotencyKey.none())
                .build();

        Object outcome;
        if (path.equals("execute")) {
          Call call = retry.install(base.newBuilder()).build().newCall(post);
          call.addEventListener(holdUntilGoaway);
          outcome = outcomeOf(call::execute);
        } else {
          try (RetryingCallFactory calls = RetryingCallFactory.create(base, retry.policy())) {
            Call call = calls.newCall(post);
            call.addEventListener(holdUntilGoaway);
            CompletableFuture<Object> result = new CompletableFuture<>();
            call.enqueue(
                new Callback() {
                  @Override
                  public void onFailure(Call c, IOException e) {
                    result.complete(e);
                  }

                  @Override
                  public void onResponse(Call c, Response response) throws IOException {
                    try (response) {
                      result.complete(response.body().string());
                    }
                  }
                });
            outcome = result.get(10, TimeUnit.SECONDS);
          }
        }

        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(outcome).as("the POST's outcome").isEqualTo("paid");
        assertThat(posts.get()).as("POSTs the server received").isEqualTo(1);
      }
    }

    /**
     * The other shape the same race takes (seen against nginx): the stream was opened just before
     * the GOAWAY, OkHttp's writer closes while the body is written, and OkHttp throws {@code
     * IOException("closed")} with the stream's {@code REFUSED_STREAM} attached as suppressed. The
     * headers were written, so only the refusal proves the POST was not processed. Simulated by a
     * network interceptor that throws that exception after a real exchange.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"keyless POST", "GET"})
    void aFailureCarryingARefusedStreamAsSuppressedIsRetried(String what) throws Exception {
      try (MockWebServer server = new MockWebServer()) {
        server.start();
        AtomicInteger exchanges = new AtomicInteger();
        OkHttpClient client =
            LeakCheck.track(
                RetryInterceptor.create(RetryPolicy.builder().timeSource(new FakeTime()).build())
                    .install(new OkHttpClient.Builder())
                    .addNetworkInterceptor(
                        chain -> {
                          Response response = chain.proceed(chain.request());
                          if (exchanges.incrementAndGet() > 1) return response;
                          response.close();
                          IOException closed = new IOException("closed");
                          closed.addSuppressed(new StreamResetException(ErrorCode.REFUSED_STREAM));
                          throw closed;
                        })
                    .build());
        server.enqueue(new MockResponse.Builder().body("lost").build());
        server.enqueue(new MockResponse.Builder().body("ok").build());
        Request.Builder request = new Request.Builder().url(server.url("/"));
        if (what.equals("keyless POST")) {
          request
              .post(RequestBody.create("{}", MediaType.get("application/json")))
              .tag(IdempotencyKey.class, IdempotencyKey.none());
        }
        assertThat(outcomeOf(client.newCall(request.build())::execute)).isEqualTo("ok");
        assertThat(exchanges.get()).isEqualTo(2);
      }
    }

    interface Execution {
      Response execute() throws IOException;
    }

    static Object outcomeOf(Execution execution) {
      try (Response response = execution.execute()) {
        return response.body().string();
      } catch (IOException e) {
        return e;
      }
    }

    static void await(CountDownLatch latch) {
      try {
        latch.await(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    static void sleepMillis(long millis) {
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
