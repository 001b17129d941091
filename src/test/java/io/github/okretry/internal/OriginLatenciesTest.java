package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import okhttp3.HttpUrl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class OriginLatenciesTest {
  static final long MS = 1_000_000L;
  final HttpUrl a = HttpUrl.get("https://a.test/x");
  final HttpUrl aOtherPath = HttpUrl.get("https://a.test/y?q=1");
  final HttpUrl b = HttpUrl.get("https://b.test/x");

  @Test
  void nothingUntilTheWarmUpThenTheNearestRankPercentile() {
    OriginLatencies table = new OriginLatencies(0.9);
    for (int i = 1; i < Tuning.HEDGE_WARMUP_SAMPLES; i++) table.record(a, i * MS);
    assertThat(table.percentileNanos(a)).isZero();
    table.record(a, 20 * MS); // 1..20 ms: p90 is the 18th
    assertThat(table.percentileNanos(aOtherPath)).as("per origin, not per path").isEqualTo(18 * MS);
    assertThat(table.percentileNanos(b)).isZero();
  }

  @Test
  void theWindowKeepsTheLatestAnswers() {
    OriginLatencies table = new OriginLatencies(0.5);
    for (int i = 0; i < Tuning.HEDGE_WINDOW; i++) table.record(a, 1000 * MS);
    for (int i = 0; i < Tuning.HEDGE_WINDOW; i++) table.record(a, 5 * MS);
    assertThat(table.percentileNanos(a)).isEqualTo(5 * MS);
  }

  @Test
  void recomputedOncePerFewAnswers() {
    OriginLatencies table = new OriginLatencies(0.5);
    for (int i = 0; i < Tuning.HEDGE_WARMUP_SAMPLES; i++) table.record(a, 5 * MS);
    for (int i = 0; i < Tuning.HEDGE_RECOMPUTE_EVERY - 1; i++) table.record(a, 500 * MS);
    assertThat(table.percentileNanos(a)).isEqualTo(5 * MS);
    for (int i = 0; i < Tuning.HEDGE_WARMUP_SAMPLES; i++) table.record(a, 500 * MS);
    assertThat(table.percentileNanos(a)).isEqualTo(500 * MS);
  }

  @Test
  void aRefusalQuietsTheOriginForTenSeconds() {
    OriginLatencies table = new OriginLatencies(0.9);
    assertThat(table.refusedRecently(a, 0)).isFalse();
    table.refused(a, 0);
    assertThat(table.refusedRecently(aOtherPath, Tuning.HEDGE_QUIET_AFTER_REFUSAL_NANOS - 1))
        .isTrue();
    assertThat(table.refusedRecently(a, Tuning.HEDGE_QUIET_AFTER_REFUSAL_NANOS)).isFalse();
    assertThat(table.refusedRecently(b, 1)).isFalse();
  }

  @Test
  void boundedLeastRecentlyUsedFirst() {
    OriginLatencies table = new OriginLatencies(0.9, 2);
    table.refused(a, 0);
    table.refused(b, 0);
    table.refused(HttpUrl.get("https://c.test/"), 0);
    assertThat(table.size()).isEqualTo(2);
    assertThat(table.refusedRecently(a, 1)).as("forgotten").isFalse();
    assertThat(table.refusedRecently(b, 1)).isTrue();
  }

  @Test
  void aNegativeLatencyIsIgnoredAndBadArgumentsRefused() {
    OriginLatencies table = new OriginLatencies(0.9);
    table.record(a, -1);
    assertThat(table.size()).isZero();
    assertThatThrownBy(() -> new OriginLatencies(1.0)).hasMessageContaining("percentile");
    assertThatThrownBy(() -> new OriginLatencies(0.9, 0)).hasMessageContaining("maxOrigins");
  }
}
