package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One shared interceptor, 64 threads × 200 calls, a server that answers a seeded 30% of requests
 * with 503. Every call must end with 200 or with its own last 503, and the listener's books must
 * balance exactly against the server's: attempts started == requests seen, per call and in total;
 * succeeded + gave up == calls. A response carrying another call's body would show corruption.
 */
@Tag("integration")
@Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class ConcurrencyTest {

  static final long SEED = 7_2026L;
  static final int MAX_RETRIES = 3;

  static boolean fails(long seed, int call, int arrival) {
    return new SplittableRandom(seed * 1_000_003L + call * 16L + arrival).nextInt(100) < 30;
  }

  @Test
  void booksBalanceUnderLoad() throws Exception {
    run(64, 200, SEED);
  }

  static void run(int threads, int callsPerThread, long seed) throws Exception {
    final int calls = threads * callsPerThread;
    AtomicIntegerArray arrivals = new AtomicIntegerArray(calls);
    AtomicIntegerArray attempts = new AtomicIntegerArray(calls);
    LongAdder attemptsStarted = new LongAdder();
    LongAdder retriesScheduled = new LongAdder();
    LongAdder succeeded = new LongAdder();
    Map<GiveUpReason, LongAdder> gaveUp = new ConcurrentHashMap<>();
    Dispatcher flaky =
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            int call = Integer.parseInt(request.getUrl().pathSegments().get(1));
            int arrival = arrivals.incrementAndGet(call);
            return fails(seed, call, arrival)
                ? new MockResponse.Builder().code(503).body("busy-" + call + "-" + arrival).build()
                : new MockResponse.Builder().body("ok-" + call + "-" + arrival).build();
          }
        };
    RetryListener books =
        new RetryListener() {
          @Override
          public void onAttemptStarted(Request request, int attempt) {
            attemptsStarted.increment();
            int call = Integer.parseInt(request.url().pathSegments().get(1));
            // Attempts of one call arrive in order, numbered from 1, on the caller's thread.
            assertThat(attempts.incrementAndGet(call)).isEqualTo(attempt);
          }

          @Override
          public void onRetryScheduled(
              Request request, int attempt, String reason, long delayNanos) {
            retriesScheduled.increment();
          }

          @Override
          public void onSucceeded(Request request, Response response, int attempts) {
            succeeded.increment();
          }

          @Override
          public void onGaveUp(
              Request request, int attempts, GiveUpReason reason, String lastFailure) {
            gaveUp.computeIfAbsent(reason, r -> new LongAdder()).increment();
          }
        };
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .maxRetries(MAX_RETRIES)
                .baseDelay(Duration.ofMillis(1))
                .maxDelay(Duration.ofMillis(5))
                // Unlimited, so each call's attempts follow the seeded server exactly; the budget's
                // own behaviour under concurrency is RetryBudgetTest's subject.
                .retryBudget(RetryBudget.unlimited())
                .listener(books)
                .build());

    Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    AtomicIntegerArray finalCode = new AtomicIntegerArray(calls);
    long started = System.nanoTime();
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(flaky);
      server.start();
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .addInterceptor(retry)
                  .connectionPool(new ConnectionPool(threads, 1, TimeUnit.MINUTES))
                  .build());
      CountDownLatch done = new CountDownLatch(threads);
      Map<String, Throwable> crashes = new ConcurrentHashMap<>();
      Thread[] workers = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        int thread = t;
        workers[t] =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; i < callsPerThread; i++) {
                      int call = thread * callsPerThread + i;
                      Request request = new Request.Builder().url(server.url("/c/" + call)).build();
                      try (Response response = client.newCall(request).execute()) {
                        String body = response.body().string();
                        finalCode.set(call, response.code());
                        String prefix = (response.code() == 200 ? "ok-" : "busy-") + call + "-";
                        assertThat(body).as("call %d", call).startsWith(prefix);
                        // The body of this call's last arrival: nothing crossed between calls.
                        assertThat(body).isEqualTo(prefix + arrivals.get(call));
                        outcomes
                            .computeIfAbsent(String.valueOf(response.code()), c -> new LongAdder())
                            .increment();
                      }
                    }
                  } catch (IOException | RuntimeException | AssertionError e) {
                    crashes.put("thread " + thread, e);
                  } finally {
                    done.countDown();
                  }
                },
                "load-" + t);
        workers[t].start();
      }
      assertThat(done.await(30, TimeUnit.MINUTES)).isTrue();
      for (Thread t : workers) t.join();
      assertThat(crashes).isEmpty();

      long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      long gaveUpTotal = gaveUp.values().stream().mapToLong(LongAdder::sum).sum();
      Map<Integer, Integer> histogram = new TreeMap<>();
      for (int c = 0; c < calls; c++) histogram.merge(attempts.get(c), 1, Integer::sum);
      Map<GiveUpReason, Long> reasons = new EnumMap<>(GiveUpReason.class);
      gaveUp.forEach((k, v) -> reasons.put(k, v.sum()));
      Diagnostics.printf(
          "Concurrency: %d threads x %d calls = %d calls in %d ms (%.0f calls/s); server"
              + " requests=%d, attempts started=%d, retries scheduled=%d, succeeded=%d, gave up=%d"
              + " %s, final codes %s%n",
          threads,
          callsPerThread,
          calls,
          elapsedMs,
          calls * 1000.0 / Math.max(1, elapsedMs),
          server.getRequestCount(),
          attemptsStarted.sum(),
          retriesScheduled.sum(),
          succeeded.sum(),
          gaveUpTotal,
          reasons,
          new TreeMap<>(outcomes));
      Diagnostics.println("Concurrency: attempts per call (attempts -> calls) " + histogram);

      assertThat(attemptsStarted.sum()).isEqualTo(server.getRequestCount());
      assertThat(succeeded.sum() + gaveUpTotal).isEqualTo(calls);
      assertThat(retriesScheduled.sum()).isEqualTo(attemptsStarted.sum() - calls);
      assertThat(reasons.keySet()).containsOnly(GiveUpReason.RETRIES_EXHAUSTED);
      for (int c = 0; c < calls; c++) {
        int n = arrivals.get(c);
        assertThat(attempts.get(c)).as("call %d", c).isEqualTo(n);
        // Exactly as the seeded server decided: stop at the first success, or after the last 503.
        int expected = 1;
        while (expected <= MAX_RETRIES && fails(seed, c, expected)) expected++;
        assertThat(n).as("arrivals of call %d", c).isEqualTo(expected);
        assertThat(finalCode.get(c)).as("call %d", c).isEqualTo(fails(seed, c, n) ? 503 : 200);
      }
    }
  }
}
