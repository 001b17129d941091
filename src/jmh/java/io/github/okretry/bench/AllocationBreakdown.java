package io.github.okretry.bench;

import com.sun.management.ThreadMXBean;
import io.github.okretry.RetryInterceptor;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Issue 5.1, where the bytes of a GET go: the calling thread's allocation per call (which, unlike
 * JMH's {@code gc.alloc.rate.norm}, leaves out the in-process server) for bare OkHttp, a no-op
 * application interceptor, a no-op network interceptor, okretry's network interceptor alone (the
 * Retry-After guard), {@code addInterceptor(retry)}, and {@code retry.install(builder)}. The
 * differences separate okretry's own allocation from OkHttp's copy of the chain that every
 * interceptor costs.
 *
 * <p>Arguments: {@code [calls per measurement] [rounds]}, default 40000 and 3.
 */
public final class AllocationBreakdown {

  public static void main(String[] args) throws IOException {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 40_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Map<String, Function<OkHttpClient.Builder, OkHttpClient.Builder>> variants =
        new LinkedHashMap<>();
    variants.put("bare", b -> b);
    variants.put(
        "no-op application interceptor", b -> b.addInterceptor(c -> c.proceed(c.request())));
    variants.put(
        "no-op network interceptor", b -> b.addNetworkInterceptor(c -> c.proceed(c.request())));
    variants.put(
        "okretry's network interceptor alone",
        b ->
            b.addNetworkInterceptor(
                RetryInterceptor.create()
                    .install(new OkHttpClient.Builder())
                    .networkInterceptors()
                    .get(0)));
    variants.put("addInterceptor(retry)", b -> b.addInterceptor(RetryInterceptor.create()));
    variants.put("retry.install(builder)", b -> RetryInterceptor.create().install(b));
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long self = Thread.currentThread().getId();
    try (TinyHttpServer server = TinyHttpServer.ok()) {
      Request get = new Request.Builder().url(server.url("/item")).build();
      Map<String, double[]> perCall = new LinkedHashMap<>();
      for (String name : variants.keySet()) perCall.put(name, new double[rounds]);
      for (int round = 0; round < rounds; round++) {
        for (Map.Entry<String, Function<OkHttpClient.Builder, OkHttpClient.Builder>> v :
            variants.entrySet()) {
          OkHttpClient client = v.getValue().apply(new OkHttpClient.Builder()).build();
          run(client, get, calls); // warm-up: JIT, connection
          long before = threads.getThreadAllocatedBytes(self);
          run(client, get, calls);
          perCall.get(v.getKey())[round] =
              (threads.getThreadAllocatedBytes(self) - before) / (double) calls;
          client.connectionPool().evictAll();
        }
      }
      System.out.println(
          "| GET, "
              + calls
              + " calls per measurement | calling thread B/call, per round | extra vs bare (mean)"
              + " |");
      System.out.println("|---|---|---:|");
      double bare = mean(perCall.get("bare"));
      for (Map.Entry<String, double[]> e : perCall.entrySet()) {
        StringBuilder each = new StringBuilder();
        for (double d : e.getValue()) {
          each.append(each.length() == 0 ? "" : " / ").append(String.format("%.0f", d));
        }
        System.out.printf("| %s | %s | %+.0f |%n", e.getKey(), each, mean(e.getValue()) - bare);
      }
    }
  }

  private static void run(OkHttpClient client, Request request, int calls) throws IOException {
    for (int i = 0; i < calls; i++) {
      try (Response response = client.newCall(request).execute()) {
        response.body().bytes();
      }
    }
  }

  private static double mean(double[] values) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / values.length;
  }
}
