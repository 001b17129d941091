package io.github.okretry.sim;

import io.github.okretry.sim.Peers.BudgetNumbers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The budget's scorecard rows on the simulator for okretry's default budget and for each of its
 * numbers halved and doubled ({@code docs/fleet.md}, "Budget numbers halved and doubled"): a number
 * whose change moves a row past its noise is a knife edge, stated there. To {@code knobs.md}.
 */
@Tag("soak")
class BudgetScorecard {

  /** One row's figures for one contender, as text, in the order of {@link #HEADER}. */
  static List<String> rows(Fleet.Contender c) {
    List<String> out = new ArrayList<>();
    for (double[] rb :
        new double[][] {{20, 0.5, 0}, {20, 2, 0}, {300, 0.5, 0}, {300, 2, 0}, {100, 1, 1}}) {
      long failed = 0;
      for (long seed = 1; seed <= 10; seed++) {
        failed += FleetScenarios.blip(c, rb[0], rb[1], rb[2] == 1, seed).failed();
      }
      out.add(Long.toString(failed));
    }
    out.add(
        FleetScenarios.f("%.2f %%", 100 * FleetScenarios.lossyLink(c, 0.2, 100, 1).successRate()));
    out.add(
        FleetScenarios.f(
            "%.2f×", FleetScenarios.deadBesideHealthy(c, 1.3, 1).serviceAmplification()));
    Fleet.Result dead = FleetScenarios.busyThroughOutage(c, 300, 1);
    out.add(
        FleetScenarios.f(
            "%.3f× / %.2f s", dead.amplification(3, 11), dead.latencySeconds(0.5, 3, 11)));
    out.add(
        FleetScenarios.f("%.2f×", FleetScenarios.quietFleet(c, 200, 0.5, 20, 1).amplification()));
    out.add(
        FleetScenarios.f("%.2f×", FleetScenarios.quietFleet(c, 1000, 0.1, 20, 1).amplification()));
    out.add(FleetScenarios.f("%.2f×", FleetScenarios.warmFleetWhileDown(c, 200, 0.5, 40, 20, 1)));
    out.add(
        FleetScenarios.f(
            "%.2f×", FleetScenarios.quietFleetRetryAfter(c, 200, 0.5, 20, 1, 1).amplification()));
    int[] back = FleetScenarios.metastableBackWithinFiveSeconds(c, 20);
    out.add(back[0] + " / " + back[1]);
    double[] cold = FleetScenarios.coldStartOverSeeds(c, 50);
    out.add(FleetScenarios.f("%.1f / %d", cold[0], (long) cold[1]));
    return out;
  }

  static final String HEADER =
      "| budget | blip 0.5 s at 20/s | 2 s at 20/s | 0.5 s at 300/s | 2 s at 300/s | refused 1 s"
          + " at 100/s | lossy 20 %, 100/s | dead beside healthy | busy dead: requests / p50 |"
          + " quiet fleet 200 | 1 000 | warm | Retry-After: 1 | metastable of 20 (start / end) |"
          + " cold start |\n"
          + "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
          + " --- |\n";

  static String line(Fleet.Contender c) {
    return "| " + c.name() + " | " + String.join(" | ", rows(c)) + " |\n";
  }

  @Test
  void defaultsAndUnbudgeted() throws IOException {
    String md = HEADER + line(Peers.OKRETRY) + line(Peers.UNBUDGETED);
    write("scorecard.md", md);
  }

  static final String SCOPE_HEADER =
      "| policy | dead path beside a live one: requests per call (limit) | 2 000 dead origins in"
          + " turn, each every 20 s: requests per call / one dead origin every 20 s | lossy link"
          + " (20 %, 20/s) beside a dead host: calls through / alone | capacity cut beside a"
          + " healthy origin: amplification / alone | an origin that stalls, 20/s: requests per"
          + " call, HedgingPolicy.after(50 ms).maxHedges(2) / no hedging |\n"
          + "| --- | --- | --- | --- | --- | --- |\n";

  /** Issue 42's rows of scope: paths, mixed origins, many origins, hedges. */
  static String scopeLine(Fleet.Contender c, Fleet.Contender hedged) {
    Fleet.Result path = FleetScenarios.deadPathBesideLive(c, 1.3, 1);
    long pathCalls = path.calls - path.besideCalls;
    Fleet.Result many = FleetScenarios.manyDeadOrigins(c, 2000, 100, 120, 1);
    Fleet.Result one = FleetScenarios.manyDeadOrigins(c, 1, 0.05, 120, 1);
    Fleet.Result lossy = FleetScenarios.lossyBesideDead(c, 20, 1);
    double lossyThrough =
        (lossy.succeeded - lossy.besideSucceeded) / (double) (lossy.calls - lossy.besideCalls);
    double lossyAlone = FleetScenarios.lossyLink(c, 0.2, 20, 1).successRate();
    Fleet.Result cut = FleetScenarios.capacityCutBesideHealthy(c, 1);
    Fleet.Result cutAlone = FleetScenarios.capacityCut(c, 1);
    return FleetScenarios.f(
        "| %s | %.2f× (%.2f×) | %.2f× / %.2f× | %.2f %% / %.2f %% | %.2f× / %.2f× | %.2f× / %.2f×"
            + " |%n",
        c.name(),
        path.serviceAmplification(),
        (pathCalls + 3.0) / pathCalls,
        many.amplification(),
        one.amplification(),
        100 * lossyThrough,
        100 * lossyAlone,
        cut.serviceAmplification(),
        cutAlone.amplification(),
        FleetScenarios.stalling(hedged, 1).amplification(),
        FleetScenarios.stalling(c, 1).amplification());
  }

  @Test
  void scope() throws IOException {
    String md =
        SCOPE_HEADER
            + scopeLine(
                Peers.OKRETRY,
                Peers.okretryHedging(
                    "hedged",
                    io.github.okretry.HedgingPolicy.after(
                            50, java.util.concurrent.TimeUnit.MILLISECONDS)
                        .maxHedges(2)))
            + scopeLine(Peers.UNBUDGETED, Peers.UNBUDGETED)
            + scopeLine(Peers.GRPC_A6, Peers.GRPC_A6);
    write("scope.md", md);
  }

  @Test
  void eachNumberHalvedAndDoubled() throws IOException {
    if (System.getProperty("okretry.knobs") == null) return; // 3 minutes: asked for by name
    StringBuilder md = new StringBuilder(HEADER);
    md.append(line(Peers.okretryOver("defaults", BudgetNumbers.DEFAULTS)));
    knob(
        md,
        "deposit 0.2",
        n -> n.withDepositMilli(n.depositMilli() / 2),
        n -> n.withDepositMilli(n.depositMilli() * 2));
    knob(
        md,
        "max tokens 100",
        n -> n.withMaxTokensMilli(n.maxTokensMilli() / 2),
        n -> n.withMaxTokensMilli(n.maxTokensMilli() * 2));
    knob(
        md,
        "reserve 10/s",
        n -> n.withReservePerSecond(n.reservePerSecond() / 2),
        n -> n.withReservePerSecond(n.reservePerSecond() * 2));
    knob(
        md,
        "timeout cost 14",
        n -> n.withTimeoutCostMilli(n.timeoutCostMilli() / 2),
        n -> n.withTimeoutCostMilli(n.timeoutCostMilli() * 2));
    knob(
        md,
        "common share 1/3",
        n -> n.withCommonShare(n.commonShare() / 2),
        n -> n.withCommonShare(n.commonShare() * 2));
    knob(
        md,
        "share window 64",
        n -> n.withShareWindow(n.shareWindow() / 2),
        n -> n.withShareWindow(n.shareWindow() * 2));
    knob(
        md,
        "down after 2 schedules",
        n -> n.withDownAfterSchedules(1),
        n -> n.withDownAfterSchedules(4));
    knob(
        md,
        "memory 30 s",
        n -> n.withMemoryNanos(n.memoryNanos() / 2),
        n -> n.withMemoryNanos(n.memoryNanos() * 2));
    write("knobs.md", md.toString());
  }

  private static void knob(
      StringBuilder md,
      String name,
      UnaryOperator<BudgetNumbers> half,
      UnaryOperator<BudgetNumbers> twice) {
    md.append(line(Peers.okretryOver(name + " halved", half.apply(BudgetNumbers.DEFAULTS))));
    md.append(line(Peers.okretryOver(name + " doubled", twice.apply(BudgetNumbers.DEFAULTS))));
  }

  private static void write(String name, String md) throws IOException {
    String dir = System.getProperty("okretry.fleet.out");
    if (dir != null) Files.writeString(Path.of(dir).resolve(name), md);
    System.out.print(md);
  }
}
