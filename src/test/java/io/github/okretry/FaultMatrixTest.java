package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The decision table: every MockWebServer failure mode × method → whether okretry retries, how many
 * requests reach the server, and what the caller gets. {@link #TABLE} is the table; each row is one
 * case, run against a fresh server and a fresh client (so no pooled connection is reused), and the
 * whole table is printed with the observed values.
 *
 * <p>The first attempt meets the fault; every later one gets {@code 200 ok}. So "retried" shows as
 * 2 arrivals and a 200, "not retried" as 1 arrival and the failure.
 *
 * <p>OkHttp's own {@code retryOnConnectionFailure} can add attempts underneath the interceptor. The
 * table is run twice: with it off, every count is exact; with OkHttp's default (on), the counts of
 * the keyless POST must still be exact (okretry turns it off for a request it must not repeat),
 * while for safe requests OkHttp may recover a fault itself, so okretry sees 1 attempt instead of 2
 * (the server still sees 2 arrivals and the caller still gets 200).
 */
@Tag("integration")
@Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class FaultMatrixTest {

  static final int MAX_RETRIES = 3;
  static final Duration READ_TIMEOUT = Duration.ofMillis(200);

  enum Method {
    GET,
    PUT,
    POST_WITH_KEY,
    POST_NO_KEY;

    Request request(HttpUrl url) {
      RequestBody body = RequestBody.create("{\"amount\":1}", MediaType.get("application/json"));
      Request.Builder b = new Request.Builder().url(url);
      return switch (this) {
        case GET -> b.get().build();
        case PUT -> b.put(body).build();
        case POST_WITH_KEY -> b.post(body).build(); // okretry generates the key
        case POST_NO_KEY -> b.post(body).tag(IdempotencyKey.class, IdempotencyKey.none()).build();
      };
    }

    boolean safe() {
      return this != POST_NO_KEY;
    }
  }

  /** When the fault strikes, which decides what a keyless POST may do. */
  enum Phase {
    NONE, // no fault, or one that does not touch this request
    OKHTTP_FOLLOW_UP, // a status OkHttp's own follow-up logic may repeat below okretry
    NOT_PROCESSED, // 429/503 or no connection: proven unprocessed, anything may be repeated
    BEFORE_RESPONSE, // request (maybe) sent, no response: only safe requests are repeated
    IN_BODY, // the response was already handed to the caller: too late for any retry
    /**
     * The server stalls while reading the request body, and never finishes reading it.
     * MockWebServer looks at the head of its queue for request-phase effects before it takes the
     * response off, so every new connection meets the same stall: a safe request is retried until
     * exhausted, and every attempt arrives, but none complete.
     */
    STICKY_BEFORE_RESPONSE
  }

  enum Fault {
    NONE(Phase.NONE, b -> b),
    HTTP_503(Phase.NOT_PROCESSED, b -> b.code(503)),
    HTTP_429(Phase.NOT_PROCESSED, b -> b.code(429)),
    // Not retried by okretry by default; OkHttp itself repeats a 408 once when its
    // retryOnConnectionFailure is on, and a 503 with "Retry-After: 0" always (see
    // expectedWithOkHttpRetry).
    HTTP_408(Phase.OKHTTP_FOLLOW_UP, b -> b.code(408)),
    HTTP_503_RETRY_AFTER_0(Phase.OKHTTP_FOLLOW_UP, b -> b.code(503).addHeader("Retry-After", "0")),
    CONNECTION_REFUSED(Phase.NOT_PROCESSED, b -> b),
    // Graceful on HTTP/1: the server answers this request and closes afterwards.
    REQUEST_START_SHUTDOWN(
        Phase.NONE, b -> b.onRequestStart(SocketEffect.ShutdownConnection.INSTANCE)),
    REQUEST_START_CLOSE_SOCKET(
        Phase.BEFORE_RESPONSE,
        b -> b.onRequestStart(new SocketEffect.CloseSocket(true, false, false))),
    REQUEST_START_STALL(Phase.BEFORE_RESPONSE, b -> b.onRequestStart(SocketEffect.Stall.INSTANCE)),
    REQUEST_BODY_SHUTDOWN(
        Phase.BEFORE_RESPONSE, b -> b.onRequestBody(SocketEffect.ShutdownConnection.INSTANCE)),
    REQUEST_BODY_CLOSE_SOCKET(
        Phase.BEFORE_RESPONSE,
        b -> b.onRequestBody(new SocketEffect.CloseSocket(true, false, false))),
    REQUEST_BODY_STALL(
        Phase.STICKY_BEFORE_RESPONSE, b -> b.onRequestBody(SocketEffect.Stall.INSTANCE)),
    RESPONSE_START_SHUTDOWN(
        Phase.BEFORE_RESPONSE, b -> b.onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)),
    RESPONSE_START_CLOSE_SOCKET(
        Phase.BEFORE_RESPONSE,
        b -> b.onResponseStart(new SocketEffect.CloseSocket(true, false, false))),
    RESPONSE_START_SHUTDOWN_OUTPUT(
        Phase.BEFORE_RESPONSE,
        b -> b.onResponseStart(new SocketEffect.CloseSocket(false, false, true))),
    RESPONSE_START_STALL(
        Phase.BEFORE_RESPONSE, b -> b.onResponseStart(SocketEffect.Stall.INSTANCE)),
    HEADERS_DELAY_PAST_READ_TIMEOUT(
        Phase.BEFORE_RESPONSE,
        b -> b.headersDelay(READ_TIMEOUT.toMillis() * 3, TimeUnit.MILLISECONDS)),
    RESPONSE_BODY_SHUTDOWN(
        Phase.IN_BODY, b -> b.onResponseBody(SocketEffect.ShutdownConnection.INSTANCE)),
    RESPONSE_BODY_CLOSE_SOCKET(
        Phase.IN_BODY, b -> b.onResponseBody(new SocketEffect.CloseSocket(true, false, false))),
    RESPONSE_BODY_STALL(Phase.IN_BODY, b -> b.onResponseBody(SocketEffect.Stall.INSTANCE)),
    // MockWebServer throttles the request body too: for PUT and POST the read stalls before the
    // response.
    THROTTLE_BODY_PAST_READ_TIMEOUT(
        Phase.IN_BODY, b -> b.throttleBody(1, READ_TIMEOUT.toMillis() * 3, TimeUnit.MILLISECONDS));

    final Phase phase;
    final Function<MockResponse.Builder, MockResponse.Builder> effect;

    Fault(Phase phase, Function<MockResponse.Builder, MockResponse.Builder> effect) {
      this.phase = phase;
      this.effect = effect;
    }
  }

  /** What the caller ends up with. */
  enum Result {
    OK, // 200 and the body "ok"
    ERROR_STATUS, // the fault's own status code, returned to the caller
    IO_EXCEPTION, // execute() threw
    BODY_FAILS // 200, but reading the body threw
  }

  /**
   * One row of the decision table.
   *
   * @param retried whether okretry scheduled a retry
   * @param attempts attempts okretry made (including the first)
   * @param arrivals requests the server saw
   */
  record Row(
      Fault fault, Method method, boolean retried, int attempts, int arrivals, Result caller) {
    @Override
    public String toString() {
      return String.format(
          "%-32s %-13s retried=%-5s attempts=%d arrivals=%d caller=%s",
          fault, method, retried, attempts, arrivals, caller);
    }
  }

  /** The semantics, written out: this is the table the test checks and prints. */
  static final List<Row> TABLE = new ArrayList<>();

  static {
    for (Fault f : Fault.values()) {
      for (Method m : Method.values()) {
        Phase phase = f.phase;
        if (m == Method.GET && f.name().startsWith("REQUEST_BODY")) {
          phase = Phase.NONE; // no body, no effect
        }
        if (m != Method.GET && f == Fault.THROTTLE_BODY_PAST_READ_TIMEOUT) {
          phase = Phase.STICKY_BEFORE_RESPONSE;
        }
        TABLE.add(
            switch (phase) {
              case NONE -> new Row(f, m, false, 1, 1, Result.OK);
              case OKHTTP_FOLLOW_UP ->
                  f == Fault.HTTP_408
                      ? new Row(f, m, false, 1, 1, Result.ERROR_STATUS) // retry off: returned as is
                      : new Row(
                          f, m, false, 1, 2,
                          Result.OK); // OkHttp repeats 503 + Retry-After: 0 regardless
              case NOT_PROCESSED ->
                  f == Fault.CONNECTION_REFUSED
                      ? new Row(
                          f,
                          m,
                          true,
                          MAX_RETRIES + 1,
                          0,
                          Result.IO_EXCEPTION) // retried until exhausted
                      : new Row(f, m, true, 2, 2, Result.OK);
              case BEFORE_RESPONSE ->
                  m.safe()
                      ? new Row(f, m, true, 2, 2, Result.OK)
                      : new Row(f, m, false, 1, 1, Result.IO_EXCEPTION);
              case IN_BODY -> new Row(f, m, false, 1, 1, Result.BODY_FAILS);
              // Each attempt's request is cut off mid-body: it reached the server, incomplete.
              case STICKY_BEFORE_RESPONSE ->
                  m.safe()
                      ? new Row(f, m, true, MAX_RETRIES + 1, MAX_RETRIES + 1, Result.IO_EXCEPTION)
                      : new Row(f, m, false, 1, 1, Result.IO_EXCEPTION);
            });
      }
    }
  }

  static final List<String> PRINTED = new ArrayList<>();

  static Stream<Row> table() {
    return TABLE.stream();
  }

  @AfterAll
  static void printTable() {
    Diagnostics.println(
        "Fault matrix (expected == observed, okhttp retryOnConnectionFailure off | on):");
    PRINTED.forEach(Diagnostics::println);
    Diagnostics.println(TABLE.size() + " rows x 2 OkHttp settings = " + PRINTED.size() + " cases");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void okhttpRetryOff(Row expected) throws Exception {
    Row got = run(expected.fault(), expected.method(), false);
    PRINTED.add("off | " + got);
    assertThat(got).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void okhttpRetryOn(Row expected) throws Exception {
    Row got = run(expected.fault(), expected.method(), true);
    PRINTED.add("on  | " + got);
    if (expected.fault() == Fault.HTTP_408) {
      assertThat(got).isEqualTo(expectedWithOkHttpRetry(expected));
    } else if (!expected.method().safe() || !expected.retried() || expected.arrivals() != 2) {
      assertThat(got).isEqualTo(expected);
    } else {
      // OkHttp may have recovered the fault itself on a second connection, below okretry.
      assertThat(got.arrivals()).isEqualTo(expected.arrivals());
      assertThat(got.caller()).isEqualTo(expected.caller());
      assertThat(got.attempts()).isBetween(1, expected.attempts());
    }
  }

  /**
   * With OkHttp's retryOnConnectionFailure on, OkHttp repeats a 408 once by itself (RFC 9110: the
   * server did not receive the whole request). okretry turns the flag off for the keyless POST,
   * which then gets the 408 like with the flag off; a 408 proves the request was not processed, so
   * either would be safe.
   */
  static Row expectedWithOkHttpRetry(Row off) {
    return off.method().safe() ? new Row(off.fault(), off.method(), false, 1, 2, Result.OK) : off;
  }

  static Row run(Fault fault, Method method, boolean okhttpRetry) throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    AtomicInteger retries = new AtomicInteger();
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                // Real, short, fixed waits rather than FakeTime: MockWebServer takes a
                // request-phase
                // fault off its queue a moment after the client sees the failure, and a retry sent
                // sooner than that can meet the same fault again.
                .baseDelay(Duration.ofMillis(20))
                .maxDelay(Duration.ofMillis(20))
                .jitter(Jitter.NONE)
                .maxRetries(MAX_RETRIES)
                .listener(
                    new RetryListener() {
                      @Override
                      public void onAttemptStarted(Request request, int attempt) {
                        attempts.incrementAndGet();
                      }

                      @Override
                      public void onRetryScheduled(
                          Request request, int attempt, String reason, long delayNanos) {
                        retries.incrementAndGet();
                      }
                    })
                .build());
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(retry)
                .retryOnConnectionFailure(okhttpRetry)
                .readTimeout(READ_TIMEOUT)
                .writeTimeout(READ_TIMEOUT)
                .connectTimeout(READ_TIMEOUT)
                .build());
    MockWebServer server = new MockWebServer();
    Result result;
    try (server;
        RefusingPort refusing = fault == Fault.CONNECTION_REFUSED ? new RefusingPort() : null) {
      HttpUrl url;
      if (refusing != null) {
        url = HttpUrl.get("http://127.0.0.1:" + refusing.port() + "/");
      } else {
        server.enqueue(fault.effect.apply(new MockResponse.Builder().body("ok")).build());
        for (int i = 0; i < MAX_RETRIES + 2; i++) {
          server.enqueue(new MockResponse.Builder().body("ok").build());
        }
        server.start();
        url = server.url("/");
      }
      try (Response response = client.newCall(method.request(url)).execute()) {
        try {
          String body = response.body().string();
          result =
              response.code() == 200 && body.equals("ok")
                  ? Result.OK
                  : response.code() != 200 ? Result.ERROR_STATUS : null;
          assertThat(result)
              .as("%s %s: got %d %s", fault, method, response.code(), body)
              .isNotNull();
        } catch (IOException e) {
          result = Result.BODY_FAILS;
        }
      } catch (IOException e) {
        result = Result.IO_EXCEPTION;
      }
    }
    // Counted after close(), which waits for the server's connection handlers: a request cut off
    // mid-body is recorded by its handler a moment after the client has already failed.
    int arrivals = fault == Fault.CONNECTION_REFUSED ? 0 : server.getRequestCount();
    return new Row(fault, method, retries.get() > 0, attempts.get(), arrivals, result);
  }
}
