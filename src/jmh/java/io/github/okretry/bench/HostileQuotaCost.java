package io.github.okretry.bench;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;
import io.github.okretry.QuotaPacing;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import io.github.okretry.RetryingCallFactory;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Issue 30.1, end to end: what one 200 response costs the process (CPU of every thread, bytes
 * allocated by every thread, the in-process MockWebServer included) when it carries hostile quota
 * fields of 100 KB, beside a control response carrying an unrelated header of the same size. 20
 * sequential GETs per measurement, on both drivers: {@link RetryInterceptor} on an OkHttpClient
 * ({@code execute}) and {@link RetryingCallFactory#newCall}{@code .enqueue}. Quota pacing is
 * PUBLISHED (the default), so every response whose names start with {@code RateLimit} is read.
 *
 * <p>Arguments: {@code [rounds] [calls per measurement]}, default 5 and 20. Prints the mean of the
 * rounds per response kind and driver, and its ratio to the control with as many 100 KB fields
 * (process CPU is counted in ticks of about 10 ms: 0.1 ms per call over 5 x 20 calls).
 */
public final class HostileQuotaCost {
  static final int FIELD_CHARS = 100_000;

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    // Each kind is compared with the control of as many 100 KB fields.
    Map<String, Map<String, String>> kinds = new LinkedHashMap<>();
    kinds.put("control: X-Junk, 100 KB", Map.of("X-Junk", repeat("a", FIELD_CHARS)));
    kinds.put(
        "control: X-Junk + X-Junk-2, 100 KB each",
        Map.of("X-Junk", repeat("a", FIELD_CHARS), "X-Junk-2", repeat("a", FIELD_CHARS)));
    kinds.put(
        "RateLimit of ~20 000 %\"\", 100 KB", Map.of("RateLimit", list("%\"\"", FIELD_CHARS)));
    kinds.put(
        "RateLimit of 100 KB, valid members",
        Map.of("RateLimit", list(i -> "\"a" + i + "\";r=1;t=1", FIELD_CHARS)));
    kinds.put(
        "RateLimit + RateLimit-Policy, 100 KB each",
        Map.of(
            "RateLimit", list(i -> "\"a" + i + "\";r=1", FIELD_CHARS),
            "RateLimit-Policy", list(i -> "\"b" + i + "\";q=1", FIELD_CHARS)));
    try (MockWebServer server = new MockWebServer()) {
      Map<String, Map<String, String>> byPath = new HashMap<>();
      int n = 0;
      for (Map<String, String> headers : kinds.values()) byPath.put("/k" + n++, headers);
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              MockResponse.Builder b = new MockResponse.Builder().body("ok");
              byPath.get(request.getUrl().encodedPath()).forEach(b::addHeader);
              return b.build();
            }
          });
      server.start();
      RetryPolicy policy = RetryPolicy.builder().quotaPacing(QuotaPacing.PUBLISHED).build();
      OkHttpClient plain = new OkHttpClient();
      OkHttpClient intercepted =
          RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
      RetryingCallFactory factory = RetryingCallFactory.create(plain, policy);
      System.out.println(
          "| 200 response with | driver | process CPU ms/call: mean (rounds' min-max), "
              + rounds
              + " x "
              + calls
              + " GETs | allocated KB/call | vs control: CPU, KB |");
      System.out.println("|---|---|---:|---:|---:|");
      for (String driver : new String[] {"interceptor", "enqueue"}) {
        Call.Factory client = driver.equals("interceptor") ? intercepted : factory;
        double[][] controls = new double[2][]; // {cpu, KB} with one and with two 100 KB fields
        n = 0;
        for (Map.Entry<String, Map<String, String>> kind : kinds.entrySet()) {
          Request get = new Request.Builder().url(server.url("/k" + n++)).build();
          run(client, get, calls, driver); // warm-up: JIT, connection
          double[] cpu = new double[rounds];
          double bytes = 0;
          for (int r = 0; r < rounds; r++) {
            Map<Long, Long> allocatedBefore = allocatedByThread();
            long cpuBefore = processCpuNanos();
            run(client, get, calls, driver);
            cpu[r] = (processCpuNanos() - cpuBefore) / 1e6 / calls;
            bytes += allocatedSince(allocatedBefore) / 1024.0 / calls / rounds;
          }
          double meanCpu = java.util.Arrays.stream(cpu).average().orElse(0);
          int fields = kind.getValue().size();
          if (controls[fields - 1] == null) controls[fields - 1] = new double[] {meanCpu, bytes};
          double[] control = controls[fields - 1];
          System.out.printf(
              "| %s | %s | %.2f (%.2f-%.2f) | %.0f | %.2fx, %+.0f |%n",
              kind.getKey(),
              driver,
              meanCpu,
              java.util.Arrays.stream(cpu).min().orElse(0),
              java.util.Arrays.stream(cpu).max().orElse(0),
              bytes,
              meanCpu / control[0],
              bytes - control[1]);
        }
      }
      factory.close();
      for (OkHttpClient c : new OkHttpClient[] {plain, intercepted}) {
        c.dispatcher().executorService().shutdown();
        c.connectionPool().evictAll();
      }
    }
  }

  static void run(Call.Factory client, Request get, int calls, String driver) throws Exception {
    for (int i = 0; i < calls; i++) {
      if (driver.equals("interceptor")) {
        try (Response response = client.newCall(get).execute()) {
          response.body().string();
        }
      } else {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        client
            .newCall(get)
            .enqueue(
                new Callback() {
                  @Override
                  public void onFailure(Call call, IOException e) {
                    done.completeExceptionally(e);
                  }

                  @Override
                  public void onResponse(Call call, Response response) throws IOException {
                    try (Response r = response) {
                      r.body().string();
                      done.complete(r.code());
                    }
                  }
                });
        done.get(60, TimeUnit.SECONDS);
      }
    }
  }

  static long processCpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  // Bytes allocated by each live thread; a thread that ends during a measurement takes its count
  // with it.
  static Map<Long, Long> allocatedByThread() {
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long[] ids = threads.getAllThreadIds();
    long[] bytes = threads.getThreadAllocatedBytes(ids);
    Map<Long, Long> byId = new HashMap<>();
    for (int i = 0; i < ids.length; i++) {
      if (bytes[i] >= 0) {
        byId.put(ids[i], bytes[i]);
      }
    }
    return byId;
  }

  static long allocatedSince(Map<Long, Long> before) {
    long sum = 0;
    for (Map.Entry<Long, Long> e : allocatedByThread().entrySet()) {
      sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
    }
    return sum;
  }

  static String repeat(String s, int chars) {
    return s.repeat(chars / s.length());
  }

  // A List of copies of one member, joined with ", ", about {@code chars} long.
  static String list(String member, int chars) {
    return list(i -> member, chars);
  }

  static String list(java.util.function.IntFunction<String> member, int chars) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; b.length() < chars; i++) b.append(i == 0 ? "" : ", ").append(member.apply(i));
    return b.toString();
  }
}
