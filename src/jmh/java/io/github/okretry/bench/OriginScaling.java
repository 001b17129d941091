package io.github.okretry.bench;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Issue 15 item 4: the cost per call of the per-origin state when a client talks to many origins
 * that all throttle. {@code N} origins (default 60 000), each answering {@code 503} with {@code
 * Retry-After: 30}, no network (an interceptor behind okretry answers). A 5 s deadline makes every
 * call return the 503 at once (30 s does not fit), so only okretry's own work is timed. Each mode
 * makes {@code passes} passes over all origins (default 3; pass 1 meets every origin for the first
 * time, later passes meet closed origins or, past the table's bound, evicted ones) and prints µs
 * per call per pass, then the heap retained by the interceptor after a full GC.
 *
 * <p>Run: {@code bench/run.sh origins [N] [passes]}.
 */
public final class OriginScaling {

  public static void main(String[] args) throws Exception {
    int origins = args.length > 0 ? Integer.parseInt(args[0]) : 60_000;
    int passes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    System.out.printf(
        "%d origins, each 503 Retry-After: 30; deadline 5 s; %d passes%n", origins, passes);
    // Warm both paths up on a separate set of origins first, so the JIT has compiled them.
    run("warm-up gate off", false, 20_000, 2, "w");
    run("warm-up gate on", true, 20_000, 2, "w");
    double off = run("gate off", false, origins, passes, "o");
    double on = run("gate on", true, origins, passes, "o");
    System.out.printf("gate on / gate off, mean of passes 2..%d: %.2fx%n", passes, on / off);
  }

  /** Returns the mean µs per call over passes 2..n. */
  static double run(String name, boolean gate, int origins, int passes, String prefix) {
    Request[] requests = new Request[origins];
    for (int i = 0; i < origins; i++) {
      requests[i] = new Request.Builder().url("http://" + prefix + i + ".example.test/").build();
    }
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .originWideRetryAfter(gate)
                .deadline(Duration.ofSeconds(5))
                .build());
    OkHttpClient client =
        new OkHttpClient.Builder().addInterceptor(retry).addInterceptor(SERVER).build();
    double later = 0;
    StringBuilder line = new StringBuilder(String.format("%-17s µs/call by pass:", name));
    for (int p = 1; p <= passes; p++) {
      long start = System.nanoTime();
      for (Request r : requests) {
        try (Response response = client.newCall(r).execute()) {
          if (response.code() != 503) throw new AssertionError(response.code());
        } catch (java.io.IOException e) {
          throw new AssertionError(e);
        }
      }
      double micros = (System.nanoTime() - start) / 1e3 / origins;
      line.append(String.format(" %.2f", micros));
      if (p > 1) later += micros;
    }
    client.dispatcher().executorService().shutdown();
    // What the interceptor holds: the heap with it, less the heap once it is gone.
    long with = usedHeapAfterGc();
    if (retry.toString().isEmpty() || client.interceptors().isEmpty()) {
      System.out.print(""); // keep both alive to here
    }
    retry = null;
    client = null;
    long without = usedHeapAfterGc();
    line.append(String.format("   heap held by the interceptor: %.2f MB", (with - without) / 1e6));
    if (requests.length < 0) System.out.print(""); // the requests stay alive through both measures
    System.out.println(line);
    return passes > 1 ? later / (passes - 1) : 0;
  }

  static final Interceptor SERVER =
      chain ->
          new Response.Builder()
              .request(chain.request())
              .protocol(Protocol.HTTP_1_1)
              .code(503)
              .message("Service Unavailable")
              .header("Retry-After", "30")
              .body(ResponseBody.create("", (MediaType) null))
              .build();

  static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
