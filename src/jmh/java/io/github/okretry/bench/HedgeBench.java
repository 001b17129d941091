package io.github.okretry.bench;

import io.github.okretry.HedgingPolicy;
import io.github.okretry.RetryListener;
import io.github.okretry.RetryPolicy;
import io.github.okretry.RetryingCallFactory;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Issue 21: what hedging does to the latency tail, and what it costs in extra requests. A loopback
 * server (one thread per connection) answers each request after a delay drawn independently per
 * request, and counts the requests it received; 2 000 sequential GETs per client, each timed from
 * {@code execute()} to the body read and closed.
 *
 * <ul>
 *   <li>{@code tail}: 5 % of responses take 1 s, the rest 5 ms. Clients: bare OkHttp, okretry
 *       without hedging, hedging after a fixed 50 ms, adaptive hedging with its defaults.
 *   <li>{@code uniform}: every response takes 200 ms; adaptive (and fixed 50 ms, for contrast).
 *   <li>{@code overload}: every response is a refusal after 5 ms (429 with {@code Retry-After: 1},
 *       or 503 without), and the same after 100 ms (a slow refusal); fixed and adaptive hedging, 30
 *       calls each with one retry: the hedges sent are counted.
 * </ul>
 *
 * <p>Extra requests = (requests the server received − calls) / calls: hedges, retries and OkHttp's
 * own. Run: {@code bench/run.sh hedge [tail|uniform|overload|all] [calls]}.
 */
public final class HedgeBench {

  public static void main(String[] args) throws Exception {
    String what = args.length > 0 ? args[0] : "all";
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    System.out.printf(
        Locale.ROOT,
        "%-34s %6s %9s %9s %9s %9s %8s %7s%n",
        "scenario / client",
        "calls",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "extra %",
        "hedges");
    if (what.equals("all") || what.equals("tail")) {
      Delay tail = r -> r.nextDouble() < 0.05 ? 1000 : 5;
      run("tail 5% 1s", tail, 200, calls, null, null);
      run("tail 5% 1s", tail, 200, calls, RetryPolicy.builder(), null);
      run(
          "tail 5% 1s",
          tail, 200, calls, RetryPolicy.builder(), HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
      run("tail 5% 1s", tail, 200, calls, RetryPolicy.builder(), HedgingPolicy.adaptive());
    }
    if (what.equals("all") || what.equals("uniform")) {
      int n = Math.min(calls, 500); // 200 ms each: 100 s
      run("uniform 200ms", r -> 200, 200, n, RetryPolicy.builder(), HedgingPolicy.adaptive());
      run(
          "uniform 200ms",
          r -> 200,
          200,
          n,
          RetryPolicy.builder(),
          HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
    }
    if (what.equals("all") || what.equals("overload")) {
      int n = Math.min(calls, 30);
      for (int status : new int[] {429, 503}) {
        for (long ms : new long[] {5, 100}) {
          String name = "overload " + status + " after " + ms + "ms";
          run(
              name,
              r -> ms,
              status,
              n,
              RetryPolicy.builder().maxRetries(1),
              HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
          run(
              name,
              r -> ms,
              status,
              n,
              RetryPolicy.builder().maxRetries(1),
              HedgingPolicy.adaptive());
        }
      }
    }
  }

  /** The delay of one response, drawn per request. */
  interface Delay {
    long millis(SplittableRandom random);
  }

  /** {@code policy} null: bare OkHttp; {@code hedging} null: no hedging. */
  static void run(
      String scenario,
      Delay delay,
      int status,
      int calls,
      RetryPolicy.Builder policy,
      HedgingPolicy hedging)
      throws Exception {
    AtomicLong hedges = new AtomicLong();
    String client;
    if (policy == null) {
      client = "bare OkHttp";
    } else {
      client =
          hedging == null
              ? "okretry, no hedging"
              : hedging.equals(HedgingPolicy.adaptive())
                  ? "okretry hedge adaptive"
                  : "okretry hedge 50ms";
      policy.listener(
          new RetryListener() {
            @Override
            public void onHedgeStarted(Request request, int attempt, long afterNanos) {
              hedges.incrementAndGet();
            }
          });
    }
    OkHttpClient ok = new OkHttpClient.Builder().readTimeout(10, TimeUnit.SECONDS).build();
    RetryingCallFactory factory =
        policy == null
            ? null
            : hedging == null
                ? RetryingCallFactory.create(ok, policy.build())
                : RetryingCallFactory.create(ok, policy.build(), hedging);
    Call.Factory calls0 = factory != null ? factory : ok;
    try (Server warm = new Server(r -> 0, 200, 1)) {
      for (int i = 0; i < 300; i++) get(calls0, warm.url());
    }
    hedges.set(0);
    long[] nanos = new long[calls];
    long requests;
    try (Server server = new Server(delay, status, 21)) {
      for (int i = 0; i < calls; i++) {
        long start = System.nanoTime();
        get(calls0, server.url());
        nanos[i] = System.nanoTime() - start;
      }
      requests = server.requests.get();
    } finally {
      if (factory != null) factory.close();
      ok.dispatcher().executorService().shutdown();
      ok.connectionPool().evictAll();
    }
    Arrays.sort(nanos);
    System.out.printf(
        Locale.ROOT,
        "%-34s %6d %9.1f %9.1f %9.1f %9.1f %8.2f %7d%n",
        scenario + " / " + client,
        calls,
        ms(pct(nanos, 0.50)),
        ms(pct(nanos, 0.90)),
        ms(pct(nanos, 0.99)),
        ms(nanos[calls - 1]),
        100.0 * (requests - calls) / calls,
        hedges.get());
  }

  static void get(Call.Factory calls, String url) {
    try (Response r = calls.newCall(new Request.Builder().url(url).build()).execute()) {
      r.body().bytes();
    } catch (IOException e) {
      // counted by its latency like any outcome
    }
  }

  static long pct(long[] sorted, double p) {
    int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, rank - 1)];
  }

  static double ms(long nanos) {
    return nanos / 1e6;
  }

  /** A loopback HTTP/1.1 server: each request waits its drawn delay, then gets {@code status}. */
  static final class Server implements Closeable {
    final ServerSocket socket;
    final AtomicLong requests = new AtomicLong();
    private final SplittableRandom random;
    private final Delay delay;
    private final byte[] response;

    Server(Delay delay, int status, long seed) throws IOException {
      this.delay = delay;
      this.random = new SplittableRandom(seed);
      String head =
          status == 200
              ? "200 OK"
              : status == 429 ? "429 Too Many Requests\r\nRetry-After: 1" : status + " Unavailable";
      this.response =
          ("HTTP/1.1 " + head + "\r\nContent-Length: 2\r\n\r\nok")
              .getBytes(StandardCharsets.US_ASCII);
      this.socket = new ServerSocket();
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
      Thread acceptor = new Thread(this::accept, "hedge-bench-accept");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    String url() {
      return "http://127.0.0.1:" + socket.getLocalPort() + "/";
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          s.setTcpNoDelay(true);
          Thread t = new Thread(() -> serve(s), "hedge-bench-conn");
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket s) {
      try (Socket closing = s;
          InputStream in = new BufferedInputStream(s.getInputStream());
          OutputStream out = s.getOutputStream()) {
        while (readHead(in)) {
          requests.incrementAndGet();
          long ms;
          synchronized (random) {
            ms = delay.millis(random);
          }
          if (ms > 0) Thread.sleep(ms);
          out.write(response);
          out.flush();
        }
      } catch (IOException | InterruptedException e) {
        // the client went away (a canceled hedge or loser)
      }
    }

    /** Reads one GET's head; false at end of stream. */
    private static boolean readHead(InputStream in) throws IOException {
      int c;
      int lineLength = 0;
      while ((c = in.read()) != -1) {
        if (c == '\n') {
          if (lineLength == 0) return true;
          lineLength = 0;
        } else if (c != '\r') {
          lineLength++;
        }
      }
      return false;
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
