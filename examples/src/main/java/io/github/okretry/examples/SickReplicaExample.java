package io.github.okretry.examples;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Two replicas behind a round-robin L4 (TCP) balancer (issue 44): one sick, answering 503 to
 * everything, one healthy. The balancer balances connections, not requests, and the sick replica
 * gets the first one. OkHttp pools that connection, so a retry that goes back over it reaches the
 * same sick replica, and the healthy one is never asked: so it goes with {@code
 * avoidFailedConnections(false)}. By default a retry never goes back over the connection that
 * failed: the failed one is closed, the retry's new connection reaches the healthy replica, and the
 * calls after it find that one pooled. Twenty GETs, one after another, each way.
 */
public final class SickReplicaExample {
  static final int CALLS = 20;

  /** Answers every request with {@code response}, counting requests and connections. */
  static final class Replica extends Dispatcher {
    final AtomicInteger requests = new AtomicInteger();
    final Set<Integer> connections = ConcurrentHashMap.newKeySet();
    private final MockResponse response;

    Replica(MockResponse response) {
      this.response = response;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      requests.incrementAndGet();
      connections.add(request.getConnectionIndex());
      return response;
    }
  }

  public static void main(String[] args) throws Exception {
    System.out.printf(
        "Two replicas behind a round-robin TCP balancer: sick (503 to everything) gets the first"
            + " connection, healthy the second.%n"
            + "%d GETs one after another, okretry with every default but baseDelay(20 ms):%n",
        CALLS);
    System.out.println(
        "--- before: avoidFailedConnections(false), every retry over the pooled connection");
    run(false);
    System.out.println(
        "--- after: the default, a retry never goes back over the connection that failed");
    run(true);
  }

  private static void run(boolean avoidFailedConnections) throws Exception {
    Replica sick = new Replica(new MockResponse.Builder().code(503).build());
    Replica healthy = new Replica(new MockResponse.Builder().body("ok").build());
    try (MockWebServer sickServer = new MockWebServer();
        MockWebServer healthyServer = new MockWebServer()) {
      sickServer.setDispatcher(sick);
      healthyServer.setDispatcher(healthy);
      sickServer.start();
      healthyServer.start();
      // Round robin, the sick replica first: where the first connection lands decides the rest.
      try (TcpBalancer balancer =
          TcpBalancer.start(sickServer.getPort(), healthyServer.getPort())) {
        RetryPolicy policy =
            RetryPolicy.builder()
                .baseDelay(Duration.ofMillis(20))
                .avoidFailedConnections(avoidFailedConnections)
                .build();
        OkHttpClient client =
            RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
        Request request =
            new Request.Builder().url("http://127.0.0.1:" + balancer.port() + "/").build();
        int through = 0;
        for (int i = 0; i < CALLS; i++) {
          try (Response response = client.newCall(request).execute()) {
            if (response.isSuccessful()) through++;
          } catch (IOException e) {
            // not through
          }
        }
        int requests = sick.requests.get() + healthy.requests.get();
        System.out.printf("  through: %d of %d calls%n", through, CALLS);
        System.out.printf(
            "  requests: %d (sick %d, healthy %d): %.2f per call%n",
            requests, sick.requests.get(), healthy.requests.get(), requests / (double) CALLS);
        System.out.printf(
            "  connections: sick %d, healthy %d%n",
            sick.connections.size(), healthy.connections.size());
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }
}
