package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.GiveUpReason;
import io.github.okretry.Jitter;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The decision table of {@link RetryRules#decide}, one rule per test. */
class RetryRulesTest {

  /** The decision for facts given in the order of the old positional contract. */
  static Decision decide(RetryRules rules, int attempt, int maxRetries, boolean retryable, boolean safe,
      long retryAfterNanos, long remainingNanos, long previousDelayNanos, RandomSource random) {
    return rules.decide(
        AttemptFacts.attempt(attempt, maxRetries).retryable(retryable).safeToRepeat(safe)
            .retryAfterNanos(retryAfterNanos).remainingNanos(remainingNanos)
            .previousDelayNanos(previousDelayNanos).build(),
        random);
  }
  static final long MS = 1_000_000L;
  final RetryRules policy = new RetryRules(new Backoff(100 * MS, 10_000 * MS, 2.0, Jitter.NONE), 60_000 * MS, 0.5);
  final RandomSource random = new SplittableRandom(3)::nextLong;

  Decision decide(int attempt, boolean retryable, boolean safe, long retryAfter, long remaining) {
    return decide(policy, attempt, 3, retryable, safe, retryAfter, remaining, 100 * MS, random);
  }

  @Test
  void rulesInOrder() {
    assertThat(decide(1, false, false, RetryAfter.ABSENT, RetryRules.NO_DEADLINE).reason()).isEqualTo(GiveUpReason.NOT_RETRYABLE);
    assertThat(decide(1, true, false, RetryAfter.ABSENT, RetryRules.NO_DEADLINE).reason()).isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT);
    assertThat(decide(4, true, true, RetryAfter.ABSENT, RetryRules.NO_DEADLINE).reason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(decide(1, true, true, 61_000 * MS, RetryRules.NO_DEADLINE).reason()).isEqualTo(GiveUpReason.RETRY_AFTER_TOO_LONG);
    assertThat(decide(1, true, true, 5_000 * MS, 4_000 * MS).reason()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
    assertThat(decide(2, true, true, RetryAfter.ABSENT, 200 * MS).reason()).as("wait == time left").isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
    assertThat(decide(2, true, true, RetryAfter.ABSENT, 201 * MS).delayNanos()).isEqualTo(200 * MS);
  }

  @Test
  void spreadNeverTakesMoreThanHalfTheTimeLeftAfterTheWait() {
    for (int i = 0; i < 1_000; i++) {
      Decision d = decide(1, true, true, 1_000 * MS, 1_200 * MS);
      assertThat(d.delayNanos()).isBetween(1_000 * MS, 1_100 * MS);
    }
  }

  @Test
  void spreadStaysWithinTheCeiling() {
    RetryRules tight = new RetryRules(policy.backoff(), 1_200 * MS, 1.0);
    for (int i = 0; i < 1_000; i++) {
      long d = decide(tight, 1, 3, true, true, 1_000 * MS, RetryRules.NO_DEADLINE, 100 * MS, random).delayNanos();
      assertThat(d).isBetween(1_000 * MS, 1_200 * MS);
    }
  }
}
