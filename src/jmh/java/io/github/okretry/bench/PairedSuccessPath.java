package io.github.okretry.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Issue 5.1, cross-check of {@link SuccessPathBenchmark} for a shared, noisy machine: JMH runs the
 * variants one after another, so a neighbour's build starting midway skews their ratio. Here the
 * variants take turns in short rounds (shuffled order, same server), and each round yields a ratio
 * to bare OkHttp measured within ~1 s; the median over rounds is reported. Besides wall time it
 * reports the calling thread's CPU time per call: a synchronous OkHttp call does all its
 * client-side work on the calling thread, and CPU time is far less disturbed by neighbours than
 * wall time (which also includes the server thread and the scheduler's decisions).
 *
 * <p>Arguments: {@code [rounds] [calls per turn]}, default 30 and 3000.
 */
public final class PairedSuccessPath {

  private static final String[] VARIANTS = {"bare", "okretry", "failsafe", "resilience4j"};
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  public static void main(String[] args) throws IOException {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
    try (TinyHttpServer server = TinyHttpServer.ok()) {
      Request get = Peers.get(server.url(""));
      Request post = Peers.post(server.url(""));
      Map<String, Peers.Executor> executors = new LinkedHashMap<>();
      for (String v : VARIANTS) executors.put(v, Peers.create(v, new OkHttpClient()));
      System.out.println(
          "| method | variant | wall µs/call | wall ratio to bare (p25–p75) | client CPU µs/call |"
              + " CPU ratio to bare (p25–p75) |");
      System.out.println("|---|---|---:|---:|---:|---:|");
      for (Request request : List.of(get, post)) {
        for (int i = 0; i < 3; i++) { // warm-up
          for (Peers.Executor e : executors.values()) turn(e, request, calls);
        }
        Map<String, double[]> micros = new LinkedHashMap<>();
        Map<String, double[]> cpu = new LinkedHashMap<>();
        for (String v : VARIANTS) {
          micros.put(v, new double[rounds]);
          cpu.put(v, new double[rounds]);
        }
        List<String> order = new ArrayList<>(Arrays.asList(VARIANTS));
        Random shuffle = new Random(42);
        for (int r = 0; r < rounds; r++) {
          Collections.shuffle(order, shuffle);
          for (String v : order) {
            double[] t = turn(executors.get(v), request, calls);
            micros.get(v)[r] = t[0];
            cpu.get(v)[r] = t[1];
          }
        }
        for (String v : VARIANTS) {
          double[] ratio = new double[rounds];
          double[] cpuRatio = new double[rounds];
          for (int r = 0; r < rounds; r++) {
            ratio[r] = micros.get(v)[r] / micros.get("bare")[r];
            cpuRatio[r] = cpu.get(v)[r] / cpu.get("bare")[r];
          }
          System.out.printf(
              "| %s | %s | %.2f | %.3f (%.3f–%.3f) | %.2f | %.3f (%.3f–%.3f) |%n",
              request.method(),
              v,
              percentile(micros.get(v), 50),
              percentile(ratio, 50),
              percentile(ratio, 25),
              percentile(ratio, 75),
              percentile(cpu.get(v), 50),
              percentile(cpuRatio, 50),
              percentile(cpuRatio, 25),
              percentile(cpuRatio, 75));
        }
      }
    }
  }

  /** Wall and calling-thread CPU microseconds per call. */
  private static double[] turn(Peers.Executor executor, Request request, int calls)
      throws IOException {
    long cpu0 = THREADS.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    for (int i = 0; i < calls; i++) Peers.callOk(executor, request);
    long wall = System.nanoTime() - t0;
    long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
    return new double[] {wall / 1000.0 / calls, cpu / 1000.0 / calls};
  }

  private static double percentile(double[] values, double p) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int i = (int) Math.round(p / 100 * (sorted.length - 1));
    return sorted[i];
  }
}
