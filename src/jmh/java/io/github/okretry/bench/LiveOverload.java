package io.github.okretry.bench;

import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Issue 5.4: a live overload. A MockWebServer serves at most {@code C} requests at once (each takes
 * {@code S} ms) and answers {@code 503} with {@code Retry-After: 1} beyond that. An open-loop
 * Poisson load runs at half its capacity, spikes to twice its capacity for 5 s, and drops back.
 * Each logical call carries its own {@code Idempotency-Key}, so the server counts hits per logical
 * call. Latency is measured from the scheduled arrival (no coordinated omission).
 *
 * <p>Modes: {@code none} (no retries), {@code okretry} (defaults: 3 retries, honors Retry-After
 * spread upward by up to 50 %, retry budget on), {@code okretry-exact-retry-after} (the same,
 * waiting exactly the Retry-After), {@code okretry-ignore-retry-after} (a network interceptor
 * strips the header, so backoff applies), {@code okretry-no-budget} (defaults with {@link
 * RetryBudget#unlimited()}). Arguments: modes to run, default all five; each takes about 60 s. The
 * baseline ("before") is seconds 8–20; "recovered" means three consecutive arrival-seconds with
 * goodput ≥ 95% and p99 latency of successful calls ≤ 1.2 × the baseline p99.
 */
public final class LiveOverload {

  static final int CAPACITY = 20; // concurrent requests served
  static final long SERVICE_MILLIS = 50; // per request; capacity = 400 req/s
  static final double CAPACITY_RPS = CAPACITY * 1000.0 / SERVICE_MILLIS;
  static final double BASE_RPS = 0.5 * CAPACITY_RPS;
  static final double SPIKE_RPS = 2.0 * CAPACITY_RPS;
  static final int WARMUP_S = 8; // excluded from the "before" baseline: connections, JIT
  static final int SPIKE_START_S = 20;
  static final int SPIKE_END_S = 25;
  static final int END_S = 55;

  public static void main(String[] args) throws Exception {
    List<String> modes =
        args.length > 0
            ? Arrays.asList(args)
            : List.of(
                "none",
                "okretry",
                "okretry-exact-retry-after",
                "okretry-ignore-retry-after",
                "okretry-no-budget");
    System.out.printf(
        "capacity %d concurrent x %d ms = %.0f req/s; load %.0f req/s, spike %.0f req/s during [%d"
            + " s, %d s); run %d s%n%n",
        CAPACITY,
        SERVICE_MILLIS,
        CAPACITY_RPS,
        BASE_RPS,
        SPIKE_RPS,
        SPIKE_START_S,
        SPIKE_END_S,
        END_S);
    List<String> rows = new ArrayList<>();
    for (String mode : modes) rows.add(run(mode));
    System.out.println();
    System.out.println(
        "| mode | calls | server hits / call (all) | hits / call (spike arrivals) | goodput (all) |"
            + " goodput (spike arrivals) | p99 before | p99 spike | p99 after spike | recovery"
            + " after spike |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    rows.forEach(System.out::println);
  }

  /** Serves CAPACITY requests at once; counts every hit per logical call by its key. */
  static final class CapacityDispatcher extends Dispatcher {
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicIntegerArray hits;
    final AtomicLong rejected = new AtomicLong();

    CapacityDispatcher(int maxCalls) {
      hits = new AtomicIntegerArray(maxCalls);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
      String key = request.getHeaders().get("Idempotency-Key");
      if (key != null && key.startsWith("call-")) {
        hits.incrementAndGet(Integer.parseInt(key.substring(5)));
      }
      if (inFlight.incrementAndGet() > CAPACITY) {
        inFlight.decrementAndGet();
        rejected.incrementAndGet();
        return new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build();
      }
      try {
        Thread.sleep(SERVICE_MILLIS);
      } finally {
        inFlight.decrementAndGet();
      }
      return new MockResponse.Builder().code(200).body("ok").build();
    }
  }

  static String run(String mode) throws Exception {
    int maxCalls = (int) (BASE_RPS * END_S + SPIKE_RPS * (SPIKE_END_S - SPIKE_START_S)) * 2;
    CapacityDispatcher dispatcher = new CapacityDispatcher(maxCalls);
    try (MockWebServer server = new MockWebServer()) {
      server.setServerSocketFactory(new NoDelayServerSocketFactory());
      server.setDispatcher(dispatcher);
      server.start();

      okhttp3.Dispatcher calls = new okhttp3.Dispatcher();
      calls.setMaxRequests(100_000); // open loop: never queue in the client
      calls.setMaxRequestsPerHost(100_000);
      OkHttpClient.Builder builder =
          new OkHttpClient.Builder()
              .dispatcher(calls)
              .connectionPool(new ConnectionPool(2_000, 5, TimeUnit.MINUTES));
      switch (mode) {
        case "none":
          break;
        case "okretry":
          builder.addInterceptor(RetryInterceptor.create());
          break;
        case "okretry-no-budget":
          builder.addInterceptor(
              RetryInterceptor.create(
                  RetryPolicy.builder().retryBudget(RetryBudget.unlimited()).build()));
          break;
        case "okretry-exact-retry-after":
          builder.addInterceptor(
              RetryInterceptor.create(RetryPolicy.builder().retryAfterSpread(0).build()));
          break;
        case "okretry-ignore-retry-after":
          builder
              .addInterceptor(RetryInterceptor.create())
              .addNetworkInterceptor(
                  chain ->
                      chain
                          .proceed(chain.request())
                          .newBuilder()
                          .removeHeader("Retry-After")
                          .build());
          break;
        default:
          throw new IllegalArgumentException("unknown mode: " + mode);
      }
      OkHttpClient client = builder.build();
      RequestBody body = RequestBody.create("{\"order\":42}", MediaType.get("application/json"));

      long[] arrival = new long[maxCalls];
      long[] end = new long[maxCalls];
      boolean[] ok = new boolean[maxCalls];
      AtomicInteger done = new AtomicInteger();
      Random random = new Random(7);
      long t0 = System.nanoTime();
      long next = t0;
      int n = 0;
      long endNanos = t0 + TimeUnit.SECONDS.toNanos(END_S);
      while (true) {
        double second = (next - t0) / 1e9;
        double rate = second >= SPIKE_START_S && second < SPIKE_END_S ? SPIKE_RPS : BASE_RPS;
        next += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
        if (next >= endNanos || n == maxCalls) break;
        for (long wait; (wait = next - System.nanoTime()) > 0; ) LockSupport.parkNanos(wait);
        int i = n++;
        arrival[i] = next;
        Request request =
            new Request.Builder()
                .url(server.url("/orders"))
                .header("Idempotency-Key", "call-" + i)
                .post(body)
                .build();
        client
            .newCall(request)
            .enqueue(
                new Callback() {
                  @Override
                  public void onResponse(Call call, Response response) {
                    try (response) {
                      ok[i] = response.code() == 200;
                    }
                    end[i] = System.nanoTime();
                    done.incrementAndGet();
                  }

                  @Override
                  public void onFailure(Call call, IOException e) {
                    end[i] = System.nanoTime();
                    done.incrementAndGet();
                  }
                });
      }
      long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (done.get() < n && System.nanoTime() < drainUntil) Thread.sleep(50);
      int finished = done.get();
      client.dispatcher().cancelAll();
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
      return report(mode, n, finished, t0, arrival, end, ok, dispatcher);
    }
  }

  private static String report(
      String mode,
      int n,
      int finished,
      long t0,
      long[] arrival,
      long[] end,
      boolean[] ok,
      CapacityDispatcher server) {
    int seconds = END_S;
    List<List<Long>> latency = new ArrayList<>();
    int[] arrivals = new int[seconds];
    int[] successes = new int[seconds];
    long[] hits = new long[seconds];
    for (int s = 0; s < seconds; s++) latency.add(new ArrayList<>());
    long totalHits = 0;
    int totalOk = 0;
    for (int i = 0; i < n; i++) {
      int s = (int) ((arrival[i] - t0) / 1_000_000_000L);
      arrivals[s]++;
      int h = server.hits.get(i);
      hits[s] += h;
      totalHits += h;
      if (ok[i]) {
        successes[s]++;
        totalOk++;
        latency.get(s).add(end[i] - arrival[i]);
      }
    }
    // per-second timeline, by arrival second
    StringBuilder timeline = new StringBuilder();
    timeline.append(
        String.format(
            "%n### %s: %d calls, %d finished, %d server 503s%n",
            mode, n, finished, server.rejected.get()));
    timeline.append("second:      ");
    for (int s = 0; s < seconds; s++) timeline.append(String.format("%6d", s));
    timeline.append("\ngoodput %:   ");
    for (int s = 0; s < seconds; s++) {
      timeline.append(String.format("%6.0f", 100.0 * successes[s] / Math.max(1, arrivals[s])));
    }
    timeline.append("\np99 ms:      ");
    for (int s = 0; s < seconds; s++) {
      timeline.append(String.format("%6.0f", p99(latency.get(s)) / 1e6));
    }
    timeline.append("\nhits/call:   ");
    for (int s = 0; s < seconds; s++) {
      timeline.append(String.format("%6.2f", (double) hits[s] / Math.max(1, arrivals[s])));
    }
    System.out.println(timeline);

    double p99Before = p99(range(latency, WARMUP_S, SPIKE_START_S));
    double p99Spike = p99(range(latency, SPIKE_START_S, SPIKE_END_S));
    double p99After = p99(range(latency, SPIKE_END_S, seconds));
    // Recovered: from this arrival second on, three seconds in a row meet both conditions.
    int recovered = -1;
    for (int s = SPIKE_END_S; s + 2 < seconds && recovered < 0; s++) {
      boolean good = true;
      for (int k = s; k < s + 3; k++) {
        good &= successes[k] >= 0.95 * arrivals[k] && p99(latency.get(k)) <= 1.2 * p99Before;
      }
      if (good) recovered = s - SPIKE_END_S;
    }
    int spikeArrivals = 0;
    int spikeOk = 0;
    long spikeHits = 0;
    for (int s = SPIKE_START_S; s < SPIKE_END_S; s++) {
      spikeArrivals += arrivals[s];
      spikeOk += successes[s];
      spikeHits += hits[s];
    }
    return String.format(
        "| %s | %d | %.2f | %.2f | %.1f%% (%.0f/s) | %.1f%% | %.0f ms | %.0f ms | %.0f ms | %s |",
        mode,
        n,
        (double) totalHits / n,
        (double) spikeHits / spikeArrivals,
        100.0 * totalOk / n,
        totalOk / (double) END_S,
        100.0 * spikeOk / spikeArrivals,
        p99Before / 1e6,
        p99Spike / 1e6,
        p99After / 1e6,
        recovered < 0 ? "not within run" : recovered + " s");
  }

  private static List<Long> range(List<List<Long>> perSecond, int from, int to) {
    List<Long> all = new ArrayList<>();
    for (int s = from; s < to; s++) all.addAll(perSecond.get(s));
    return all;
  }

  private static double p99(List<Long> values) {
    if (values.isEmpty()) return Double.NaN;
    long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
    return sorted[(int) Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)];
  }
}
