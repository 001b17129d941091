package io.github.okretry.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Short versions of the fleet scenarios (a second or two), guarding the figures in docs/fleet.md. */
@Tag("unit")
class FleetSimulationTest {

  @Test
  void aQuietFleetOfFreshClientsRetriesADeadServerOnlyWithTheFailureStreak() {
    assertThat(FleetScenarios.quietFleet(Peers.OKRETRY, 200, 0.5, 20, 1).amplification()).isEqualTo(4.0);
    assertThat(FleetScenarios.quietFleet(Peers.OKRETRY_STREAK, 200, 0.5, 20, 1).amplification()).isLessThanOrEqualTo(1.2);
    assertThat(FleetScenarios.quietFleet(Peers.OKRETRY_STREAK, 1000, 0.1, 20, 1).amplification()).isLessThanOrEqualTo(1.2);
    assertThat(FleetScenarios.quietFleet(Peers.GRPC_A6, 200, 0.5, 20, 1).amplification()).isCloseTo(1.3, org.assertj.core.api.Assertions.within(0.01));
  }

  @Test
  void theBusyClientAndTheColdStart() {
    assertThat(FleetScenarios.busyClientSustained(Peers.OKRETRY, -1, 1)).isLessThanOrEqualTo(1.051);
    assertThat(FleetScenarios.busyClientSustained(Peers.OKRETRY_STREAK, 1, 1)).isLessThanOrEqualTo(1.2);
    assertThat(FleetScenarios.coldStart(Peers.OKRETRY, 1)).isGreaterThanOrEqualTo(48);
    assertThat(FleetScenarios.coldStart(Peers.GRPC_A6, 1)).as("gRPC A6 gives a fresh client up").isLessThan(40);
  }

  @Test
  void unbudgetedRetriesTurnAShortOutageMetastableAndABudgetDoesNot() {
    assertThat(FleetScenarios.recoverySeconds(FleetScenarios.metastable(Peers.UNBUDGETED, 1), 15, 58)).isEqualTo(-1);
    assertThat(FleetScenarios.recoverySeconds(FleetScenarios.metastable(Peers.OKRETRY_STREAK, 1), 15, 58)).isBetween(0, 5);
  }

  @Test
  void independentFailuresGiveSuccessEqualToAmplificationTimesOneMinusTheRate() {
    // Every attempt succeeds with the same odds, so no budget gets more success per attempt.
    Fleet.Result r = new Fleet(new Fleet.Service().failing(0.5, -1), Fleet.Load.of(100, 1, 30), 1).run(Peers.OKRETRY);
    assertThat(r.successRate()).isCloseTo(0.5 * r.amplification(), org.assertj.core.api.Assertions.within(0.02));
  }

  @Test
  void aPublishedQuotaIsWaitedForInsteadOfRefused() {
    // One fresh client, 40 at once, probing: every seed all through in ≤ 2.2 s, ≤ 1.05 attempts.
    FleetScenarios.QuotaRow crowd = FleetScenarios.publishedQuota(1, 40, io.github.okretry.QuotaPacing.PROBE, 20);
    assertThat(crowd.allThrough()).isEqualTo(1.0);
    assertThat(crowd.worstMakespan()).isLessThanOrEqualTo(2.2);
    assertThat(crowd.worstAttemptsPerCall()).isLessThanOrEqualTo(1.05);
    // Three processes sharing the quota, 20 each at once.
    FleetScenarios.QuotaRow shared = FleetScenarios.publishedQuota(3, 20, io.github.okretry.QuotaPacing.PROBE, 20);
    assertThat(shared.allThrough()).isEqualTo(1.0);
    assertThat(shared.worstAttemptsPerCall()).isLessThanOrEqualTo(1.1);
    // Without reading the quota the crowd learns it by refusals.
    assertThat(FleetScenarios.publishedQuota(1, 40, io.github.okretry.QuotaPacing.OFF, 20).meanAttemptsPerCall()).isGreaterThan(1.4);
  }
}
