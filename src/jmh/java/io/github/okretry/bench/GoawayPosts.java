package io.github.okretry.bench;

import io.github.okretry.IdempotencyKey;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryListener;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Issue 14.3: keyless POSTs over cleartext HTTP/2 (prior knowledge) to a real server that keeps
 * sending GOAWAY (nginx reloaded every 250 ms by {@code bench/goaway.sh}). Each POST carries a
 * unique {@code X-Call-Id}, which the server logs, so every failed call is classified by whether
 * the server ever received it. okretry's retries are counted by reason (its listener's {@code
 * onRetryScheduled}).
 *
 * <p>Modes: {@code bare} (OkHttp alone, its {@code retryOnConnectionFailure} on), {@code
 * okretry-key} (okretry's defaults: a generated key), {@code okretry-none} (okretry with {@link
 * IdempotencyKey#none()}: repeated only when the server provably did not process it).
 *
 * <p>Arguments: {@code baseUrl accessLog [calls=3000] [threads=8]
 * [modes=bare,okretry-key,okretry-none]}. The access log's lines must start with the call id
 * ({@code log_format calls '$http_x_call_id $status';}). {@code -Dgoaway.traces=true} prints each
 * failure's stack trace.
 */
public final class GoawayPosts {

  private static final MediaType JSON = MediaType.get("application/json");

  public static void main(String[] args) throws Exception {
    String baseUrl = args[0];
    Path accessLog = Path.of(args[1]);
    int calls = args.length > 2 ? Integer.parseInt(args[2]) : 3_000;
    int threads = args.length > 3 ? Integer.parseInt(args[3]) : 8;
    String[] modes = (args.length > 4 ? args[4] : "bare,okretry-key,okretry-none").split(",");
    String run = Long.toString(System.currentTimeMillis(), 36);
    for (String mode : modes) {
      runMode(mode, baseUrl, accessLog, calls, threads, run + "-" + mode);
    }
  }

  record Failure(String id, String exception) {}

  static void runMode(
      String mode, String baseUrl, Path accessLog, int calls, int threads, String idPrefix)
      throws Exception {
    OkHttpClient.Builder builder =
        new OkHttpClient.Builder().protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    Map<String, Integer> retriesByReason = new TreeMap<>();
    if (!mode.equals("bare")) {
      RetryListener countRetries =
          new RetryListener() {
            @Override
            public void onRetryScheduled(
                Request request, int attempt, String reason, long delayNanos) {
              synchronized (retriesByReason) {
                retriesByReason.merge(reason, 1, Integer::sum);
              }
            }
          };
      RetryInterceptor.create(RetryPolicy.builder().listener(countRetries).build())
          .install(builder);
    }
    OkHttpClient client = builder.build();

    AtomicInteger next = new AtomicInteger();
    AtomicInteger ok = new AtomicInteger();
    ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();
    CountDownLatch done = new CountDownLatch(threads);
    long start = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  for (int i; (i = next.getAndIncrement()) < calls; ) {
                    String id = idPrefix + "-" + i;
                    Request.Builder request =
                        new Request.Builder()
                            .url(baseUrl)
                            .header("X-Call-Id", id)
                            .post(RequestBody.create("{\"order\":" + i + "}", JSON));
                    if (mode.equals("okretry-none")) {
                      request.tag(IdempotencyKey.class, IdempotencyKey.none());
                    }
                    try (Response response = client.newCall(request.build()).execute()) {
                      response.body().string();
                      if (response.code() == 200) ok.incrementAndGet();
                      else failures.add(new Failure(id, "HTTP " + response.code()));
                    } catch (IOException e) {
                      failures.add(new Failure(id, describe(e)));
                      if (Boolean.getBoolean("goaway.traces")) e.printStackTrace();
                    }
                  }
                } finally {
                  done.countDown();
                }
              },
              "goaway-" + t);
      thread.start();
    }
    done.await();
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();

    Thread.sleep(1_000); // nginx writes a log line when a request ends
    Map<String, Integer> received = new HashMap<>();
    for (String line : Files.readAllLines(accessLog, StandardCharsets.UTF_8)) {
      int space = line.indexOf(' ');
      String id = space < 0 ? line : line.substring(0, space);
      if (id.startsWith(idPrefix + "-")) received.merge(id, 1, Integer::sum);
    }
    int receivedTwice = 0;
    for (int n : received.values()) {
      if (n > 1) {
        receivedTwice++;
      }
    }
    int neverReceived = 0;
    Map<String, Integer> byException = new TreeMap<>();
    List<String> details = new ArrayList<>();
    for (Failure f : failures) {
      int times = received.getOrDefault(f.id(), 0);
      if (times == 0) neverReceived++;
      byException.merge(
          f.exception() + (times == 0 ? " [never received]" : " [received]"), 1, Integer::sum);
      details.add("  " + f.id() + ": " + f.exception() + ", received " + times + "x");
    }
    System.out.printf(
        "%-13s calls=%d ok=%d failed=%d failed-never-received=%d received-twice=%d server-saw=%d"
            + " elapsed=%d ms%n",
        mode,
        calls,
        ok.get(),
        failures.size(),
        neverReceived,
        receivedTwice,
        received.size(),
        elapsedMs);
    byException.forEach((k, v) -> System.out.printf("  %5d  %s%n", v, k));
    retriesByReason.forEach((k, v) -> System.out.printf("  %5d  retried: %s%n", v, k));
    if (details.size() <= 20) details.forEach(System.out::println);
  }

  static String describe(IOException e) {
    StringBuilder s = new StringBuilder(e.getClass().getSimpleName());
    if (e.getMessage() != null) s.append(": ").append(e.getMessage());
    if (e.getCause() != null) {
      s.append(" (cause ").append(e.getCause().getClass().getSimpleName()).append(')');
    }
    return s.toString();
  }
}
