package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A retry does not go back over the connection that failed it ({@link ConnectionCheck}), on a real
 * MockWebServer and both drivers: HTTP/1.1 closes the failed connection, HTTP/2 moves the policy's
 * requests to a new one; a server that says when to come back keeps it, and so does a policy that
 * turns it off. MockWebServer numbers the connections it accepted.
 */
@Tag("integration")
@Tag("slow")
@ExtendWith(LeakCheck.class)
class FailedConnectionTest {

  /** Three calls: the first fails once with {@code failure}, then every call succeeds. */
  private static List<Integer> connections(
      String driver, String protocol, MockResponse failure, boolean avoid) throws Exception {
    List<Protocol> protocols =
        protocol.equals("h2") ? List.of(Protocol.H2_PRIOR_KNOWLEDGE) : List.of(Protocol.HTTP_1_1);
    List<Integer> connections = new ArrayList<>();
    try (MockWebServer server = new MockWebServer()) {
      server.setProtocols(protocols);
      server.enqueue(failure);
      for (int i = 0; i < 3; i++) server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      RetryPolicy policy =
          RetryPolicy.builder()
              .baseDelay(Duration.ofMillis(1))
              .avoidFailedConnections(avoid)
              .build();
      OkHttpClient base =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .protocols(protocols)
                  .readTimeout(Duration.ofSeconds(5))
                  .build());
      try (Calls calls = Calls.of(driver, base, policy)) {
        for (int i = 0; i < 3; i++) {
          try (Response r = calls.execute(new Request.Builder().url(server.url("/")).build())) {
            assertThat(r.code()).isEqualTo(200);
            assertThat(r.body().string()).isEqualTo("ok");
          }
        }
      }
      for (int i = 0; i < 4; i++) connections.add(server.takeRequest().getConnectionIndex());
    }
    return connections;
  }

  /** The calls of one driver over {@code base}, closed after. */
  interface Calls extends AutoCloseable {
    Response execute(Request request) throws IOException;

    @Override
    void close();

    static Calls of(String driver, OkHttpClient base, RetryPolicy policy) {
      if (driver.equals("interceptor")) {
        OkHttpClient client =
            base.newBuilder().addInterceptor(RetryInterceptor.create(policy)).build();
        return new Calls() {
          @Override
          public Response execute(Request request) throws IOException {
            return client.newCall(request).execute();
          }

          @Override
          public void close() {}
        };
      }
      RetryingCallFactory factory = RetryingCallFactory.create(base, policy);
      return new Calls() {
        @Override
        public Response execute(Request request) throws IOException {
          return new RetryOutcomeIntegrationTest.EnqueuedCall(factory.newCall(request)).execute();
        }

        @Override
        public void close() {
          factory.close();
        }
      };
    }
  }

  private static MockResponse sick(String body) {
    return new MockResponse.Builder().code(503).body(body).build();
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"interceptor, http/1.1", "factory, http/1.1", "interceptor, h2", "factory, h2"})
  void aRetryAfterA503GoesOverANewConnectionAndTheCallsAfterItStayThere(
      String driver, String protocol) throws Exception {
    List<Integer> c = connections(driver, protocol, sick("sick replica"), true);
    assertThat(c.get(3)).as("the calls after it").isNotEqualTo(c.get(0)).isEqualTo(c.get(2));
    if (driver.equals("interceptor") && protocol.equals("h2")) {
      // OkHttp keeps an HTTP/2 call's connection for all its requests while it is healthy: the
      // interceptor's retries, requests of that one OkHttp call, stay on it (the calls after move)
      assertThat(c.get(1)).as("the retry").isEqualTo(c.get(0));
    } else {
      assertThat(c.get(1)).as("the retry").isNotEqualTo(c.get(0)).isEqualTo(c.get(2));
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"interceptor", "factory"})
  void anEmptyBodied503ClosesItsHttp1ConnectionToo(String driver) throws Exception {
    List<Integer> c = connections(driver, "http/1.1", sick(""), true);
    assertThat(c.get(1)).isNotEqualTo(c.get(0));
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"interceptor, http/1.1", "factory, http/1.1", "interceptor, h2", "factory, h2"})
  void aServerThatSaysWhenToComeBackKeepsTheConnection(String driver, String protocol)
      throws Exception {
    MockResponse paced = new MockResponse.Builder().code(503).setHeader("Retry-After", "0").build();
    List<Integer> c = connections(driver, protocol, paced, true);
    assertThat(c).containsOnly(c.get(0));
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"interceptor, http/1.1", "factory, http/1.1", "interceptor, h2", "factory, h2"})
  void turnedOffEveryAttemptTakesThePooledConnection(String driver, String protocol)
      throws Exception {
    List<Integer> c = connections(driver, protocol, sick("sick replica"), false);
    assertThat(c).containsOnly(c.get(0));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"interceptor", "factory"})
  void aFailureTheCallerGetsStillHasItsBody(String driver) throws IOException {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(sick("the replica is sick"));
      server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      RetryPolicy policy = RetryPolicy.builder().maxRetries(0).build();
      OkHttpClient base = LeakCheck.track(new OkHttpClient.Builder().build());
      try (Calls calls = Calls.of(driver, base, policy)) {
        Request request = new Request.Builder().url(server.url("/")).build();
        try (Response r = calls.execute(request)) {
          assertThat(r.code()).isEqualTo(503);
          assertThat(r.body().string()).isEqualTo("the replica is sick");
        }
        try (Response r = calls.execute(request)) {
          assertThat(r.body().string()).isEqualTo("ok");
        }
      }
    }
  }

  /**
   * A name with two addresses, a sick replica on one and a healthy one on the other (two servers on
   * one port of 127.0.0.1 and 127.0.0.2): after the first failure, new connections go to the
   * address that has not failed, where OkHttp's own order would reach the sick one first again.
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"interceptor, http/1.1", "factory, http/1.1", "interceptor, h2", "factory, h2"})
  void aNameWithSeveralAddressesGetsNewConnectionsToOneThatHasNotFailed(
      String driver, String protocol) throws Exception {
    List<Protocol> protocols =
        protocol.equals("h2") ? List.of(Protocol.H2_PRIOR_KNOWLEDGE) : List.of(Protocol.HTTP_1_1);
    java.net.InetAddress first = java.net.InetAddress.getByName("127.0.0.1");
    java.net.InetAddress second = java.net.InetAddress.getByName("127.0.0.2");
    try (MockWebServer sick = new MockWebServer();
        MockWebServer healthy = new MockWebServer()) {
      sick.setProtocols(protocols);
      healthy.setProtocols(protocols);
      sick.setDispatcher(
          new mockwebserver3.Dispatcher() {
            @Override
            public MockResponse dispatch(mockwebserver3.RecordedRequest request) {
              return sick("sick replica");
            }
          });
      healthy.setDispatcher(
          new mockwebserver3.Dispatcher() {
            @Override
            public MockResponse dispatch(mockwebserver3.RecordedRequest request) {
              return new MockResponse.Builder().body("ok").build();
            }
          });
      sick.start(first, 0);
      healthy.start(second, sick.getPort());
      OkHttpClient base =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .protocols(protocols)
                  .dns(host -> List.of(first, second)) // the sick replica first, every time
                  .build());
      RetryPolicy policy = RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).build();
      int through = 0;
      try (Calls calls = Calls.of(driver, base, policy)) {
        for (int i = 0; i < 5; i++) {
          Request request =
              new Request.Builder().url("http://replicas.test:" + sick.getPort() + "/").build();
          try (Response r = calls.execute(request)) {
            if (r.code() == 200) through++;
          }
        }
      }
      if (driver.equals("interceptor") && protocol.equals("h2")) {
        // The first call's retries stay on its HTTP/2 connection (OkHttp's); the calls after move
        assertThat(through).isEqualTo(4);
      } else {
        assertThat(through).isEqualTo(5);
        assertThat(sick.getRequestCount()).as("the sick replica, asked once").isEqualTo(1);
      }
      assertThat(healthy.getRequestCount()).isGreaterThanOrEqualTo(4);
    }
  }
}
