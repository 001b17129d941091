package io.github.okretry.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.sim.JitterSimulation.Config;
import io.github.okretry.sim.JitterSimulation.Strategy;
import io.github.okretry.sim.JitterSimulation.Summary;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Guards the claim docs/performance.md publishes from the jitter experiment (bench/run.sh jitter),
 * on a reduced configuration: 120 clients, 20 seeded runs per strategy (about 0.1 s in all).
 */
@Tag("unit")
class JitterSimulationTest {

  private static final Map<Strategy, Summary> results = new EnumMap<>(Strategy.class);

  @BeforeAll
  static void simulate() {
    for (Strategy s : Strategy.values()) {
      results.put(s, JitterSimulation.summarize(s, 120, 20, 1, Config.AWS));
    }
  }

  private static double time(Strategy s) {
    return results.get(s).completionMillis();
  }

  private static double writes(Strategy s) {
    return results.get(s).writes();
  }

  @Test
  void exponentialWithoutJitterIsByFarTheSlowest() {
    for (Strategy jittered :
        new Strategy[] {
          Strategy.FULL_JITTER, Strategy.EQUAL_JITTER, Strategy.DECORRELATED_JITTER
        }) {
      assertThat(time(Strategy.EXPONENTIAL))
          .as("vs %s", jittered)
          .isGreaterThan(5 * time(jittered));
      assertThat(writes(Strategy.EXPONENTIAL))
          .as("vs %s", jittered)
          .isGreaterThan(1.5 * writes(jittered));
    }
  }

  @Test
  void fullAndEqualJitterDoTheLeastWork() {
    double fewest = Math.min(writes(Strategy.FULL_JITTER), writes(Strategy.EQUAL_JITTER));
    double most = Math.max(writes(Strategy.FULL_JITTER), writes(Strategy.EQUAL_JITTER));
    assertThat(most).isLessThan(1.05 * fewest);
    assertThat(writes(Strategy.DECORRELATED_JITTER)).isGreaterThan(1.1 * most);
    assertThat(writes(Strategy.NO_BACKOFF)).isGreaterThan(writes(Strategy.EXPONENTIAL));
  }

  @Test
  void decorrelatedJitterIsFastButFullJitterIsNotFarBehind() {
    assertThat(time(Strategy.DECORRELATED_JITTER)).isLessThan(time(Strategy.EQUAL_JITTER));
    assertThat(time(Strategy.FULL_JITTER)).isLessThan(time(Strategy.EQUAL_JITTER));
    assertThat(time(Strategy.FULL_JITTER)).isLessThan(1.2 * time(Strategy.DECORRELATED_JITTER));
  }

  @Test
  void sameSeedSameResult() {
    assertThat(JitterSimulation.run(Strategy.FULL_JITTER, 30, 7, Config.AWS))
        .isEqualTo(JitterSimulation.run(Strategy.FULL_JITTER, 30, 7, Config.AWS));
  }
}
