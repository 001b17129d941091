package io.github.okretry.bench;

import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Issue 15.7: the heap a failed call's final exception holds through its suppressed list. One call
 * with {@code maxRetries} retries (argument, default 50 000) against an interceptor that fails
 * every attempt with a new {@link SocketTimeoutException}; waits of at most 1 ns, no budget. Prints
 * the attempts, the suppressed count and the heap still held after GC.
 */
public final class SuppressedMemory {

  public static void main(String[] args) throws Exception {
    int retries = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
    AtomicInteger attempts = new AtomicInteger();
    OkHttpClient client =
        new OkHttpClient.Builder()
            .addInterceptor(
                RetryInterceptor.create(
                    RetryPolicy.builder()
                        .maxRetries(retries)
                        .baseDelay(Duration.ofNanos(1))
                        .maxDelay(Duration.ofNanos(1))
                        .retryBudget(RetryBudget.unlimited())
                        .build()))
            .addInterceptor(
                chain -> {
                  throw new SocketTimeoutException("timeout " + attempts.incrementAndGet());
                })
            .build();
    Runtime rt = Runtime.getRuntime();
    gc();
    long before = rt.totalMemory() - rt.freeMemory();
    IOException kept = null;
    long start = System.nanoTime();
    try {
      client.newCall(new Request.Builder().url("http://example.test/").build()).execute().close();
    } catch (IOException e) {
      kept = e;
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    gc();
    long after = rt.totalMemory() - rt.freeMemory();
    System.out.printf(
        "%d attempts in %d ms: %d suppressed on the final exception, %.1f MB of heap held after"
            + " GC%n",
        attempts.get(), ms, kept == null ? 0 : kept.getSuppressed().length, (after - before) / 1e6);
    if (kept != null && kept.getSuppressed().length <= 20) {
      for (Throwable t : kept.getSuppressed()) System.out.println("  suppressed: " + t);
    }
    client.dispatcher().executorService().shutdown();
  }

  private static void gc() throws InterruptedException {
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(20);
    }
  }
}
