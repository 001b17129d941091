package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The heavy rows of what held retries cost (issue 42; the default run's rows are {@link
 * HeldCostRealServerTest}), against a real MockWebServer, in real time: 10 000 held factory calls'
 * heap; deadlines and call timeouts of 1 and 3 s with the default backoff, on both drivers; and a
 * busy blocking client against an origin dead for 10 s: how many of its 50 threads sleep in a wait
 * over time, and how soon its calls fail once the origin has been dead a while, beside the same
 * client with no budget. About a minute. Main at 34cc5b2: 69 000 B a held call against 2 000; 1 s
 * deadlines end at 1.09 to 1.20 s with {@code NO_RECENT_SUCCESS} (the interceptor's {@code
 * callTimeout} at 1.00 s, {@code DEADLINE_EXCEEDED}); 3 s ones within their schedule; 50 of 50
 * threads asleep throughout the outage, calls from 4 s into it failing at a p50 of 760 ms (no
 * budget: 770 ms, 4 requests a call), 1.00 requests a call.
 *
 * <pre>
 * mvn -B test -Dokretry.excludedGroups= -Dgroups=soak -Dtest=HeldCostSoakTest -Dokretry.printTables=true
 * </pre>
 */
@Tag("soak")
class HeldCostSoakTest {

  @Test
  void tenThousandHeldFactoryCallsKeepNoMoreHeapThanTwiceWhatUnbudgetedOnesKeep() throws Exception {
    HeldCostRealServerTest.assertHeldCallsCostAsUnbudgetedOnes(10_000);
  }

  /** The default backoff (200 ms, x2, full jitter) under a deadline or call timeout of 1 or 3 s. */
  @ParameterizedTest(name = "{0} s, factory: {1}, callTimeout: {2}")
  @CsvSource({
    "1, false, false",
    "1, true, false",
    "1, false, true",
    "1, true, true",
    "3, false, false",
    "3, true, false",
    "3, false, true",
    "3, true, true"
  })
  void aCallOnADeadOriginWithTheDefaultBackoffEndsByItsDeadlineAndSaysSo(
      int seconds, boolean factory, boolean callTimeout) throws Exception {
    HeldCostRealServerTest.assertEndsInTime(
        factory, Duration.ofSeconds(seconds), callTimeout, "default backoff", b -> b);
  }

  // ---------------------------------------------------------------------------------------------
  // A busy blocking client against a dead origin

  static final int THREADS = 50;
  static final long HEALTHY_MILLIS = 1_000;
  static final long DEAD_MILLIS = 10_000;
  static final long SAMPLE_MILLIS = 250;

  /** A call of the loop: when it started (from the origin's death), how long it took, requests. */
  record CallEnd(long startMillis, long millis, int requests) {}

  /**
   * Loop threads inside a wait, {@code atMillis} from the origin's death: by the listener ({@code
   * threads}), and by their state ({@code parked}: waiting or timed waiting, not in I/O).
   */
  record Asleep(long atMillis, int threads, int parked) {}

  record Loop(List<CallEnd> calls, List<Asleep> asleep) {

    /** The calls that started at least {@code fromMillis} after the origin died. */
    List<CallEnd> startedAfter(long fromMillis) {
      return startedBetween(fromMillis, Long.MAX_VALUE);
    }

    /** The calls that started from {@code fromMillis} to {@code toMillis} (excluded). */
    List<CallEnd> startedBetween(long fromMillis, long toMillis) {
      return calls.stream()
          .filter(c -> c.startMillis() >= fromMillis && c.startMillis() < toMillis)
          .toList();
    }

    /** The {@code p}-th percentile (0-100) of the time to failure of those calls, in ms. */
    long percentileMillis(long fromMillis, double p) {
      return percentileMillis(startedAfter(fromMillis), p);
    }

    /**
     * The median time of the healthy calls, which started from 750 to 250 ms before the origin
     * died: what one request costs on this machine now, as a failing call's does.
     */
    long healthyMedianMillis() {
      return percentileMillis(startedBetween(-750, -250), 50);
    }

    static long percentileMillis(List<CallEnd> calls, double p) {
      long[] millis = calls.stream().mapToLong(CallEnd::millis).sorted().toArray();
      return millis.length == 0 ? -1 : millis[index(millis.length, p)];
    }

    double requestsPerCall(long fromMillis) {
      return startedAfter(fromMillis).stream().mapToInt(CallEnd::requests).average().orElse(0);
    }
  }

  /**
   * {@value #THREADS} threads calling back to back through a {@link RetryInterceptor} with the
   * default policy and the default budget ({@code budgeted}) or none, against a server that answers
   * 200 for {@value #HEALTHY_MILLIS} ms and then 503 to everything; the loop runs for {@value
   * #DEAD_MILLIS} ms of that death. Every {@value #SAMPLE_MILLIS} ms, how many threads are inside a
   * wait: between a retry's announcement ({@link RetryListener#onRetryScheduled}) and the next
   * attempt's start or the call's end; and how many are parked (their state waiting or timed
   * waiting, as a thread asleep in a backoff is, and one in socket I/O is not). Each call's
   * requests are {@link RetryOutcome#requestsSent}.
   */
  static Loop deadOriginLoop(boolean budgeted) throws Exception {
    OkHttpClient base =
        new OkHttpClient.Builder()
            .connectionPool(new ConnectionPool(2 * THREADS, 5, TimeUnit.MINUTES))
            .build();
    AtomicIntegerArray waiting = new AtomicIntegerArray(THREADS);
    AtomicReferenceArray<Thread> loopThreads = new AtomicReferenceArray<>(THREADS);
    ThreadLocal<@Nullable Integer> index = new ThreadLocal<>();
    RetryListener asleep =
        new RetryListener() {
          void set(int value) {
            Integer i = index.get();
            if (i != null) waiting.set(i, value);
          }

          @Override
          public void onRetryScheduled(Request request, int attempt, String reason, long delay) {
            set(1);
          }

          @Override
          public void onAttemptStarted(Request request, int attempt) {
            set(0);
          }

          @Override
          public void onGaveUp(Request request, int attempts, GiveUpReason reason, String last) {
            set(0);
          }

          @Override
          public void onSucceeded(Request request, Response response, int attempts) {
            set(0);
          }
        };
    RetryPolicy.Builder b = RetryPolicy.builder().listener(asleep);
    if (!budgeted) b.retryBudget(RetryBudget.unlimited());
    OkHttpClient client = RetryInterceptor.create(b.build()).install(base.newBuilder()).build();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    try (MockWebServer server = new MockWebServer()) {
      long startNanos = System.nanoTime();
      long deathNanos = startNanos + TimeUnit.MILLISECONDS.toNanos(HEALTHY_MILLIS);
      long stopNanos = deathNanos + TimeUnit.MILLISECONDS.toNanos(DEAD_MILLIS);
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              return System.nanoTime() < deathNanos
                  ? new MockResponse.Builder().body("ok").build()
                  : new MockResponse.Builder().code(503).body("down for maintenance").build();
            }
          });
      server.start();
      Request request = new Request.Builder().url(server.url("/")).build();
      List<Asleep> samples = new ArrayList<>();
      sampler.scheduleAtFixedRate(
          () -> {
            long now = System.nanoTime();
            int n = 0;
            int parked = 0;
            for (int i = 0; i < THREADS; i++) {
              n += waiting.get(i);
              Thread t = loopThreads.get(i);
              Thread.State state = t == null ? Thread.State.NEW : t.getState();
              if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) parked++;
            }
            synchronized (samples) {
              samples.add(new Asleep(TimeUnit.NANOSECONDS.toMillis(now - deathNanos), n, parked));
            }
            try {
              HeldCostRealServerTest.forgetRecordedRequests(server);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          },
          0,
          SAMPLE_MILLIS,
          TimeUnit.MILLISECONDS);
      List<Future<List<CallEnd>>> loops = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int me = t;
        loops.add(
            pool.submit(
                () -> {
                  index.set(me);
                  loopThreads.set(me, Thread.currentThread());
                  List<CallEnd> ends = new ArrayList<>();
                  while (System.nanoTime() < stopNanos) {
                    long start = System.nanoTime();
                    int requests;
                    try (Response response = client.newCall(request).execute()) {
                      response.body().string();
                      requests = RetryOutcome.of(response).requestsSent();
                    } catch (IOException e) {
                      RetryOutcome outcome = RetryOutcome.of(e);
                      requests = outcome == null ? 1 : outcome.requestsSent();
                    }
                    long end = System.nanoTime();
                    waiting.set(me, 0);
                    ends.add(
                        new CallEnd(
                            TimeUnit.NANOSECONDS.toMillis(start - deathNanos),
                            TimeUnit.NANOSECONDS.toMillis(end - start),
                            requests));
                  }
                  return ends;
                }));
      }
      List<CallEnd> calls = new ArrayList<>();
      for (Future<List<CallEnd>> f : loops) calls.addAll(f.get(60, TimeUnit.SECONDS));
      sampler.shutdownNow();
      assertThat(sampler.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      synchronized (samples) {
        return new Loop(calls, List.copyOf(samples));
      }
    } finally {
      sampler.shutdownNow();
      pool.shutdownNow();
      HeldCostRealServerTest.shutDown(base);
    }
  }

  @Test
  void aBusyBlockingClientFailsFastOnceItsOriginHasBeenDeadAWhile() throws Exception {
    Loop budgeted = deadOriginLoop(true);
    Loop unlimited = deadOriginLoop(false);
    printTable(budgeted, unlimited);
    // Issue 42 asks for <= 10 ms (p50) from calls that start after the origin failed everything
    // for longer than the policy's schedule (2 x 1.4 s with the defaults, so ~2.8 s): one request,
    // answered at once. Here 4 s, and 50 ms on top of what one request takes this client now (its
    // healthy calls' median): 50 threads back to back on a shared 2-core machine take tens of ms
    // a request (48 ms measured beside four other builds), as a call that fails fast would.
    long from = 4_000;
    long healthy = budgeted.healthyMedianMillis();
    assertThat(budgeted.startedAfter(from)).isNotEmpty();
    assertThat(budgeted.percentileMillis(from, 50))
        .as(
            "p50 time to failure of calls started %d ms into the outage (a healthy call: %d ms)",
            from, healthy)
        .isLessThanOrEqualTo(50 + Math.max(0, healthy));
    assertThat(budgeted.requestsPerCall(from))
        .as("requests per call started %d ms into the outage", from)
        .isLessThanOrEqualTo(1.10);
  }

  static void printTable(Loop budgeted, Loop unlimited) {
    if (!Diagnostics.PRINT) return;
    Diagnostics.printf(
        "%d blocking threads back to back, origin dead from 0 s for %d s; calls started in each"
            + " %d ms: default budget | no budget%n",
        THREADS, DEAD_MILLIS / 1000, SAMPLE_MILLIS);
    Diagnostics.printf(
        "%8s | %7s %6s %6s %8s %8s %6s | %7s %6s %6s %8s %8s %6s%n",
        "t (s)", "asleep", "parked", "calls", "p50 ms", "p99 ms", "req/c", "asleep", "parked",
        "calls", "p50 ms", "p99 ms", "req/c");
    for (long at = -HEALTHY_MILLIS; at < DEAD_MILLIS; at += SAMPLE_MILLIS) {
      Diagnostics.printf("%8.2f | %s | %s%n", at / 1000.0, row(budgeted, at), row(unlimited, at));
    }
    Diagnostics.printf(
        "healthy calls (started 0.75 to 0.25 s before the outage): default budget p50 %d ms; no"
            + " budget p50 %d ms%n",
        budgeted.healthyMedianMillis(), unlimited.healthyMedianMillis());
    for (long from : new long[] {3_000, 4_000}) {
      Diagnostics.printf(
          "calls started >= %d s into the outage: default budget p50 %d ms, p99 %d ms, %.3f"
              + " requests a call (%d calls); no budget p50 %d ms, p99 %d ms, %.3f (%d calls)%n",
          from / 1000,
          budgeted.percentileMillis(from, 50),
          budgeted.percentileMillis(from, 99),
          budgeted.requestsPerCall(from),
          budgeted.startedAfter(from).size(),
          unlimited.percentileMillis(from, 50),
          unlimited.percentileMillis(from, 99),
          unlimited.requestsPerCall(from),
          unlimited.startedAfter(from).size());
    }
  }

  /**
   * Threads asleep at the sample nearest {@code at} (by the listener, and parked), and the calls
   * started in its interval.
   */
  private static String row(Loop loop, long at) {
    Asleep sample = new Asleep(at, -1, -1);
    long nearest = Long.MAX_VALUE;
    for (Asleep s : loop.asleep()) {
      long d = Math.abs(s.atMillis() - at);
      if (d < nearest) {
        nearest = d;
        sample = s;
      }
    }
    long[] millis =
        loop.calls().stream()
            .filter(c -> c.startMillis() >= at && c.startMillis() < at + SAMPLE_MILLIS)
            .mapToLong(CallEnd::millis)
            .sorted()
            .toArray();
    double requests =
        loop.calls().stream()
            .filter(c -> c.startMillis() >= at && c.startMillis() < at + SAMPLE_MILLIS)
            .mapToInt(CallEnd::requests)
            .average()
            .orElse(0);
    return String.format(
        "%7d %6d %6d %8s %8s %6.2f",
        sample.threads(),
        sample.parked(),
        millis.length,
        percentile(millis, 50),
        percentile(millis, 99),
        requests);
  }

  private static String percentile(long[] sorted, double p) {
    return sorted.length == 0 ? "-" : Long.toString(sorted[index(sorted.length, p)]);
  }

  /** The index of the {@code p}-th percentile (nearest rank) of {@code n} sorted values. */
  static int index(int n, double p) {
    return (int) Math.max(0, Math.min(n - 1, Math.ceil(p / 100 * n) - 1));
  }
}
