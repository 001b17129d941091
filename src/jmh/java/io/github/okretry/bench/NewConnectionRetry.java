package io.github.okretry.bench;

import com.sun.management.ThreadMXBean;
import io.github.okretry.Jitter;
import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.SocketFactory;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;

/**
 * Issue 44: what a retry over a new connection costs. Against a loopback MockWebServer that answers
 * every other request {@code 503} (no {@code Retry-After}) and the rest {@code 200}, each GET fails
 * once and succeeds on its retry (1 ns wait, no jitter, no budget). With {@code
 * avoidFailedConnections(true)} (the default) the retry opens a new connection: HTTP/1 closes the
 * failed one, HTTP/2 moves the origin to a new route; with {@code false} it goes back over the
 * pooled one. The difference is the price of the new connection (TCP, and the TLS handshake where
 * there is one) per retry. For scale, bare OkHttp's GET against the same server answering {@code
 * 200} only.
 *
 * <p>Per variant and round: mean wall time per call, the calling thread's allocation per call
 * ({@code ThreadMXBean.getThreadAllocatedBytes}: it leaves out the in-process server, OkHttp's
 * HTTP/2 reader thread and the TCP connect that OkHttp 5's fast fallback makes on a task thread,
 * not the TLS handshake, which runs on the calling thread), and connections the server accepted per
 * call. TCP_NODELAY on both ends. Arguments: {@code [calls per measurement] [rounds]
 * [transports…]}, default 2000, 3 and all of {@code h1 tls-h1 h2c tls-h2}.
 */
public final class NewConnectionRetry {

  private static final HeldCertificate SERVER_CERT =
      new HeldCertificate.Builder()
          .addSubjectAlternativeName("127.0.0.1")
          .addSubjectAlternativeName("localhost")
          .ecdsa256()
          .build();

  public static void main(String[] args) throws Exception {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    List<String> transports =
        args.length > 2
            ? Arrays.asList(args).subList(2, args.length)
            : List.of("h1", "tls-h1", "h2c", "tls-h2");
    System.out.println(
        "| transport | variant | µs/call, per round | mean | calling thread B/call, per round"
            + " | mean | connections/call |");
    System.out.println("|---|---|---|---:|---|---:|---:|");
    for (String transport : transports) run(transport, calls, rounds);
  }

  private static void run(String transport, int calls, int rounds) throws Exception {
    HandshakeCertificates server =
        new HandshakeCertificates.Builder().heldCertificate(SERVER_CERT).build();
    HandshakeCertificates client =
        new HandshakeCertificates.Builder()
            .addTrustedCertificate(SERVER_CERT.certificate())
            .build();
    AlternatingDispatcher dispatcher = new AlternatingDispatcher();
    try (MockWebServer mock = new MockWebServer()) {
      mock.setDispatcher(dispatcher);
      mock.setServerSocketFactory(new NoDelayServerSocketFactory()); // else ~40 ms of Nagle
      List<Protocol> protocols;
      switch (transport) {
        case "h1":
          protocols = List.of(Protocol.HTTP_1_1);
          break;
        case "tls-h1":
          mock.useHttps(server.sslSocketFactory());
          protocols = List.of(Protocol.HTTP_1_1);
          break;
        case "h2c":
          protocols = List.of(Protocol.H2_PRIOR_KNOWLEDGE);
          break;
        case "tls-h2":
          mock.useHttps(server.sslSocketFactory());
          protocols = List.of(Protocol.HTTP_2, Protocol.HTTP_1_1);
          break;
        default:
          throw new IllegalArgumentException("transport: " + transport);
      }
      mock.setProtocols(protocols);
      mock.start();
      Request get = new Request.Builder().url(mock.url("/item")).build();
      String[] variants = {"bare OkHttp, 200", "avoidFailedConnections(false)", "(true)"};
      double[][] micros = new double[variants.length][rounds];
      double[][] bytes = new double[variants.length][rounds];
      double[] connections = new double[variants.length];
      ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
      long self = Thread.currentThread().getId();
      for (int round = 0; round < rounds; round++) {
        for (int v = 0; v < variants.length; v++) {
          OkHttpClient.Builder builder =
              new OkHttpClient.Builder()
                  .protocols(protocols)
                  .socketFactory(new NoDelaySocketFactory())
                  .sslSocketFactory(client.sslSocketFactory(), client.trustManager());
          if (v > 0) {
            RetryPolicy policy =
                RetryPolicy.builder()
                    .maxRetries(3)
                    .baseDelay(1, TimeUnit.NANOSECONDS)
                    .jitter(Jitter.NONE)
                    .retryBudget(RetryBudget.unlimited())
                    .avoidFailedConnections(v == 2)
                    .build();
            RetryInterceptor.create(policy).install(builder);
          }
          OkHttpClient okHttp = builder.build();
          dispatcher.failEveryOther = v > 0;
          execute(okHttp, get, calls / 2); // warm-up: JIT, connection
          drain(mock);
          long before = threads.getThreadAllocatedBytes(self);
          long start = System.nanoTime();
          execute(okHttp, get, calls);
          long elapsed = System.nanoTime() - start;
          bytes[v][round] = (threads.getThreadAllocatedBytes(self) - before) / (double) calls;
          micros[v][round] = elapsed / 1_000.0 / calls;
          connections[v] += drain(mock) / (double) calls / rounds;
          okHttp.connectionPool().evictAll();
        }
      }
      for (int v = 0; v < variants.length; v++) {
        System.out.printf(
            "| %s | %s | %s | %.1f | %s | %.0f | %.2f |%n",
            transport,
            variants[v],
            each(micros[v], "%.1f"),
            mean(micros[v]),
            each(bytes[v], "%.0f"),
            mean(bytes[v]),
            connections[v]);
      }
    }
  }

  private static void execute(OkHttpClient client, Request request, int calls) throws IOException {
    for (int i = 0; i < calls; i++) {
      try (Response response = client.newCall(request).execute()) {
        if (response.code() != 200) throw new IOException("not retried: " + response);
        response.body().bytes();
      }
    }
  }

  /** Takes the requests the server recorded; returns the connections they came on that were new. */
  private static int drain(MockWebServer mock) throws InterruptedException {
    int opened = 0;
    for (RecordedRequest r; (r = mock.takeRequest(0, TimeUnit.MILLISECONDS)) != null; ) {
      if (r.getExchangeIndex() == 0) opened++;
    }
    return opened;
  }

  private static String each(double[] values, String format) {
    List<String> out = new ArrayList<>();
    for (double d : values) out.add(String.format(format, d));
    return String.join(" / ", out);
  }

  private static double mean(double[] values) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / values.length;
  }

  /**
   * Client sockets with TCP_NODELAY: OkHttp leaves Nagle on, which on loopback holds an HTTP/2
   * frame or a TLS handshake's last flight ~40 ms for a delayed ACK.
   */
  private static final class NoDelaySocketFactory extends SocketFactory {
    private final SocketFactory delegate = SocketFactory.getDefault();

    @Override
    public Socket createSocket() throws IOException {
      return noDelay(delegate.createSocket());
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      return noDelay(delegate.createSocket(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress local, int localPort)
        throws IOException {
      return noDelay(delegate.createSocket(host, port, local, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      return noDelay(delegate.createSocket(host, port));
    }

    @Override
    public Socket createSocket(InetAddress host, int port, InetAddress local, int localPort)
        throws IOException {
      return noDelay(delegate.createSocket(host, port, local, localPort));
    }

    private static Socket noDelay(Socket socket) throws IOException {
      socket.setTcpNoDelay(true);
      return socket;
    }
  }

  /** Every other request 503 without Retry-After while {@link #failEveryOther}; else 200. */
  private static final class AlternatingDispatcher extends Dispatcher {
    private static final MockResponse UNAVAILABLE =
        new MockResponse.Builder().code(503).body("busy").build();
    private static final MockResponse OK = new MockResponse.Builder().body("ok").build();
    private final AtomicInteger requests = new AtomicInteger();
    volatile boolean failEveryOther;

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      return failEveryOther && (requests.getAndIncrement() & 1) == 0 ? UNAVAILABLE : OK;
    }
  }
}
