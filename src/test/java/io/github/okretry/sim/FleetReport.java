package io.github.okretry.sim;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The full fleet report: every table and plot of docs/fleet.md, written to {@code target/fleet} (or
 * {@code -Dokretry.fleet.out=docs/fleet}). About a minute: {@code mvn test
 * -Dokretry.excludedGroups= -Dgroups=soak -Dtest=FleetReport}.
 */
@Tag("soak")
class FleetReport {

  static final List<Fleet.Contender> ALL = new ArrayList<>();

  static {
    ALL.add(Peers.OKRETRY);
    ALL.add(Peers.OKRETRY_STRICT);
    ALL.addAll(Peers.PEERS);
  }

  static final Color[] COLORS = {
    new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xd62728), new Color(0xff7f0e),
    new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)
  };

  /**
   * Issue 20's published-quota scenario (QuotaFleet): the table of docs/fleet.md, to {@code
   * quota.md}.
   */
  @Test
  void publishedQuota() throws IOException {
    Path out = outDir();
    StringBuilder md = new StringBuilder();
    md.append(
        "| crowd | quota pacing | all through (of 100 seeds) | attempts per call: mean / worst |"
            + " makespan s: mean / worst |\n");
    md.append("| --- | --- | --- | --- | --- |\n");
    long wall0 = System.nanoTime();
    for (int[] crowd : new int[][] {{1, 40}, {3, 20}}) {
      for (io.github.okretry.QuotaPacing p : io.github.okretry.QuotaPacing.values()) {
        FleetScenarios.QuotaRow r = FleetScenarios.publishedQuota(crowd[0], crowd[1], p, 100);
        md.append(
            FleetScenarios.f(
                "| %s | %s | %.0f %% | %.3f / %.3f | %.2f / %.2f |\n",
                r.name(),
                p,
                100 * r.allThrough(),
                r.meanAttemptsPerCall(),
                r.worstAttemptsPerCall(),
                r.meanMakespan(),
                r.worstMakespan()));
      }
    }
    md.append(
        FleetScenarios.f(
            "\n%d runs in %.1f s of wall time.\n", 600, (System.nanoTime() - wall0) / 1e9));
    Files.writeString(out.resolve("quota.md"), md);
    // The plot: each seed's makespan (1 × 40) and attempts per call (3 × 20), sorted, per mode.
    List<String> names = new java.util.ArrayList<>();
    List<double[]> makespans = new java.util.ArrayList<>();
    List<double[]> shared = new java.util.ArrayList<>();
    for (io.github.okretry.QuotaPacing p : io.github.okretry.QuotaPacing.values()) {
      double[] m = new double[100];
      double[] a = new double[100];
      for (int seed = 1; seed <= 100; seed++) {
        m[seed - 1] = new QuotaFleet(1, 40, 20, seed).run(p).makespanSeconds();
        a[seed - 1] = new QuotaFleet(3, 20, 20, seed).run(p).attemptsPerCall();
      }
      java.util.Arrays.sort(m);
      java.util.Arrays.sort(a);
      names.add(p.toString());
      makespans.add(m);
      shared.add(a);
    }
    lineChart(
        out.resolve("quota-makespan.png").toFile(),
        "Published quota, 1 × 40 at once vs 20/s: makespan (s) of each of 100 seeds, sorted",
        "seeds, sorted",
        names,
        makespans,
        0,
        4,
        0.5);
    lineChart(
        out.resolve("quota-shared.png").toFile(),
        "Published quota, 3 × 20 sharing one 20/s quota: attempts per call of each of 100 seeds,"
            + " sorted",
        "seeds, sorted",
        names,
        shared,
        0.8,
        2.2,
        0.2);
    System.out.print(md);
  }

  /**
   * Hedging in a fleet (issue 21): the capacity cut at two loads and a healthy tail, to {@code
   * hedging.md}.
   */
  @Test
  void hedging() throws IOException {
    Path out = outDir();
    StringBuilder md = new StringBuilder();
    md.append(
        "| policy | cut, 140/s: back after the cut, seed 1 / worst of seeds 1-10 | amplification |"
            + " p50 / p99 before the cut | cut, 180/s: back within 5 s (of 10 seeds) / latest |"
            + " amplification | healthy tail: p50 / p99 / p99.9 | amplification |\n");
    md.append("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    long wall0 = System.nanoTime();
    int runs = 0;
    for (Fleet.Contender c : FleetScenarios.HEDGING) {
      Fleet.Result cut = FleetScenarios.capacityCut(c, 1);
      int back = FleetScenarios.recoverySeconds(cut, 20, 58);
      int worst = back;
      int within = 0;
      int latest = 0;
      double loadedAmp = 0;
      for (long seed = 1; seed <= 10; seed++) {
        if (seed > 1) {
          worst =
              worse(
                  worst,
                  FleetScenarios.recoverySeconds(FleetScenarios.capacityCut(c, seed), 20, 58));
        }
        Fleet.Result loaded = FleetScenarios.capacityCut(c, 18, 60, seed);
        int r = FleetScenarios.recoverySeconds(loaded, 20, 58);
        if (r >= 0 && r <= 5) within++;
        latest = worse(latest, r);
        loadedAmp += loaded.amplification() / 10;
        runs += 2;
      }
      Fleet.Result tail = FleetScenarios.healthyTail(c, 30, 1);
      runs++;
      md.append(
          FleetScenarios.f(
              "| %s | %s / %s | %.3f× (%d hedges) | %.3f / %.3f s | %d of 10 / %s | %.3f× (mean) |"
                  + " %.3f / %.3f / %.3f s | %.3f× |%n",
              c.name(),
              seconds(back),
              seconds(worst),
              cut.amplification(),
              cut.hedges,
              cut.latencySeconds(0.5, 2, 10),
              cut.latencySeconds(0.99, 2, 10),
              within,
              seconds(latest),
              loadedAmp,
              tail.latencySeconds(0.5, 2, 28),
              tail.latencySeconds(0.99, 2, 28),
              tail.latencySeconds(0.999, 2, 28),
              tail.amplification()));
    }
    md.append(
        FleetScenarios.f(
            "%n%d runs in %.1f s of wall time.%n", runs, (System.nanoTime() - wall0) / 1e9));
    Files.writeString(out.resolve("hedging.md"), md);
    System.out.print(md);
  }

  private static int worse(int a, int b) { // recovery seconds, -1 for never
    return a < 0 || b < 0 ? -1 : Math.max(a, b);
  }

  private static String seconds(int back) {
    return back < 0 ? "never (60 s)" : back + " s";
  }

  /**
   * The frontier behind {@code Tuning.TIMEOUT_COST_MILLI} (docs/fleet.md, "A retry after a
   * timeout"): the metastable run over 20 seeds and one busy client whose attempts time out at
   * random, for a retry after a timeout costing 1 to 14 tokens; to {@code timeout-cost.md}.
   */
  @Test
  void timeoutCostFrontier() throws IOException {
    Path out = outDir();
    StringBuilder md = new StringBuilder();
    md.append(
        "| a retry after a timeout costs | metastable, seeds 1-20: back within 5 s (calls counted"
            + " when they start / when they end) | busy client, 100/s, 5 % of attempts time out:"
            + " calls through | 20 % time out | lossy link, 100/s, 20 % stall past a 300 ms timeout"
            + " | cold start, 50 seeds: mean / min |\n");
    md.append("| --- | --- | --- | --- | --- | --- |\n");
    long wall0 = System.nanoTime();
    for (long tokens : new long[] {1, 2, 5, 7, 10, 14, 20}) {
      Fleet.Contender c =
          Peers.okretryOver(
              "timeout cost " + tokens,
              Peers.BudgetNumbers.DEFAULTS.withTimeoutCostMilli(tokens * 1_000));
      int[] back = FleetScenarios.metastableBackWithinFiveSeconds(c, 20);
      int byStart = back[0];
      int byEnd = back[1];
      double[] cold = FleetScenarios.coldStartOverSeeds(c, 50);
      double mean = cold[0];
      long min = (long) cold[1];
      md.append(
          FleetScenarios.f(
              "| %d tokens%s | %d / %d of 20 | %.1f %% | %.1f %% | %.2f %% | %.1f / %d |%n",
              tokens,
              tokens * 1_000 == io.github.okretry.internal.Tuning.TIMEOUT_COST_MILLI
                  ? " (the default)"
                  : "",
              byStart,
              byEnd,
              100 * FleetScenarios.flakyTimeouts(c, 0.05).successRate(),
              100 * FleetScenarios.flakyTimeouts(c, 0.2).successRate(),
              100 * FleetScenarios.lossyLink(c, 0.2, 100, 1).successRate(),
              mean,
              min));
    }
    md.append(FleetScenarios.f("%nWall time %.1f s.%n", (System.nanoTime() - wall0) / 1e9));
    Files.writeString(out.resolve("timeout-cost.md"), md);
    System.out.print(md);
  }

  /**
   * Issue 35's shapes: failures that come together, a lossy link, a client of two origins, to
   * {@code correlated.md}.
   */
  @Test
  void correlatedFailures() throws IOException {
    Path out = outDir();
    StringBuilder md = new StringBuilder();
    long wall0 = System.nanoTime();
    md.append(
        "Calls failed, summed over seeds 1-10, by a busy client (one process, Poisson arrivals)"
            + " through a blip: every attempt answered 503 at once, or its connection refused, for"
            + " the blip's length, healthy before and after.\n\n");
    md.append(
        "| policy | 503 blip 0.5 s at 20/s | 1 s at 20/s | 2 s at 20/s | 0.5 s at 300/s | 1 s at"
            + " 300/s | 2 s at 300/s | refused 0.5 s at 300/s | refused 1 s at 100/s |\n");
    md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (Fleet.Contender c : ALL) {
      md.append("| ").append(c.name()).append(" |");
      for (double[] rb :
          new double[][] {
            {20, 0.5, 0},
            {20, 1, 0},
            {20, 2, 0},
            {300, 0.5, 0},
            {300, 1, 0},
            {300, 2, 0},
            {300, 0.5, 1},
            {100, 1, 1}
          }) {
        long failed = 0;
        long calls = 0;
        for (long seed = 1; seed <= 10; seed++) {
          Fleet.Result r = FleetScenarios.blip(c, rb[0], rb[1], rb[2] == 1, seed);
          failed += r.failed();
          calls += r.calls;
        }
        md.append(FleetScenarios.f(" %d of %d |", failed, calls));
      }
      md.append('\n');
    }
    md.append(
        "\n"
            + "A lossy link: a healthy server (5 ms answers) whose attempts stall at random past"
            + " the 300 ms read timeout. 300 calls one after another (calls through), and 60 s of"
            + " Poisson arrivals at 20 and 100 calls/s (share through).\n\n");
    md.append(
        "| policy | 5 %: 300 in a row / 20/s / 100/s | 10 % | 20 % |\n| --- | --- | --- | --- |\n");
    for (Fleet.Contender c : ALL) {
      md.append("| ").append(c.name()).append(" |");
      for (double p : new double[] {0.05, 0.10, 0.20}) {
        md.append(
            FleetScenarios.f(
                " %d / %.2f %% / %.2f %% |",
                FleetScenarios.lossyLink(c, p, 0, 1).succeeded,
                100 * FleetScenarios.lossyLink(c, p, 20, 1).successRate(),
                100 * FleetScenarios.lossyLink(c, p, 100, 1).successRate()));
      }
      md.append('\n');
    }
    md.append(
        "\n"
            + "One client of two origins, 1.3 calls/s for 40 s, every other call to an origin that"
            + " answers 503 to everything; the rest to a healthy origin failing 10 % of attempts at"
            + " random, or to a path of the dead origin that OkHttp's cache answers. And a busy"
            + " client, 300 calls/s, whose server is dead from 2 s to 12 s (its calls started in"
            + " seconds 3-10).\n\n");
    md.append(
        "| policy | dead origin beside a healthy one: requests per call to the dead one (the limit:"
            + " (c + 3) / c) | the healthy one's calls through | dead path beside a cached one:"
            + " requests per call | busy client, dead server: requests per call | time to a failure"
            + " p50 / p99 |\n");
    md.append("| --- | --- | --- | --- | --- | --- |\n");
    for (Fleet.Contender c : ALL) {
      Fleet.Result two = FleetScenarios.deadBesideHealthy(c, 1.3, 1);
      Fleet.Result cached = FleetScenarios.deadBesideCached(c, 1.3, 1);
      Fleet.Result dead = FleetScenarios.busyThroughOutage(c, 300, 1);
      long deadCalls = two.calls - two.besideCalls;
      md.append(
          FleetScenarios.f(
              "| %s | %.2f× of %d calls (limit %.2f×) | %d of %d | %.2f× | %.3f× | %.2f s / %.2f s"
                  + " |%n",
              c.name(),
              two.serviceAmplification(),
              deadCalls,
              (deadCalls + 3.0) / deadCalls,
              two.besideSucceeded,
              two.besideCalls,
              cached.serviceAmplification(),
              dead.amplification(3, 11),
              dead.latencySeconds(0.5, 3, 11),
              dead.latencySeconds(0.99, 3, 11)));
    }
    md.append(FleetScenarios.f("%nWall time %.1f s.%n", (System.nanoTime() - wall0) / 1e9));
    Files.writeString(out.resolve("correlated.md"), md);
    System.out.print(md);
  }

  @Test
  void report() throws IOException {
    Path out = outDir();
    StringBuilder md = new StringBuilder();
    long wall0 = System.nanoTime();
    long[] calls = {0};

    md.append("### Quiet fleet, cold start, busy client\n\n");
    md.append(
        "Requests per call over the calls made while the server fails (for the warm fleet: the"
            + " calls started from 20 s on).\n\n");
    md.append(
        "| policy | fresh, 200 × 0.5/s, dead | fresh, 1 000 × 0.1/s, dead | warm, 200 × 0.5/s, dies"
            + " at 20 s of 40 | fresh, 200 × 0.5/s, `503 Retry-After: 1` | cold start, 50 seeds:"
            + " mean / min | cold start one after another, 10 seeds: min | busy, no Retry-After |"
            + " busy, Retry-After: 1 |\n");
    md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (Fleet.Contender c : ALL) {
      Fleet.Result q200 = FleetScenarios.quietFleet(c, 200, 0.5, 20, 1);
      Fleet.Result q1000 = FleetScenarios.quietFleet(c, 1000, 0.1, 20, 1);
      double warm = FleetScenarios.warmFleetWhileDown(c, 200, 0.5, 40, 20, 1);
      Fleet.Result ra = FleetScenarios.quietFleetRetryAfter(c, 200, 0.5, 20, 1, 1);
      double[] cold = FleetScenarios.coldStartOverSeeds(c, 50);
      double mean = cold[0];
      long min = (long) cold[1];
      long seqMin = 50;
      for (long seed = 1; seed <= 10; seed++) {
        seqMin = Math.min(seqMin, FleetScenarios.coldStartSequential(c, seed));
      }
      calls[0] += q200.calls + q1000.calls + ra.calls + 8000 + 50 * 50 + 10 * 50 + 2 * 2000;
      md.append(
          FleetScenarios.f(
              "| %s | %.2f× | %.2f× | %.2f× | %.2f× | %.1f / %d | %d / 50 | %.3f× | %.3f× |%n",
              c.name(),
              q200.amplification(),
              q1000.amplification(),
              warm,
              ra.amplification(),
              mean,
              min,
              seqMin,
              FleetScenarios.busyClientSustained(c, -1, 1),
              FleetScenarios.busyClientSustained(c, 1, 1)));
    }

    md.append("\n### Metastable retry and capacity cut\n\n");
    md.append(
        "| policy | metastable: back to ≥ 95 % after the server returns | amplification |"
            + " metastable, seeds 1-10: back within 5 s / latest (calls counted when they end) |"
            + " the same, calls counted when they start | capacity cut: back after the cut |"
            + " amplification |\n");
    md.append("| --- | --- | --- | --- | --- | --- | --- |\n");
    List<double[]> metaSeries = new ArrayList<>();
    List<double[]> cutSeries = new ArrayList<>();
    for (Fleet.Contender c : ALL) {
      Fleet.Result m = FleetScenarios.metastable(c, 1);
      Fleet.Result cut = FleetScenarios.capacityCut(c, 1);
      calls[0] += m.calls + cut.calls;
      int mr = FleetScenarios.recoverySeconds(m, 15, 58);
      int cr = FleetScenarios.recoverySeconds(cut, 20, 58);
      int within = 0;
      int latest = 0;
      int withinByStart = 0;
      int latestByStart = 0;
      for (long seed = 1; seed <= 10; seed++) {
        Fleet.Result ms = seed == 1 ? m : FleetScenarios.metastable(c, seed);
        if (seed > 1) calls[0] += ms.calls;
        int r = FleetScenarios.recoverySeconds(ms, 15, 58);
        if (r >= 0 && r <= 5) within++;
        latest = latest < 0 || r < 0 ? -1 : Math.max(latest, r);
        r = FleetScenarios.recoverySecondsByStart(ms, 15, 58);
        if (r >= 0 && r <= 5) withinByStart++;
        latestByStart = latestByStart < 0 || r < 0 ? -1 : Math.max(latestByStart, r);
      }
      md.append(
          FleetScenarios.f(
              "| %s | %s | %.2f× | %d of 10 / %s | %d of 10 / %s | %s | %.2f× |%n",
              c.name(),
              mr < 0 ? "never (60 s)" : mr + " s",
              m.amplification(),
              within,
              latest < 0 ? "never" : latest + " s",
              withinByStart,
              latestByStart < 0 ? "never" : latestByStart + " s",
              cr < 0 ? "never (60 s)" : cr + " s",
              cut.amplification()));
      metaSeries.add(ratio(m, 60));
      cutSeries.add(ratio(cut, 60));
    }
    lineChart(
        out.resolve("metastable.png").toFile(),
        "Metastable retry: goodput / offered, per second (server 0 down 5-15 s)",
        "seconds",
        metaSeries,
        0,
        1.1,
        1);
    lineChart(
        out.resolve("capacity-cut.png").toFile(),
        "Capacity cut to 20 % (10-20 s): goodput / offered, per second",
        "seconds",
        cutSeries,
        0,
        1.1,
        1);

    md.append(
        "\n"
            + "### Failure sweep (100 calls/s in all, 60 s, Poisson): success rate /"
            + " amplification\n\n");
    List<FleetScenarios.SweepRow> rows = FleetScenarios.sweep(ALL, 100, 60, 1);
    calls[0] += (long) rows.size() * 6000;
    md.append("| failure | clients |");
    for (Fleet.Contender c : ALL) md.append(' ').append(c.name()).append(" |");
    md.append("\n| --- | --- |");
    for (int i = 0; i < ALL.size(); i++) md.append(" --- |");
    md.append('\n');
    List<String> dominated = new ArrayList<>();
    for (int i = 0; i < rows.size(); i += ALL.size()) {
      FleetScenarios.SweepRow first = rows.get(i);
      md.append(FleetScenarios.f("| %.0f %% | %d |", first.failureRate() * 100, first.clients()));
      for (int j = 0; j < ALL.size(); j++) {
        FleetScenarios.SweepRow r = rows.get(i + j);
        md.append(FleetScenarios.f(" %.3f / %.2f× |", r.success(), r.amplification()));
      }
      md.append('\n');
      for (int k : new int[] {0, 1}) {
        FleetScenarios.SweepRow ok = rows.get(i + k);
        for (int j = 2; j < ALL.size(); j++) {
          FleetScenarios.SweepRow p = rows.get(i + j);
          if (p.success() > ok.success() && p.amplification() < ok.amplification()) {
            dominated.add(
                FleetScenarios.f(
                    "%s dominates %s at %.0f %%, %d clients: %.3f / %.3f× against %.3f / %.3f×",
                    p.contender(),
                    ok.contender(),
                    p.failureRate() * 100,
                    p.clients(),
                    p.success(),
                    p.amplification(),
                    ok.success(),
                    ok.amplification()));
          }
        }
      }
    }
    md.append("\nPareto: ")
        .append(
            dominated.isEmpty()
                ? "no peer has both a higher success rate and a lower amplification in any cell."
                : "")
        .append('\n');
    for (String d : dominated) md.append("- ").append(d).append('\n');
    for (int clients : FleetScenarios.CLIENT_COUNTS) {
      List<double[]> amp = new ArrayList<>();
      for (int j = 0; j < ALL.size(); j++) {
        double[] ys = new double[FleetScenarios.FAILURE_RATES.length];
        for (int i = 0; i < rows.size(); i += ALL.size()) {
          FleetScenarios.SweepRow r = rows.get(i + j);
          if (r.clients() == clients) ys[indexOf(r.failureRate())] = r.amplification();
        }
        amp.add(ys);
      }
      lineChart(
          out.resolve("sweep-" + clients + ".png").toFile(),
          "Failure sweep, " + clients + " clients: amplification by failure rate (0 .. 100 %)",
          "failure rate: 0, 1, 5, 10, 25, 50, 75, 100 %",
          amp,
          0,
          4.2,
          1);
    }
    double wallSeconds = (System.nanoTime() - wall0) / 1e9;
    md.append(
        FleetScenarios.f(
            "%nSimulated %d logical calls in %.1f s of wall time: %.0f calls per wall second.%n",
            calls[0], wallSeconds, calls[0] / wallSeconds));
    Files.writeString(out.resolve("tables.md"), md.toString());
    if (Boolean.getBoolean("okretry.printTables")) System.out.println(md);
  }

  /** Where the report writes: {@code -Dokretry.fleet.out}, else {@code target/fleet}. */
  static Path outDir() throws IOException {
    return Files.createDirectories(
        Path.of(System.getProperty("okretry.fleet.out", "target/fleet")));
  }

  static int indexOf(double rate) {
    for (int i = 0; i < FleetScenarios.FAILURE_RATES.length; i++) {
      if (FleetScenarios.FAILURE_RATES[i] == rate) {
        return i;
      }
    }
    throw new AssertionError(rate);
  }

  static double[] ratio(Fleet.Result r, int seconds) {
    double[] y = new double[seconds];
    for (int s = 0; s < seconds; s++) {
      y[s] = r.offered[s] == 0 ? 0 : Math.min(1.1, r.goodput[s] / (double) r.offered[s]);
    }
    return y;
  }

  /** A plain line chart with a legend of the contenders, headless. */
  static void lineChart(
      File file,
      String title,
      String xLabel,
      List<double[]> series,
      double yMin,
      double yMax,
      double gridStep)
      throws IOException {
    lineChart(
        file,
        title,
        xLabel,
        ALL.stream().map(Fleet.Contender::name).toList(),
        series,
        yMin,
        yMax,
        gridStep);
  }

  /** A plain line chart with a legend of {@code names}, one a series, headless. */
  static void lineChart(
      File file,
      String title,
      String xLabel,
      List<String> names,
      List<double[]> series,
      double yMin,
      double yMax,
      double gridStep)
      throws IOException {
    int w = 900;
    int h = 520;
    int left = 60;
    int right = 290;
    int top = 40;
    int bottom = 50;
    BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    g.setColor(Color.BLACK);
    g.drawString(title, left, 20);
    g.drawString(xLabel, left, h - 15);
    int pw = w - left - right;
    int ph = h - top - bottom;
    g.drawRect(left, top, pw, ph);
    g.setColor(new Color(0xdddddd));
    for (double y = yMin; y <= yMax + 1e-9; y += gridStep) {
      int py = top + ph - (int) ((y - yMin) / (yMax - yMin) * ph);
      g.drawLine(left, py, left + pw, py);
      g.setColor(Color.BLACK);
      g.drawString(FleetScenarios.f("%.1f", y), 10, py + 4);
      g.setColor(new Color(0xdddddd));
    }
    g.setStroke(new BasicStroke(2f));
    for (int s = 0; s < series.size(); s++) {
      double[] ys = series.get(s);
      g.setColor(COLORS[s % COLORS.length]);
      for (int i = 1; i < ys.length; i++) {
        int x0 = left + (int) ((i - 1) / (double) (ys.length - 1) * pw);
        int x1 = left + (int) (i / (double) (ys.length - 1) * pw);
        int y0 = top + ph - (int) ((ys[i - 1] - yMin) / (yMax - yMin) * ph);
        int y1 = top + ph - (int) ((ys[i] - yMin) / (yMax - yMin) * ph);
        g.drawLine(x0, y0, x1, y1);
      }
      g.fillRect(left + pw + 15, top + 10 + s * 22, 14, 4);
      g.setColor(Color.BLACK);
      g.drawString(names.get(s), left + pw + 35, top + 16 + s * 22);
    }
    g.dispose();
    ImageIO.write(img, "png", file);
  }
}
