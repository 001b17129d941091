package io.github.okretry.examples;

import io.github.okretry.Jitter;
import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Fifty callers hit, all at once, a server that works on at most ten requests at a time (40 ms
 * each) and answers 503 when all ten are busy. Without jitter every rejected caller comes back at
 * the same instant, so each wave of retries again finds ten free workers and rejects the rest,
 * while the server idles between waves; with Full Jitter (the default) the retries spread out and
 * keep the workers busy. Prints arrivals per 100 ms for each: {@code #} served, {@code x} answered
 * 503.
 */
public final class JitterHistogramExample {
  static final int CALLERS = 50;
  static final int WORKERS = 10;
  static final long SERVICE_MILLIS = 40;
  static final long SLOT_MILLIS = 100;
  private static final int SLOTS = 100; // 10 s; a run takes about 2

  /**
   * At most {@link #WORKERS} requests in progress; one more gets 503 at once.
   *
   * <p>It holds the first {@link #CALLERS} requests until all have arrived and then lets them race
   * for the workers together, so the burst really is simultaneous however slowly fifty threads get
   * started on a busy machine; from then on the timing is the clients' own.
   */
  static final class LimitedServer extends Dispatcher {
    private final CountDownLatch burst = new CountDownLatch(CALLERS);
    private final Semaphore workers = new Semaphore(WORKERS);
    private final int[] arrivals = new int[SLOTS];
    private final int[] served = new int[SLOTS];
    private long startNanos;

    synchronized long elapsedMillis() {
      return startNanos == 0 ? 0 : (System.nanoTime() - startNanos) / 1_000_000;
    }

    private synchronized int arrive() {
      if (startNanos == 0) startNanos = System.nanoTime();
      int slot = (int) Math.min(SLOTS - 1, elapsedMillis() / SLOT_MILLIS);
      arrivals[slot]++;
      return slot;
    }

    private synchronized void served(int slot) {
      served[slot]++;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
      if (burst.getCount() > 0) {
        burst.countDown();
        if (!burst.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("callers missing");
      }
      int slot = arrive();
      if (!workers.tryAcquire()) {
        // No Retry-After: it would replace the jittered backoff this example is about.
        return new MockResponse.Builder().code(503).build();
      }
      try {
        Thread.sleep(SERVICE_MILLIS); // the work
        served(slot);
        return new MockResponse.Builder().body("ok").build();
      } finally {
        workers.release();
      }
    }
  }

  public static void main(String[] args) throws Exception {
    System.out.printf(
        "%d callers at once; the server works on %d requests at a time (%d ms each)"
            + " and answers 503 when all are busy.%n",
        CALLERS, WORKERS, SERVICE_MILLIS);
    System.out.println("Arrivals per 100 ms, # served, x answered 503:");
    String none = run(Jitter.NONE);
    String full = run(Jitter.FULL);
    System.out.println();
    System.out.println("Without jitter: " + none);
    System.out.println("Full Jitter:    " + full);
  }

  /** Runs the burst, prints its histogram and returns a one-line summary. */
  private static String run(Jitter jitter) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      LimitedServer limited = new LimitedServer();
      server.setDispatcher(limited);
      server.start();

      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .jitter(jitter)
                  .baseDelay(Duration.ofMillis(100))
                  .maxDelay(Duration.ofSeconds(1))
                  .maxRetries(10)
                  .retryBudget(
                      RetryBudget.unlimited()) // show the jitter alone, not the retry budget
                  .build());
      OkHttpClient client =
          new OkHttpClient.Builder()
              .connectionPool(new ConnectionPool(CALLERS, 1, TimeUnit.MINUTES))
              .addInterceptor(retry)
              .build();
      Request request = new Request.Builder().url(server.url("/resource")).build();

      // Synchronous execute() on our own threads: OkHttp's dispatcher limits (64 calls, 5 per
      // host) apply only to enqueue(), so all fifty really are concurrent.
      ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Long>> done = new ArrayList<>();
      for (int i = 0; i < CALLERS; i++) {
        done.add(
            callers.submit(
                () -> {
                  go.await();
                  try (Response response = client.newCall(request).execute()) {
                    return response.isSuccessful() ? limited.elapsedMillis() : -1L;
                  }
                }));
      }
      go.countDown();
      int succeeded = 0;
      long lastMillis = 0;
      for (Future<Long> f : done) {
        long at = f.get(30, TimeUnit.SECONDS);
        if (at >= 0) {
          succeeded++;
          lastMillis = Math.max(lastMillis, at);
        }
      }
      callers.shutdown();
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
      return print(jitter, limited, succeeded, lastMillis);
    }
  }

  private static String print(Jitter jitter, LimitedServer server, int succeeded, long lastMillis) {
    System.out.println();
    System.out.println("Jitter." + jitter + ":");
    int requests = 0;
    int rejected = 0;
    int busySlots = 0;
    int last = 0;
    synchronized (server) {
      for (int s = 0; s < SLOTS; s++) {
        if (server.arrivals[s] > 0) {
          last = s;
        }
      }
      for (int s = 0; s <= last; s++) {
        int arrivals = server.arrivals[s];
        int served = server.served[s];
        requests += arrivals;
        rejected += arrivals - served;
        if (arrivals > 0) busySlots++;
        System.out.printf(
            "  %4.1f s |%s%s %s%n",
            s * SLOT_MILLIS / 1000.0,
            "#".repeat(served),
            "x".repeat(arrivals - served),
            arrivals == 0 ? "" : String.valueOf(arrivals));
      }
    }
    System.out.printf("  %d of %d callers succeeded%n", succeeded, CALLERS);
    return String.format(
        "%d requests (%d answered 503) spread over %d of the 100 ms slots;"
            + " the last caller was served at %d ms",
        requests, rejected, busySlots, lastMillis);
  }
}
