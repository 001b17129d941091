package io.github.okretry.bench;

import io.github.okretry.GiveUpReason;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryListener;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.HdrHistogram.Histogram;

/**
 * Issue 5.2: how precisely okretry's deadline ends a call to a server that never answers, and how
 * quickly it gives up on a {@code Retry-After} that cannot fit the deadline.
 *
 * <p>Part A: for deadlines of 100, 250 and 1000 ms, calls to a stalled server from a few threads at
 * once (so 1 000 calls per deadline fit in minutes); the overshoot is (time from {@code execute()}
 * to the exception) minus the deadline, recorded in an HdrHistogram. On each thread, each okretry
 * call alternates with a reference call (bare OkHttp, readTimeout = the deadline) so the machine's
 * own noise is measured under the same load.
 *
 * <p>Part B: a server answering {@code 503} with {@code Retry-After: 5} to a client whose deadline
 * is 1 s; "time to give up" is from the moment the response came back from the network (a network
 * interceptor stamps it) until {@code execute()} returns it, next to the same path for a {@code
 * 200} and for a client without okretry.
 *
 * <p>Arguments: {@code [calls for 100 ms] [calls for 250 ms] [calls for 1000 ms]}, default 1000
 * each, then {@code [give-up samples]}, default 20000, then {@code [threads]}, default 10 (about 5
 * min in all: 1 000 × 1.35 s × 2 clients / 10 threads).
 */
public final class DeadlinePrecision {

  public static void main(String[] args) throws Exception {
    int[] deadlinesMillis = {100, 250, 1000};
    int[] calls = {1000, 1000, 1000};
    for (int i = 0; i < 3 && i < args.length; i++) calls[i] = Integer.parseInt(args[i]);
    int giveUpSamples = args.length > 3 ? Integer.parseInt(args[3]) : 20_000;
    int threads = args.length > 4 ? Integer.parseInt(args[4]) : 10;
    long start = System.nanoTime();

    System.out.println(
        "## A. Deadline overshoot against a stalled server (" + threads + " calling threads)");
    System.out.println();
    System.out.println(
        "Each okretry call (deadline d) alternates with a reference call: bare OkHttp with"
            + " readTimeout = d, whose overshoot is the machine's own timer and scheduling noise.");
    System.out.println();
    System.out.println(
        "| deadline | calls | client | p50 overshoot | p99 | max | min | ended by |");
    System.out.println("|---:|---:|---|---:|---:|---:|---:|---|");
    try (TinyHttpServer stalled = TinyHttpServer.stalled()) {
      Request request = new Request.Builder().url(stalled.url("/slow")).build();
      overshoot(request, 50, 2 * threads, threads, false); // warm up the JIT and the socket paths
      for (int i = 0; i < deadlinesMillis.length; i++) {
        overshoot(request, deadlinesMillis[i], calls[i], threads, true);
      }
    }

    System.out.println();
    System.out.println("## B. Time to give up on a Retry-After that does not fit the deadline");
    System.out.println();
    System.out.println(
        "From the network response to execute() returning; "
            + giveUpSamples
            + " sequential calls each, after warm-up.");
    System.out.println();
    try (TinyHttpServer busy =
            TinyHttpServer.answering(
                "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n");
        TinyHttpServer ok = TinyHttpServer.ok()) {
      checkReason(busy);
      System.out.println("| path | p50 | p99 | p99.9 | max |");
      System.out.println("|---|---:|---:|---:|---:|");
      RetryInterceptor retry =
          RetryInterceptor.create(RetryPolicy.builder().deadline(Duration.ofSeconds(1)).build());
      // Two rounds, the first unprinted: whichever path ran first would otherwise be measured
      // while OkHttp's own code was still being compiled (it made okretry's path look 15 µs
      // slower).
      for (boolean print : new boolean[] {false, true}) {
        giveUp(
            "okretry, 503 + Retry-After: 5 s, deadline 1 s (gives up)",
            retry,
            busy,
            giveUpSamples,
            print);
        giveUp("okretry, 200 (for reference)", retry, ok, giveUpSamples, print);
        giveUp("no interceptor, 503 (for reference)", null, busy, giveUpSamples, print);
      }
    }
    System.out.printf("%nelapsed %.1f s%n", (System.nanoTime() - start) / 1e9);
  }

  private static void overshoot(
      Request request, int deadlineMillis, int calls, int threads, boolean print)
      throws InterruptedException {
    OkHttpClient okretry =
        new OkHttpClient.Builder()
            .addInterceptor(
                RetryInterceptor.create(
                    RetryPolicy.builder().deadline(Duration.ofMillis(deadlineMillis)).build()))
            .build();
    OkHttpClient reference =
        new OkHttpClient.Builder().readTimeout(Duration.ofMillis(deadlineMillis)).build();
    Overshoot a = new Overshoot();
    Overshoot b = new Overshoot();
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int share = calls / threads + (t < calls % threads ? 1 : 0);
      workers[t] =
          new Thread(
              () -> {
                Overshoot mineA = new Overshoot();
                Overshoot mineB = new Overshoot();
                for (int i = 0; i < share; i++) {
                  mineA.measure(okretry, request, deadlineMillis);
                  mineB.measure(reference, request, deadlineMillis);
                }
                synchronized (a) {
                  a.add(mineA);
                  b.add(mineB);
                }
              },
              "deadline-caller-" + t);
      workers[t].start();
    }
    for (Thread worker : workers) worker.join();
    okretry.connectionPool().evictAll();
    reference.connectionPool().evictAll();
    if (!print) return;
    a.print(deadlineMillis, calls, "okretry deadline");
    b.print(deadlineMillis, calls, "reference: OkHttp readTimeout");
  }

  /** Overshoots of one client, in microseconds. */
  private static final class Overshoot {
    final Histogram micros = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
    long minMicros = Long.MAX_VALUE;
    final Map<String, Integer> endings = new java.util.TreeMap<>();

    void measure(OkHttpClient client, Request request, int deadlineMillis) {
      long t0 = System.nanoTime();
      String ending;
      try (Response response = client.newCall(request).execute()) {
        ending = "HTTP " + response.code();
      } catch (IOException e) {
        ending = e.getClass().getSimpleName();
      }
      long overshoot = (System.nanoTime() - t0) / 1000 - deadlineMillis * 1000L;
      minMicros = Math.min(minMicros, overshoot);
      micros.recordValue(Math.max(0, overshoot));
      endings.merge(ending, 1, Integer::sum);
    }

    void add(Overshoot other) {
      micros.add(other.micros);
      minMicros = Math.min(minMicros, other.minMicros);
      other.endings.forEach((k, v) -> endings.merge(k, v, Integer::sum));
    }

    void print(int deadlineMillis, int calls, String label) {
      System.out.printf(
          "| %d ms | %d | %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %s |%n",
          deadlineMillis,
          calls,
          label,
          micros.getValueAtPercentile(50) / 1000.0,
          micros.getValueAtPercentile(99) / 1000.0,
          micros.getMaxValue() / 1000.0,
          minMicros / 1000.0,
          endings);
    }
  }

  /** Confirms, once, that the 503 ends the call with DEADLINE_EXCEEDED and a single attempt. */
  private static void checkReason(TinyHttpServer busy) throws IOException {
    Map<GiveUpReason, Integer> reasons = new EnumMap<>(GiveUpReason.class);
    RetryListener listener =
        new RetryListener() {
          @Override
          public void onGaveUp(
              Request request, int attempts, GiveUpReason reason, String lastFailure) {
            reasons.merge(reason, attempts, Integer::sum);
          }
        };
    OkHttpClient client =
        new OkHttpClient.Builder()
            .addInterceptor(
                RetryInterceptor.create(
                    RetryPolicy.builder()
                        .deadline(Duration.ofSeconds(1))
                        .listener(listener)
                        .build()))
            .build();
    long before = busy.requestCount();
    try (Response r = client.newCall(new Request.Builder().url(busy.url("/")).build()).execute()) {
      if (r.code() != 503) throw new AssertionError("expected 503, got " + r.code());
    }
    System.out.println(
        "check: gave up with "
            + reasons
            + " (reason=attempts), server saw "
            + (busy.requestCount() - before)
            + " request(s)");
    System.out.println();
  }

  private static void giveUp(
      String label, RetryInterceptor retry, TinyHttpServer server, int samples, boolean print)
      throws IOException {
    long[] arrived = new long[1];
    OkHttpClient.Builder builder = new OkHttpClient.Builder();
    if (retry != null) builder.addInterceptor(retry);
    OkHttpClient client =
        builder
            .addNetworkInterceptor(
                chain -> {
                  Response response = chain.proceed(chain.request());
                  arrived[0] = System.nanoTime();
                  return response;
                })
            .build();
    Request request = new Request.Builder().url(server.url("/busy")).build();
    Histogram nanos = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    for (int i = 0; i < samples / 2; i++) once(client, request, arrived); // warm-up
    for (int i = 0; i < samples; i++) nanos.recordValue(once(client, request, arrived));
    if (!print) return;
    System.out.printf(
        "| %s | %.1f µs | %.1f µs | %.1f µs | %.1f µs |%n",
        label,
        nanos.getValueAtPercentile(50) / 1000.0,
        nanos.getValueAtPercentile(99) / 1000.0,
        nanos.getValueAtPercentile(99.9) / 1000.0,
        nanos.getMaxValue() / 1000.0);
  }

  private static long once(OkHttpClient client, Request request, long[] arrived)
      throws IOException {
    try (Response response = client.newCall(request).execute()) {
      long elapsed = System.nanoTime() - arrived[0];
      response.body().bytes();
      return elapsed;
    }
  }
}
