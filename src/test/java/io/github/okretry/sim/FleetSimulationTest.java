package io.github.okretry.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.RetryTokenBucket;
import io.github.okretry.internal.Tuning;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Short versions of the fleet scenarios, guarding the figures in docs/fleet.md. */
@Tag("unit")
class FleetSimulationTest {

  static Fleet.Contender streak(int limit) {
    return Peers.okretry("okretry, streak " + limit, () -> new RetryTokenBucket(200, 100_000, 100_000, 10, 1000, 500, limit));
  }

  @Test
  void series() {
    for (Fleet.Contender c : List.of(Peers.GRPC_A6, Peers.UNBUDGETED)) {
      Fleet.Result m = FleetScenarios.metastable(c, 1);
      StringBuilder sb = new StringBuilder(c.name() + ": ");
      for (int s = 0; s < 60; s++) sb.append(s).append(':').append(m.offered[s]).append('/').append(m.goodput[s]).append('/').append(m.attempts[s]).append(' ');
      System.out.println(sb);
    }
  }

  @Test
  void scratch() {
    for (Fleet.Contender c : List.of(streak(0), streak(5), streak(10), streak(20), streak(40))) {
      long t0 = System.nanoTime();
      Fleet.Result q200 = FleetScenarios.quietFleet(c, 200, 0.5, 20, 1);
      Fleet.Result q1000 = FleetScenarios.quietFleet(c, 1000, 0.1, 20, 1);
      Fleet.Result dies = FleetScenarios.quietFleetServerDies(c, 200, 0.5, 40, 20, 1);
      int minCold = 50;
      double meanCold = 0;
      for (long seed = 1; seed <= 50; seed++) {
        long ok = FleetScenarios.coldStart(c, seed);
        minCold = (int) Math.min(minCold, ok);
        meanCold += ok / 50.0;
      }
      double busy = FleetScenarios.busyClientSustained(c, -1, 1);
      double busyRa = FleetScenarios.busyClientSustained(c, 1, 1);
      Fleet.Result m = FleetScenarios.metastable(c, 1);
      Fleet.Result cut = FleetScenarios.capacityCut(c, 1);
      System.out.printf("%s: quiet200 %.3f quiet1000 %.3f dies@20 %.3f cold min %d mean %.2f busy %.3f busyRA %.3f meta %d (%.3f) cut %d (%.3f) %.0f ms%n",
          c.name(), q200.amplification(), q1000.amplification(), dies.amplification(), minCold, meanCold, busy, busyRa,
          FleetScenarios.recoverySeconds(m, 15, 58), m.amplification(), FleetScenarios.recoverySeconds(cut, 20, 58), cut.amplification(), (System.nanoTime() - t0) / 1e6);
    }
    for (Fleet.Contender c : Peers.PEERS) {
      Fleet.Result m = FleetScenarios.metastable(c, 1);
      Fleet.Result cut = FleetScenarios.capacityCut(c, 1);
      System.out.printf("%s: meta %d (%.3f) cut %d (%.3f) cold %d%n", c.name(), FleetScenarios.recoverySeconds(m, 15, 58), m.amplification(),
          FleetScenarios.recoverySeconds(cut, 20, 58), cut.amplification(), FleetScenarios.coldStart(c, 1));
    }
  }
}
