package io.github.okretry.internal;

import static io.github.okretry.internal.QuotaPacerTest.NOW_MILLIS;
import static io.github.okretry.internal.QuotaPacerTest.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.OriginGate.QuotaTurn;
import java.util.SplittableRandom;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link OriginGate}'s settings and what it does with quota answers: a gate that does not read
 * quotas, an answer that came from another origin than the one counted (a redirect), an origin with
 * a quota forgotten by the bound, and {@link OriginGate#quiet} for hedging.
 */
@Tag("unit")
class OriginGateQuotaTest {
  static final long S = 1_000_000_000L;
  static final long MS = 1_000_000L;
  static final long FAR = Long.MAX_VALUE / 4;
  static final HttpUrl A = HttpUrl.get("https://a.test/items");
  static final HttpUrl B = HttpUrl.get("https://b.test/items");
  static final String SPENT =
      "RateLimit-Policy: \"default\";q=20;w=1 | RateLimit: \"default\";r=0;t=1";
  static final String ONE_LEFT =
      "RateLimit-Policy: \"default\";q=20;w=1 | RateLimit: \"default\";r=1;t=1";

  static OriginGate gate(int maxOrigins, boolean paceQuotas, boolean probe) {
    SplittableRandom r = new SplittableRandom(7);
    return new OriginGate(maxOrigins, paceQuotas, probe, () -> NOW_MILLIS, r::nextLong);
  }

  static void publish(OriginGate gate, HttpUrl url, String spec, long now) {
    gate.quotaAnswered(null, response(url, 200, spec), false, RetryAfter.ABSENT, now);
  }

  @Test
  void settingsAreReportedAndProbingNeedsQuotaPacing() {
    OriginGate defaults = OriginGateTest.gate(Tuning.MAX_ORIGINS);
    assertThat(defaults.readsQuotas()).isTrue();
    assertThat(defaults.probes()).isFalse();
    assertThat(defaults.pacesQuotas()).as("no origin published a quota yet").isFalse();
    OriginGate probing = gate(8, true, true);
    assertThat(probing.probes()).isTrue();
    assertThat(probing.readsQuotas()).isTrue();
    assertThat(probing.pacesQuotas()).isTrue();
    OriginGate off = gate(8, false, false);
    assertThat(off.readsQuotas()).isFalse();
    assertThat(off.probes()).isFalse();
    assertThatThrownBy(() -> gate(8, false, true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("probe without paceQuotas");
  }

  @Test
  void aGateThatDoesNotPaceQuotasReadsNone() {
    OriginGate gate = gate(8, false, false);
    publish(gate, A, SPENT, 0);
    assertThat(gate.size()).isZero();
    assertThat(gate.pacesQuotas()).isFalse();
    assertThat(gate.admitQuota(A, 0, FAR)).isNull();
  }

  @Test
  void aPublishedQuotaPacesItsOriginOnly() {
    OriginGate gate = gate(8, true, false);
    publish(gate, A, SPENT, 0);
    assertThat(gate.pacesQuotas()).isTrue();
    assertThat(gate.size()).isEqualTo(1);
    assertThat(gate.admitQuota(A, 0, FAR).waitNanos())
        .as("held until the reset")
        .isGreaterThanOrEqualTo(1 * S);
    assertThat(gate.admitQuota(B, 0, FAR)).as("another origin").isNull();
    assertThat(gate.size()).as("asking about another origin adds nothing").isEqualTo(1);
  }

  @Test
  void anAnswerFromAnotherOriginFreesTheCountWhereItWasMadeAndTeachesWhereItCameFrom() {
    OriginGate gate = gate(8, true, false);
    publish(gate, A, ONE_LEFT, 0);
    publish(gate, B, ONE_LEFT, 0);
    QuotaTurn counted = gate.admitQuota(A, 0, FAR);
    assertThat(counted.waitNanos()).isZero();
    assertThat(gate.admitQuota(A, 0, FAR).waitNanos()).as("the one left is in flight").isPositive();
    // Redirected to b, which answers that its quota is spent.
    gate.quotaAnswered(counted, response(B, 200, SPENT), false, RetryAfter.ABSENT, 1 * MS);
    assertThat(gate.admitQuota(A, 1 * MS, FAR).waitNanos()).as("a's count is freed").isZero();
    assertThat(gate.admitQuota(B, 1 * MS, FAR).waitNanos())
        .as("b learned its quota is spent")
        .isGreaterThanOrEqualTo(S - MS);
  }

  @Test
  void anExceptionAfterACountFreesIt() {
    OriginGate gate = gate(8, true, false);
    publish(gate, A, ONE_LEFT, 0);
    QuotaTurn counted = gate.admitQuota(A, 0, FAR);
    assertThat(gate.admitQuota(A, 0, FAR).waitNanos()).isPositive();
    gate.quotaAnswered(counted, null, false, RetryAfter.ABSENT, 1 * MS);
    assertThat(gate.admitQuota(A, 1 * MS, FAR).waitNanos()).isZero();
  }

  @Test
  void answersWithoutACountOrAQuotaAddNothing() {
    OriginGate gate = gate(8, true, false);
    gate.quotaAnswered(null, null, false, RetryAfter.ABSENT, 0);
    gate.quotaAnswered(
        null, response(A, 200, "Content-Type: text/plain"), false, RetryAfter.ABSENT, 0);
    assertThat(gate.size()).isZero();
    assertThat(gate.pacesQuotas()).isFalse();
  }

  @Test
  void anOriginWithAQuotaForgottenByTheBoundNoLongerPaces() {
    OriginGate gate = gate(1, true, false);
    publish(gate, A, SPENT, 0);
    assertThat(gate.pacesQuotas()).isTrue();
    gate.close(B, 0, 10 * S, 503); // the bound of one: a goes
    assertThat(gate.size()).isEqualTo(1);
    assertThat(gate.pacesQuotas()).isFalse();
    assertThat(gate.admitQuota(A, 0, FAR)).isNull();
  }

  @Test
  void aQuotaOriginRemovedWhenMetOnceIdleNoLongerPaces() {
    OriginGate gate = gate(8, true, false);
    publish(gate, A, SPENT, 0);
    gate.close(A, 0, 2 * S, 503);
    long later = 60 * S;
    assertThat(gate.check(A, later)).as("reopened, and its quota lapsed: removed").isNull();
    assertThat(gate.size()).isZero();
    assertThat(gate.pacesQuotas()).isFalse();
  }

  @Test
  void probingCountsEveryOriginFromItsFirstCall() {
    OriginGate gate = gate(8, true, true);
    assertThat(gate.admitQuota(A, 0, FAR).waitNanos()).isZero();
    assertThat(gate.size()).isEqualTo(1);
    assertThat(gate.admitQuota(A, 0, FAR).waitNanos())
        .as("waits for the first answer")
        .isPositive();
    assertThat(gate.admitQuota(B, 0, FAR).waitNanos()).as("b has its own first call").isZero();
    assertThat(gate.size()).isEqualTo(2);
  }

  @Test
  void quietMeansNoGateClosedAndNothingPacedOnTheOrigin() {
    OriginGate gate = gate(8, true, false);
    assertThat(gate.quiet(A, 0)).as("nothing remembered").isTrue();
    gate.close(A, 0, 10 * S, 503);
    assertThat(gate.quiet(A, 1)).isFalse();
    assertThat(gate.quiet(B, 1)).isTrue();
    assertThat(gate.quiet(A, 10 * S)).as("reopened at its time").isTrue();

    OriginGate quota = gate(8, true, false);
    publish(quota, A, SPENT, 0);
    assertThat(quota.quiet(A, 0)).as("a spent quota paces the origin").isFalse();
    assertThat(quota.quiet(B, 0)).isTrue();

    OriginGate pacing = OriginGateTest.gate(Tuning.MAX_ORIGINS);
    String a = OriginGate.origin(A);
    pacing.reserve(a, 0, FAR, FAR);
    pacing.released(a, 0, true, RetryAfter.ABSENT, S, 1);
    pacing.released(a, 40 * MS, false, S, S, 41 * MS); // turns 50 ms apart
    pacing.reserve(a, 42 * MS, FAR, FAR); // a turn at 50 ms
    pacing.reserve(a, 42 * MS, FAR, FAR); // and one at 100 ms, still ahead
    assertThat(pacing.quiet(A, 43 * MS)).as("a crowd paced on it").isFalse();
    assertThat(pacing.quiet(A, 43 * MS + Tuning.PACING_MEMORY_NANOS)).isTrue();
  }

  @Test
  void aReopenedGateOnAnOriginStillPacingKeepsTheOrigin() {
    OriginGate gate = OriginGateTest.gate(Tuning.MAX_ORIGINS);
    String a = OriginGate.origin(A);
    gate.reserve(a, 0, FAR, FAR);
    gate.close(A, 0, 1 * S, 503);
    assertThat(gate.check(A, 1 * S)).isNull();
    assertThat(gate.size()).as("its pacer is recent").isEqualTo(1);
    assertThat(gate.check(A, 2 * S)).as("no gate").isNull();
    assertThat(gate.size()).isEqualTo(1);
  }

  @Test
  void turnsGivenBackOrUsedOnAnOriginNotRememberedAddNothing() {
    OriginGate gate = OriginGateTest.gate(Tuning.MAX_ORIGINS);
    gate.used(OriginGate.origin(A), 0, 0);
    gate.givenBack(OriginGate.origin(A), 0, 0);
    gate.close(B, 0, 10 * S, 503);
    gate.used(OriginGate.origin(B), 0, 0); // remembered, but no pacer
    gate.givenBack(OriginGate.origin(B), 0, 0);
    assertThat(gate.size()).isEqualTo(1);
  }

  @Test
  void aTurnGivenBackAtTheEndOfTheLineIsHandedOutAgain() {
    OriginGate gate = OriginGateTest.gate(Tuning.MAX_ORIGINS);
    String a = OriginGate.origin(A);
    gate.reserve(a, 0, FAR, FAR);
    gate.released(a, 0, true, RetryAfter.ABSENT, S, 1);
    gate.released(a, 40 * MS, false, S, S, 41 * MS); // turns 50 ms apart
    assertThat(gate.reserve(a, 42 * MS, FAR, FAR)).isEqualTo(50 * MS);
    assertThat(gate.reserve(a, 42 * MS, FAR, FAR)).isEqualTo(100 * MS);
    gate.givenBack(a, 100 * MS, 43 * MS);
    assertThat(gate.reserve(a, 44 * MS, FAR, FAR)).isEqualTo(100 * MS);
  }

  @Test
  void anOriginRememberedForItsGateButWithoutAQuotaGoesUncounted() {
    OriginGate gate = gate(8, true, false);
    publish(gate, B, SPENT, 0); // some origin paces by its quota
    gate.close(A, 0, 10 * S, 503);
    assertThat(gate.pacesQuotas()).isTrue();
    assertThat(gate.admitQuota(A, 0, FAR)).isNull();
  }
}
