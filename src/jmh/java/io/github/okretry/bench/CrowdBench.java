package io.github.okretry.bench;

import io.github.okretry.GiveUpReason;
import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryListener;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Issue 14's targets against real loopback servers (start them with {@code bench/nginx/servers.sh
 * start}). Each scenario uses one fresh client with the default {@link RetryBudget}; attempts are
 * counted client-side by a {@link RetryListener} ({@code onNetworkRequest}: every request that
 * reached the network, OkHttp's own repeats included).
 *
 * <ul>
 *   <li>{@code burst [url] [runs]}: 40 concurrent GETs at the limiter (20 requests/s, no burst, 429
 *       + {@code Retry-After: 1}); {@code maxRetries(20)}, {@code deadline(20 s)}, {@code
 *       maxRetryAfter(5 s)}. Targets: 40/40 within the deadline, makespan ≤ 4 s, ≤ 2.5 attempts per
 *       call. Default url {@code http://127.0.0.1:18080/}, 3 runs, 3 s apart.
 *   <li>{@code cold [url] [runs]}: the first 50 calls of a fresh client with {@code maxRetries(14)}
 *       against a server failing 50 % at random (503, no {@code Retry-After}), all 50 started at
 *       once. Target: ≥ 48 of 50 succeed. Default url {@code http://127.0.0.1:18083/}.
 *   <li>{@code protect [url] [seconds] [callsPerSecond]}: an open-loop client sending 200 calls/s
 *       (default) for 30 s (default) to a server failing 100 %, default settings otherwise. Prints
 *       attempts per call for every second and the starting transient. Targets: without {@code
 *       Retry-After} ≤ 1.05 attempts per call once the starting balance is spent ({@code
 *       http://127.0.0.1:18081/}, the default); with {@code Retry-After: 1} on every 503 ({@code
 *       http://127.0.0.1:18082/}) a sustained amplification ≤ 1.2.
 * </ul>
 *
 * <p>Run: {@code bench/run.sh crowd burst|cold|protect [args]}.
 */
public final class CrowdBench {

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Exception e) {
      // A failed run (nginx not started, say) leaves its pool's threads behind: exit, not hang.
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    String what = args.length > 0 ? args[0] : "burst";
    switch (what) {
      case "burst" -> {
        String url = arg(args, 1, "http://127.0.0.1:18080/");
        int runs = Integer.parseInt(arg(args, 2, "3"));
        for (int i = 1; i <= runs; i++) {
          Thread.sleep(3_000); // the limiter forgets the previous run
          burst(url, i);
        }
      }
      case "cold" -> {
        String url = arg(args, 1, "http://127.0.0.1:18083/");
        int runs = Integer.parseInt(arg(args, 2, "3"));
        for (int i = 1; i <= runs; i++) cold(url, i);
      }
      case "protect" ->
          protect(
              arg(args, 1, "http://127.0.0.1:18081/"),
              Integer.parseInt(arg(args, 2, "30")),
              Integer.parseInt(arg(args, 3, "200")));
      default -> throw new IllegalArgumentException("burst|cold|protect: " + what);
    }
  }

  static String arg(String[] args, int i, String fallback) {
    return args.length > i ? args[i] : fallback;
  }

  /** Counts what the listener sees across all calls of one client. */
  static final class Counts implements RetryListener {
    final AtomicInteger networkRequests = new AtomicInteger();
    final Map<GiveUpReason, AtomicInteger> gaveUp = new ConcurrentHashMap<>();
    final AtomicIntegerArray perCall; // network requests by the call's index tag, if any
    final AtomicInteger laterRefusals = new AtomicInteger(); // refused attempts after the first
    final AtomicLong lastRefusalNanos = new AtomicLong();

    Counts(int calls) {
      perCall = new AtomicIntegerArray(calls);
    }

    @Override
    public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
      networkRequests.incrementAndGet();
      Integer call = request.tag(Integer.class);
      if (call != null) perCall.incrementAndGet(call);
    }

    @Override
    public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
      if (attempt > 1) laterRefusals.incrementAndGet();
      lastRefusalNanos.accumulateAndGet(System.nanoTime(), Math::max);
    }

    @Override
    public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
      gaveUp.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
    }

    String gaveUpSummary() {
      return gaveUp.isEmpty() ? "none" : new TreeMap<>(gaveUp).toString();
    }
  }

  static void burst(String url, int run) throws Exception {
    Counts counts = new Counts(0);
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .maxRetries(20)
                .deadline(Duration.ofSeconds(20))
                .maxRetryAfter(Duration.ofSeconds(5))
                .listener(counts)
                .build());
    OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
    int callers = 40;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<long[]>> results = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      results.add(
          pool.submit(
              () -> {
                go.await();
                long start = System.nanoTime();
                try (Response r =
                    client.newCall(new Request.Builder().url(url).build()).execute()) {
                  return new long[] {r.code(), System.nanoTime() - start};
                }
              }));
    }
    long start = System.nanoTime();
    go.countDown();
    int ok = 0;
    long makespan = 0;
    Map<Integer, Integer> codes = new TreeMap<>();
    for (Future<long[]> f : results) {
      long[] r = f.get(60, TimeUnit.SECONDS);
      codes.merge((int) r[0], 1, Integer::sum);
      if (r[0] == 200) ok++;
    }
    makespan = (System.nanoTime() - start) / 1_000_000;
    pool.shutdown();
    shutdown(client);
    System.out.printf(
        "burst run %d: %d/%d succeeded, makespan %d ms, %d attempts (%.2f per call), codes %s, gave"
            + " up %s; %d retries refused again, the last %d ms after the start%n",
        run,
        ok,
        callers,
        makespan,
        counts.networkRequests.get(),
        counts.networkRequests.get() / (double) callers,
        codes,
        counts.gaveUpSummary(),
        counts.laterRefusals.get(),
        (counts.lastRefusalNanos.get() - start) / 1_000_000);
  }

  static void cold(String url, int run) throws Exception {
    Counts counts = new Counts(0);
    RetryInterceptor retry =
        RetryInterceptor.create(RetryPolicy.builder().maxRetries(14).listener(counts).build());
    OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
    int calls = 50;
    ExecutorService pool = Executors.newFixedThreadPool(calls);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Integer>> results = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      results.add(
          pool.submit(
              () -> {
                go.await();
                try (Response r =
                    client.newCall(new Request.Builder().url(url).build()).execute()) {
                  return r.code();
                }
              }));
    }
    long start = System.nanoTime();
    go.countDown();
    int ok = 0;
    for (Future<Integer> f : results) {
      if (f.get(600, TimeUnit.SECONDS) == 200) {
        ok++;
      }
    }
    long elapsed = (System.nanoTime() - start) / 1_000_000;
    pool.shutdown();
    shutdown(client);
    System.out.printf(
        "cold start run %d: %d/%d succeeded in %d ms, %d attempts (%.2f per call), gave up %s%n",
        run,
        ok,
        calls,
        elapsed,
        counts.networkRequests.get(),
        counts.networkRequests.get() / (double) calls,
        counts.gaveUpSummary());
  }

  static void protect(String url, int seconds, int perSecond) throws Exception {
    int total = seconds * perSecond;
    Counts counts = new Counts(total);
    RetryBudget budget = RetryBudget.builder().build();
    RetryInterceptor retry =
        RetryInterceptor.create(RetryPolicy.builder().retryBudget(budget).listener(counts).build());
    OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
    ExecutorService pool =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "caller");
              t.setDaemon(true);
              return t;
            });
    double[] tokensAt = new double[seconds + 1];
    AtomicLong failures = new AtomicLong();
    long periodNanos = 1_000_000_000L / perSecond;
    long start = System.nanoTime();
    List<Future<?>> futures = new ArrayList<>(total);
    for (int i = 0; i < total; i++) {
      long due = start + i * periodNanos;
      for (long now; (now = System.nanoTime()) < due; ) LockSupport.parkNanos(due - now);
      if (i % perSecond == 0) tokensAt[i / perSecond] = budget.availableTokens();
      Request request = new Request.Builder().url(url).tag(Integer.class, i).build();
      futures.add(
          pool.submit(
              () -> {
                try (Response r = client.newCall(request).execute()) {
                  if (r.code() != 200) failures.incrementAndGet();
                } catch (IOException e) {
                  failures.incrementAndGet();
                }
              }));
    }
    for (Future<?> f : futures) f.get(120, TimeUnit.SECONDS);
    long elapsed = (System.nanoTime() - start) / 1_000_000;
    shutdown(client);
    System.out.printf(
        "protect %s: %d calls at %d/s over %d s (took %d ms), %d attempts (%.3f per call), gave up"
            + " %s%n",
        url,
        total,
        perSecond,
        seconds,
        elapsed,
        counts.networkRequests.get(),
        counts.networkRequests.get() / (double) total,
        counts.gaveUpSummary());
    // Each call's attempts are counted to the second the call started in.
    StringBuilder series =
        new StringBuilder(
            "  attempts per call by the second calls started in (balance at its start):");
    int spentAt = -1;
    long[] attemptsBySecond = new long[seconds];
    for (int i = 0; i < total; i++) attemptsBySecond[i / perSecond] += counts.perCall.get(i);
    for (int s = 0; s < seconds; s++) {
      series.append(
          String.format(
              " %d:%.3f(%.0f)", s, attemptsBySecond[s] / (double) perSecond, tokensAt[s]));
      if (spentAt < 0 && tokensAt[s] < 1) spentAt = s;
    }
    System.out.println(series);
    if (spentAt < 0) {
      System.out.println("  the starting balance was never spent");
      return;
    }
    // Transient: calls started before the balance was first seen empty; sustained: the rest.
    long transientExtra = 0, sustained = 0;
    for (int s = 0; s < spentAt; s++) transientExtra += attemptsBySecond[s] - perSecond;
    for (int s = spentAt; s < seconds; s++) sustained += attemptsBySecond[s];
    int sustainedCalls = (seconds - spentAt) * perSecond;
    System.out.printf(
        "  balance first seen empty at the start of second %d; transient (calls of seconds 0..%d):"
            + " %d extra attempts; sustained (calls of seconds %d..%d): %.3f attempts per call%n",
        spentAt,
        spentAt - 1,
        transientExtra,
        spentAt,
        seconds - 1,
        sustained / (double) sustainedCalls);
  }

  static void shutdown(OkHttpClient client) {
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }
}
