package io.github.okretry.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Short versions of the fleet scenarios, guarding the figures in docs/fleet.md. */
@Tag("unit")
class FleetSimulationTest {

  @Test
  void quietFleetAgainstADeadServer() {
    for (Fleet.Contender c : java.util.List.of(Peers.OKRETRY, Peers.UNBUDGETED, Peers.AWS_STANDARD, Peers.GRPC_A6, Peers.FINAGLE, Peers.SRE_ADAPTIVE)) {
      long t0 = System.nanoTime();
      Fleet.Result r = new Fleet(new Fleet.Service().failing(1.0, -1), Fleet.Load.of(200, 0.5, 20).evenlySpaced(), 1).run(c);
      System.out.printf("%s: %.3f x, success %.3f, %d calls, %d events, %.0f ms%n", c.name(), r.amplification(), r.successRate(), r.calls, r.events, (System.nanoTime() - t0) / 1e6);
    }
  }
}
