package io.github.okretry;

import static io.github.okretry.internal.ExtremeRandom.HIGHEST;
import static io.github.okretry.internal.ExtremeRandom.LOWEST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.AttemptFacts;
import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.CallDeadline;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.RetryAfter;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The decision after a failed attempt, {@link RetryRules#decide}: the order of the checks, their
 * exact boundaries, the upward {@code Retry-After} spread; and the {@link Decision} values.
 */
@Tag("unit")
class RetryRulesTest {
  static final long MS = 1_000_000L;

  /** The decision for these facts, given in the order of the old positional contract. */
  static Decision decide(
      RetryRules rules,
      int attempt,
      int maxRetries,
      boolean retryable,
      boolean safe,
      long retryAfterNanos,
      long remainingNanos,
      long previousDelayNanos,
      RandomSource random) {
    return rules.decide(
        new AttemptFacts(
            attempt,
            maxRetries,
            retryable,
            safe,
            retryAfterNanos,
            remainingNanos,
            previousDelayNanos),
        random);
  }

  final Backoff none = new Backoff(100, 1000, 2, Backoff.Jitter.NONE);
  final RetryRules policy = new RetryRules(none, 5_000, 0);
  final long absent = RetryAfter.ABSENT;
  final long noDeadline = CallDeadline.NO_DEADLINE;

  @Test
  void rejectsInvalid() {
    assertThatThrownBy(() -> new RetryRules(none, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxRetryAfterNanos");
    assertThatThrownBy(() -> new RetryRules(none, 1, -0.1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RetryRules(none, 1, 1.1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RetryRules(none, 1, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new RetryRules(none, 1, 1.0))
        .hasToString("RetryRules{" + none + ", maxRetryAfterNanos=1, retryAfterSpread=1.0}");
    assertThat(new RetryRules(none, 1, 0.0))
        .hasToString("RetryRules{" + none + ", maxRetryAfterNanos=1, retryAfterSpread=0.0}");
  }

  @Nested
  class OrderOfTheChecks {
    final RetryRules rules =
        new RetryRules(
            new Backoff(100 * MS, 10_000 * MS, 2.0, Backoff.Jitter.NONE), 60_000 * MS, 0.5);
    final RandomSource random = new SplittableRandom(3)::nextLong;

    Decision decide(int attempt, boolean retryable, boolean safe, long retryAfter, long remaining) {
      return RetryRulesTest.decide(
          rules, attempt, 3, retryable, safe, retryAfter, remaining, 100 * MS, random);
    }

    @Test
    void eachRuleAlone() {
      assertThat(decide(1, false, false, absent, noDeadline).reason())
          .isEqualTo(GiveUpReason.NOT_RETRYABLE);
      assertThat(decide(1, true, false, absent, noDeadline).reason())
          .isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT);
      assertThat(decide(4, true, true, absent, noDeadline).reason())
          .isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
      assertThat(decide(1, true, true, 61_000 * MS, noDeadline).reason())
          .isEqualTo(GiveUpReason.RETRY_AFTER_TOO_LONG);
      assertThat(decide(1, true, true, 5_000 * MS, 4_000 * MS).reason())
          .isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
      assertThat(decide(2, true, true, absent, 200 * MS).reason())
          .as("wait == time left")
          .isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
      assertThat(decide(2, true, true, absent, 201 * MS).delayNanos()).isEqualTo(200 * MS);
    }

    @Test
    void anEarlierRuleWinsOverEveryLaterOne() {
      assertThat(RetryRulesTest.decide(policy, 9, 3, false, false, absent, 0, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.NOT_RETRYABLE));
      assertThat(RetryRulesTest.decide(policy, 9, 3, true, false, absent, 0, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.NOT_SAFE_TO_REPEAT));
      assertThat(RetryRulesTest.decide(policy, 4, 3, true, true, 10_000, 0, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.RETRIES_EXHAUSTED));
      assertThat(RetryRulesTest.decide(policy, 3, 3, true, true, 10_000, 0, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.RETRY_AFTER_TOO_LONG));
      assertThat(RetryRulesTest.decide(policy, 3, 3, true, true, 5_000, 5_000, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED));
    }

    @Test
    void boundaries() {
      assertThat(RetryRulesTest.decide(policy, 3, 3, true, true, 5_000, 5_001, 100, LOWEST))
          .isEqualTo(Decision.retryAfter(5_000));
      assertThat(RetryRulesTest.decide(policy, 1, 3, true, true, 0, 1, 100, LOWEST))
          .isEqualTo(Decision.retryAfter(0));
      assertThat(RetryRulesTest.decide(policy, 1, 0, true, true, absent, noDeadline, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.RETRIES_EXHAUSTED));
      assertThat(RetryRulesTest.decide(policy, 2, 3, true, true, absent, noDeadline, 100, LOWEST))
          .isEqualTo(Decision.retryAfter(200));
      assertThat(RetryRulesTest.decide(policy, 2, 3, true, true, absent, 200, 100, LOWEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED));
      assertThat(RetryRulesTest.decide(policy, 2, 3, true, true, absent, 201, 100, LOWEST))
          .isEqualTo(Decision.retryAfter(200));
    }
  }

  /** The upward spread of a server's {@code Retry-After}: politeness, never the server's word. */
  @Nested
  class RetryAfterSpread {
    @Test
    void spreadGoesOnlyUpwardAndStaysUnderTheCeiling() {
      RetryRules spread = new RetryRules(none, 5_000, 0.5);
      assertThat(spread.spreadUpward(1_000, CallDeadline.NO_DEADLINE, LOWEST)).isEqualTo(1_000);
      assertThat(spread.spreadUpward(1_000, CallDeadline.NO_DEADLINE, HIGHEST)).isEqualTo(1_500);
      assertThat(spread.spreadUpward(4_000, CallDeadline.NO_DEADLINE, HIGHEST)).isEqualTo(5_000);
      assertThat(spread.spreadUpward(0, CallDeadline.NO_DEADLINE, HIGHEST)).isEqualTo(0);
      assertThat(policy.spreadUpward(1_000, CallDeadline.NO_DEADLINE, HIGHEST)).isEqualTo(1_000);
      assertThat(decide(spread, 1, 3, true, true, 1_000, noDeadline, 100, HIGHEST))
          .isEqualTo(Decision.retryAfter(1_500));
    }

    @Test
    void spreadStaysWithinTheCeiling() {
      RetryRules tight =
          new RetryRules(
              new Backoff(100 * MS, 10_000 * MS, 2.0, Backoff.Jitter.NONE), 1_200 * MS, 1.0);
      RandomSource random = new SplittableRandom(3)::nextLong;
      for (int i = 0; i < 1_000; i++) {
        long d =
            decide(tight, 1, 3, true, true, 1_000 * MS, CallDeadline.NO_DEADLINE, 100 * MS, random)
                .delayNanos();
        assertThat(d).isBetween(1_000 * MS, 1_200 * MS);
      }
    }

    @Test
    void spreadNeverTakesMoreThanHalfTheTimeLeftAfterTheWait() {
      RetryRules rules =
          new RetryRules(
              new Backoff(100 * MS, 10_000 * MS, 2.0, Backoff.Jitter.NONE), 60_000 * MS, 0.5);
      RandomSource random = new SplittableRandom(3)::nextLong;
      for (int i = 0; i < 1_000; i++) {
        Decision d = decide(rules, 1, 3, true, true, 1_000 * MS, 1_200 * MS, 100 * MS, random);
        assertThat(d.delayNanos()).isBetween(1_000 * MS, 1_100 * MS);
      }
    }

    /**
     * When the server's own Retry-After fits the time left, the spread is trimmed to half the time
     * the wait leaves, never turned into a give-up.
     */
    @Test
    void spreadNeverTurnsAFittingRetryAfterIntoAGiveUp() {
      RetryRules spread = new RetryRules(none, 5_000, 1.0);
      assertThat(decide(spread, 1, 3, true, true, 1_000, 1_500, 100, HIGHEST))
          .isEqualTo(Decision.retryAfter(1_250));
      assertThat(decide(spread, 1, 3, true, true, 1_000, 2_000, 100, HIGHEST))
          .isEqualTo(Decision.retryAfter(1_500));
      assertThat(decide(spread, 1, 3, true, true, 1_000, 1_001, 100, HIGHEST))
          .isEqualTo(Decision.retryAfter(1_000));
      assertThat(decide(spread, 1, 3, true, true, 1_000, 1_000, 100, HIGHEST))
          .isEqualTo(Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED));
    }
  }

  @Nested
  class Decisions {
    @Test
    void values() {
      assertThatThrownBy(() -> Decision.retryAfter(-1))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("-1");
      assertThat(Decision.retryAfter(0).isRetry()).isTrue();
      assertThat(Decision.giveUp(GiveUpReason.CANCELED).isRetry()).isFalse();
      assertThat(Decision.giveUp(GiveUpReason.CANCELED).delayNanos()).isZero();
    }

    @Test
    void decisionsAreValues() {
      assertThat(Decision.retryAfter(5))
          .isEqualTo(Decision.retryAfter(5))
          .hasSameHashCodeAs(Decision.retryAfter(5))
          .isNotEqualTo(Decision.retryAfter(6))
          .isNotEqualTo("RETRY");
      assertThat(Decision.giveUp(GiveUpReason.CANCELED))
          .isEqualTo(Decision.giveUp(GiveUpReason.CANCELED))
          .hasSameHashCodeAs(Decision.giveUp(GiveUpReason.CANCELED))
          .isNotEqualTo(Decision.giveUp(GiveUpReason.INTERRUPTED))
          .isNotEqualTo(Decision.retryAfter(0));
      assertThat(Decision.retryAfter(5).reason()).isNull();
      assertThat(Decision.retryAfter(5)).hasToString("Decision.retryAfter(5 ns)");
      assertThat(Decision.giveUp(GiveUpReason.CANCELED)).hasToString("Decision.giveUp(CANCELED)");
    }
  }
}
