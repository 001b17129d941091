package io.github.okretry.examples;

import io.github.okretry.Jitter;
import io.github.okretry.RetryInterceptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
 * Fifty callers hit a server that can serve only ten requests per 100 ms at the same instant.
 * Without jitter every rejected caller comes back at the same moment, so the retries arrive in
 * spikes that the server again mostly rejects; with Full Jitter (the default) they spread out
 * and fill the server's spare capacity. Prints arrivals per 100 ms for each: {@code #} served,
 * {@code x} answered 503.
 */
public final class JitterHistogramExample {
  static final int CALLERS = 50;
  static final int CAPACITY_PER_SLOT = 10;
  static final long SLOT_MILLIS = 100;
  private static final int SLOTS = 100; // 10 s; a run takes about 2

  /** Serves at most {@link #CAPACITY_PER_SLOT} requests in each 100 ms slot; 503 for the rest. */
  static final class LimitedServer extends Dispatcher {
    private final int[] arrivals = new int[SLOTS];
    private final int[] served = new int[SLOTS];
    private long startNanos;

    synchronized void startClock() {
      startNanos = System.nanoTime();
    }

    synchronized long elapsedMillis() {
      return (System.nanoTime() - startNanos) / 1_000_000;
    }

    @Override
    public synchronized MockResponse dispatch(RecordedRequest request) {
      if (request.getUrl().encodedPath().equals("/warm-up")) return new MockResponse.Builder().build();
      int slot = (int) Math.min(SLOTS - 1, elapsedMillis() / SLOT_MILLIS);
      arrivals[slot]++;
      if (served[slot] >= CAPACITY_PER_SLOT) {
        // No Retry-After: it would replace the jittered backoff this example is about.
        return new MockResponse.Builder().code(503).build();
      }
      served[slot]++;
      return new MockResponse.Builder().body("ok").build();
    }
  }

  public static void main(String[] args) throws Exception {
    System.out.printf("%d callers at once; the server serves %d per %d ms and answers 503 to the rest.%n",
        CALLERS, CAPACITY_PER_SLOT, SLOT_MILLIS);
    System.out.println("Arrivals per 100 ms, # served, x answered 503:");
    long none = run(Jitter.NONE);
    long full = run(Jitter.FULL);
    System.out.printf("%nThe last caller got through at %d ms with Full Jitter, %d ms without: the spread"
        + " retries use the slots that lockstep retries leave idle.%n", full, none);
  }

  /** Runs the burst and returns when the last caller succeeded, in ms from the start. */
  private static long run(Jitter jitter) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      LimitedServer limited = new LimitedServer();
      server.setDispatcher(limited);
      server.start();

      RetryInterceptor retry = RetryInterceptor.builder()
          .jitter(jitter)
          .baseDelay(Duration.ofMillis(100))
          .maxDelay(Duration.ofSeconds(1))
          .maxRetries(10)
          .build();
      OkHttpClient client = new OkHttpClient.Builder()
          .connectionPool(new ConnectionPool(CALLERS, 1, TimeUnit.MINUTES))
          .addInterceptor(retry)
          .build();
      Request request = new Request.Builder().url(server.url("/resource")).build();

      // Synchronous execute() on our own threads: OkHttp's dispatcher limits (64 calls, 5 per
      // host) apply only to enqueue(), so all fifty really are concurrent.
      ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
      warmUp(client, server, callers);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Long>> done = new ArrayList<>();
      for (int i = 0; i < CALLERS; i++) {
        done.add(callers.submit(() -> {
          go.await();
          try (Response response = client.newCall(request).execute()) {
            return response.isSuccessful() ? limited.elapsedMillis() : -1L;
          }
        }));
      }
      limited.startClock();
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
      print(jitter, limited, succeeded, lastMillis);
      return lastMillis;
    }
  }

  /**
   * Opens one pooled connection per caller before the clock starts, so the burst is not smeared
   * by fifty TCP handshakes and the waves without jitter show as the spikes they are.
   */
  private static void warmUp(OkHttpClient client, MockWebServer server, ExecutorService callers)
      throws Exception {
    CountDownLatch allIn = new CountDownLatch(CALLERS);
    List<Future<?>> warm = new ArrayList<>();
    for (int i = 0; i < CALLERS; i++) {
      warm.add(callers.submit(() -> {
        allIn.countDown();
        allIn.await(); // all at once, so each needs a connection of its own
        client.newCall(new Request.Builder().url(server.url("/warm-up")).build()).execute().close();
        return null;
      }));
    }
    for (Future<?> f : warm) f.get(30, TimeUnit.SECONDS);
  }

  private static void print(Jitter jitter, LimitedServer server, int succeeded, long lastMillis) {
    System.out.println();
    System.out.println("Jitter." + jitter + ":");
    int requests = 0;
    int rejected = 0;
    int busySlots = 0;
    int last = 0;
    synchronized (server) {
      for (int s = 0; s < SLOTS; s++) if (server.arrivals[s] > 0) last = s;
      for (int s = 0; s <= last; s++) {
        int arrivals = server.arrivals[s];
        int served = server.served[s];
        requests += arrivals;
        rejected += arrivals - served;
        if (arrivals > 0) busySlots++;
        System.out.printf("  %4.1f s |%s%s %s%n", s * SLOT_MILLIS / 1000.0,
            "#".repeat(served), "x".repeat(arrivals - served), arrivals == 0 ? "" : String.valueOf(arrivals));
      }
    }
    System.out.printf("  %d requests, %d answered 503, in %d of the 100 ms slots; %d of %d callers succeeded,"
            + " the last at %d ms%n",
        requests, rejected, busySlots, succeeded, CALLERS, lastMillis);
  }
}
