package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.okretry.RetryOutcome.Processing;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ServerSocketFactory;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 43, item 1, on real sockets, both drivers: a proof that the server did not process a
 * request is about the request okretry sent. An attempt is one OkHttp call, which may put several
 * requests on the wire: a 503 that answers the GET OkHttp followed a POST's 303 with proves nothing
 * about the POST, and neither does a failure to connect after OkHttp recovered from a failure that
 * had written the POST. A 307 re-sends the same POST: a 503 to that one still proves it.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class ProofOfNotProcessingIntegrationTest {
  MockWebServer server;
  RetryingCallFactory factory;
  final AtomicInteger posts = new AtomicInteger();

  // One per test, so no test meets another's budget: a port the system gives out again is the same
  // origin to a shared budget, which a 1 ms backoff makes "down" 14 ms after its failures began.
  final RetryPolicy policy = RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).build();

  @BeforeEach
  void start() {
    server = new MockWebServer();
  }

  @AfterEach
  void stop() {
    if (factory != null) factory.close();
    server.close();
  }

  /** The blocking driver, or the async one's enqueue(), over {@code base}. */
  RetryOutcomeIntegrationTest.Exec calls(String driver, OkHttpClient base) {
    if (driver.equals("blocking")) {
      OkHttpClient client = RetryInterceptor.create(policy).install(base.newBuilder()).build();
      return request -> client.newCall(request).execute();
    }
    factory = RetryingCallFactory.create(base, policy);
    return request ->
        new RetryOutcomeIntegrationTest.EnqueuedCall(factory.newCall(request)).execute();
  }

  RetryOutcomeIntegrationTest.Exec calls(String driver) {
    return calls(driver, LeakCheck.track(new OkHttpClient.Builder().build()));
  }

  Request post(String path, IdempotencyKey key) {
    return new Request.Builder()
        .url(server.url(path))
        .post(RequestBody.create("{\"order\":1}", MediaType.get("application/json")))
        .tag(IdempotencyKey.class, key)
        .build();
  }

  /** Answers a POST to {@code /order} with {@code redirect}, and what follows it with a 503. */
  void redirectingTo503(int redirect) throws IOException {
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if (request.getUrl().encodedPath().equals("/order")) {
              posts.incrementAndGet();
              return new MockResponse.Builder()
                  .code(redirect)
                  .addHeader("Location", "/order/1")
                  .build();
            }
            return new MockResponse.Builder().code(503).body("busy").build();
          }
        });
    server.start();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aKeylessPostIsNotSentAgainWhenTheGetItsSeeOtherLedToAnswers503(String driver)
      throws IOException {
    redirectingTo503(303);
    try (Response response = calls(driver).execute(post("/order", IdempotencyKey.none()))) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(response.code()).isEqualTo(503);
      assertThat(response.request().method()).isEqualTo("GET");
      assertThat(posts.get()).as("orders placed").isEqualTo(1);
      assertThat(server.getRequestCount()).as("the POST and the GET it led to").isEqualTo(2);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT);
      assertThat(outcome.processing()).as(outcome.toString()).isEqualTo(Processing.PROCESSED);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aKeyedPostRedirectedTo503SaysItWasProcessed(String driver) throws IOException {
    redirectingTo503(303);
    try (Response response = calls(driver).execute(post("/order", IdempotencyKey.generate()))) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(response.code()).isEqualTo(503);
      assertThat(posts.get()).as("keyed: repeated, de-duplicated by its key").isEqualTo(4);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
      assertThat(outcome.processing()).as(outcome.toString()).isEqualTo(Processing.PROCESSED);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void a503ToThePostA307ResentStillProvesItWasNotProcessed(String driver) throws IOException {
    redirectingTo503(307); // OkHttp re-sends the same POST, body and all, to /order/1
    try (Response response = calls(driver).execute(post("/order", IdempotencyKey.none()))) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(response.code()).isEqualTo(503);
      assertThat(response.request().method()).isEqualTo("POST");
      assertThat(posts.get()).as("every attempt refused: retried").isEqualTo(4);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
      assertThat(outcome.processing()).as(outcome.toString()).isEqualTo(Processing.NOT_PROCESSED);
    }
  }

  /**
   * A keyed POST on a pooled connection reaches a server that reads it and dies: OkHttp sees the
   * connection end, recovers by itself (the POST is keyed, so its own retries are on) and meets a
   * refused port. The {@code ConnectException} it throws says nothing of the POST it had written.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aKeyedPostThatAServerReadAndDiedOnMayHaveBeenProcessed(String driver) throws IOException {
    ServerSocket[] listening = new ServerSocket[1];
    server.setServerSocketFactory(
        new ServerSocketFactory() {
          @Override
          public ServerSocket createServerSocket() throws IOException {
            return listening[0] = new ServerSocket();
          }

          @Override
          public ServerSocket createServerSocket(int port) {
            throw new UnsupportedOperationException();
          }

          @Override
          public ServerSocket createServerSocket(int port, int backlog) {
            throw new UnsupportedOperationException();
          }

          @Override
          public ServerSocket createServerSocket(int port, int backlog, InetAddress address) {
            throw new UnsupportedOperationException();
          }
        });
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if (!request.getMethod().equals("POST")) return new MockResponse.Builder().build();
            posts.incrementAndGet();
            try {
              listening[0].close(); // the server dies: from now on its port refuses
            } catch (IOException e) {
              throw new AssertionError(e);
            }
            return new MockResponse.Builder()
                .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)
                .build();
          }
        });
    server.start();
    RetryOutcomeIntegrationTest.Exec calls = calls(driver);
    // A first call leaves its connection in the pool, for the POST.
    calls.execute(new Request.Builder().url(server.url("/")).build()).close();

    ConnectException e =
        catchThrowableOfType(
            ConnectException.class,
            () -> calls.execute(post("/order", IdempotencyKey.of("order-1"))));
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(posts.get()).as("the POST reached the server once").isEqualTo(1);
    assertThat(outcome.attempts()).isEqualTo(4);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(outcome.processing()).as(outcome.toString()).isEqualTo(Processing.MAYBE);
  }
}
