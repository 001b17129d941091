package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link OriginPacer}'s line of turns as its Javadoc and docs/semantics.md ("Pacing a crowd")
 * describe it: turns given back at the end, in the middle, or when none is held any more; turns
 * used; a lone call capped at its own latest time; idleness while a turn is still ahead; and the
 * bounds of what a refusal or two admissions teach (capped by the refusal's Retry-Afters, each
 * bound forgotten on its own after the memory).
 */
@Tag("unit")
class OriginPacerTurnsTest {
  static final long MS = 1_000_000L;
  static final long FAR = Long.MAX_VALUE / 4;
  static final long RETRY_AFTER = 1_000 * MS;
  static final long ABSENT = RetryAfter.ABSENT;

  /**
   * A pacer that heard a refusal 40 ms after an admission (turns 50 ms apart) and holds no turn.
   */
  static OriginPacer fiftyMsApartNoTurnHeld() {
    OriginPacer pacer = new OriginPacer();
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, FAR, 41 * MS);
    assertThat(pacer.intervalNanos(41 * MS)).isEqualTo(50 * MS);
    return pacer;
  }

  /** Three turns handed out at 42, 92 and 142 ms. */
  static OriginPacer threeTurns() {
    OriginPacer pacer = fiftyMsApartNoTurnHeld();
    assertThat(pacer.reserve(42 * MS, FAR, FAR)).as("no turn held: now").isEqualTo(42 * MS);
    assertThat(pacer.reserve(43 * MS, FAR, FAR)).isEqualTo(92 * MS);
    assertThat(pacer.reserve(44 * MS, FAR, FAR)).isEqualTo(142 * MS);
    assertThat(pacer.heldTurns()).isEqualTo(3);
    return pacer;
  }

  @Test
  void aTurnGivenBackAtTheEndOfTheLineIsHandedOutAgain() {
    OriginPacer pacer = threeTurns();
    pacer.givenBack(142 * MS, 45 * MS);
    assertThat(pacer.heldTurns()).isEqualTo(2);
    assertThat(pacer.reserve(46 * MS, FAR, FAR)).isEqualTo(142 * MS);
  }

  @Test
  void aTurnGivenBackInTheMiddleLeavesAHole() {
    OriginPacer pacer = threeTurns();
    pacer.givenBack(92 * MS, 45 * MS);
    assertThat(pacer.heldTurns()).isEqualTo(2);
    assertThat(pacer.reserve(46 * MS, FAR, FAR))
        .as("behind the last turn handed out")
        .isEqualTo(192 * MS);
  }

  @Test
  void onceNoTurnIsHeldTheNextCountsFromTheLastTurnUsed() {
    OriginPacer pacer = threeTurns();
    pacer.used(42 * MS, 45 * MS);
    pacer.givenBack(142 * MS, 46 * MS);
    pacer.givenBack(92 * MS, 47 * MS);
    assertThat(pacer.heldTurns()).isZero();
    assertThat(pacer.reserve(48 * MS, FAR, FAR))
        .as("50 ms after the turn used at 42")
        .isEqualTo(92 * MS);
  }

  @Test
  void onceEveryTurnWasGivenBackWithoutAnyUsedTheNextGoesNow() {
    OriginPacer pacer = threeTurns();
    pacer.givenBack(142 * MS, 45 * MS);
    pacer.givenBack(92 * MS, 46 * MS);
    pacer.givenBack(42 * MS, 47 * MS);
    assertThat(pacer.heldTurns()).isZero();
    assertThat(pacer.reserve(48 * MS, FAR, FAR)).isEqualTo(48 * MS);
  }

  @Test
  void whenTheLastHeldTurnIsUsedTheNextCountsFromTheLatestUsed() {
    OriginPacer pacer = threeTurns();
    pacer.used(92 * MS, 92 * MS);
    pacer.used(42 * MS, 93 * MS); // reported late: not the latest
    pacer.givenBack(142 * MS, 94 * MS);
    assertThat(pacer.heldTurns()).isZero();
    assertThat(pacer.reserve(95 * MS, FAR, FAR))
        .as("50 ms after 92, not after 42")
        .isEqualTo(142 * MS);
  }

  @Test
  void reportsOfMoreTurnsThanWereHeldNeverCountBelowZero() {
    OriginPacer pacer = fiftyMsApartNoTurnHeld();
    pacer.givenBack(0, 42 * MS);
    pacer.used(0, 42 * MS);
    assertThat(pacer.heldTurns()).isZero();
    pacer.reserve(43 * MS, FAR, FAR);
    assertThat(pacer.heldTurns()).isEqualTo(1);
    pacer.givenBack(43 * MS, 44 * MS);
    assertThat(pacer.heldTurns()).isZero();
  }

  @Test
  void aLoneCallGoesNoLaterThanItsOwnLatestTimeNorItsCeiling() {
    OriginPacer pacer = fiftyMsApartNoTurnHeld();
    pacer.reserve(42 * MS, FAR, FAR);
    pacer.used(42 * MS, 42 * MS); // no turn held: the next is alone
    assertThat(pacer.reserve(43 * MS, FAR, 60 * MS))
        .as("own latest 60 before its turn at 92")
        .isEqualTo(60 * MS);
    pacer.used(60 * MS, 60 * MS);
    assertThat(pacer.reserve(61 * MS, 70 * MS, 80 * MS))
        .as("its ceiling 70 before its own latest")
        .isEqualTo(70 * MS);
    pacer.used(70 * MS, 70 * MS);
    assertThat(pacer.reserve(71 * MS, 65 * MS, 65 * MS)).as("both past: now").isEqualTo(71 * MS);
    assertThat(pacer.heldTurns()).isEqualTo(1);
  }

  @Test
  void aCallBehindATurnStillAheadIsPacedPastItsOwnLatestTimeUpToItsCeiling() {
    OriginPacer pacer = fiftyMsApartNoTurnHeld();
    pacer.reserve(42 * MS, FAR, FAR);
    pacer.reserve(43 * MS, FAR, FAR); // 92, ahead
    assertThat(pacer.reserve(44 * MS, 142 * MS, 60 * MS))
        .as("not alone: its turn, within its ceiling")
        .isEqualTo(142 * MS);
    assertThat(pacer.reserve(45 * MS, 191 * MS, 191 * MS))
        .as("192 is past its ceiling: no turn")
        .isEqualTo(192 * MS);
    assertThat(pacer.heldTurns()).isEqualTo(3);
  }

  @Test
  void aPacerWithATurnStillAheadIsNotIdleAfterItsMemory() {
    long memory = 100 * MS;
    OriginPacer pacer =
        new OriginPacer(
            Tuning.PACING_GROWTH,
            Tuning.PACING_MARGIN,
            memory,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, FAR, 41 * MS); // 50 ms apart
    long tail = 0;
    for (int i = 0; i < 5; i++) tail = pacer.reserve(42 * MS + i, FAR, FAR);
    assertThat(tail).isEqualTo(242 * MS);
    long last = 42 * MS + 4;
    assertThat(pacer.isIdle(last + memory)).as("a turn at 242 ms is still ahead").isFalse();
    assertThat(pacer.isIdle(tail)).isTrue();
    assertThat(pacer.isIdle(last + memory - 1)).isFalse();

    OriginPacer noTurn =
        new OriginPacer(
            Tuning.PACING_GROWTH,
            Tuning.PACING_MARGIN,
            memory,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    noTurn.released(0, true, ABSENT, FAR, 1 * MS);
    assertThat(noTurn.isIdle(1 * MS + memory - 1)).isFalse();
    assertThat(noTurn.isIdle(1 * MS + memory)).isTrue();
  }

  @Test
  void anIdlePacerForgetsTheTurnsItStillCounted() {
    OriginPacer pacer = threeTurns();
    long later = 44 * MS + Tuning.PACING_MEMORY_NANOS;
    assertThat(pacer.reserve(later, FAR, FAR)).isEqualTo(later);
    assertThat(pacer.heldTurns()).as("the three lost turns are forgotten").isEqualTo(1);
  }

  @Test
  void theIntervalIsNeverLongerThanTheRetryAfterTheRefusedCallHadWaited() {
    OriginPacer pacer = new OriginPacer();
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, 45 * MS, 41 * MS);
    assertThat(pacer.learnedIntervalNanos())
        .as("40 × 1.25, at most the 45 ms waited")
        .isEqualTo(45 * MS);
    assertThat(pacer.intervalNanos(41 * MS)).isEqualTo(45 * MS);

    OriginPacer waitedNoLonger = new OriginPacer();
    waitedNoLonger.released(0, true, ABSENT, FAR, 1 * MS);
    waitedNoLonger.released(40 * MS, false, RETRY_AFTER, 40 * MS, 41 * MS);
    assertThat(waitedNoLonger.learnedIntervalNanos())
        .as("a gap as long as the wait teaches nothing")
        .isZero();

    OriginPacer shortRetryAfter = new OriginPacer();
    shortRetryAfter.released(0, true, ABSENT, FAR, 1 * MS);
    shortRetryAfter.released(40 * MS, false, 42 * MS, FAR, 41 * MS);
    assertThat(shortRetryAfter.learnedIntervalNanos())
        .as("at most the refusal's own Retry-After")
        .isEqualTo(42 * MS);
  }

  @Test
  void aRefusalAfterAShorterGapThanTheLowerBoundDoesNotLowerIt() {
    OriginPacer pacer = fiftyMsApartNoTurnHeld(); // lo = 40
    pacer.released(90 * MS, true, ABSENT, FAR, 91 * MS);
    pacer.released(120 * MS, false, RETRY_AFTER, FAR, 121 * MS); // 30 ms after an admission
    assertThat(pacer.learnedIntervalNanos()).isEqualTo(50 * MS);
  }

  @Test
  void eachBoundIsForgottenItsMemoryAfterItWasLearned() {
    long memory = 1_000 * MS;
    OriginPacer pacer =
        new OriginPacer(
            Tuning.PACING_GROWTH,
            Tuning.PACING_MARGIN,
            memory,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(50 * MS, true, ABSENT, FAR, 51 * MS); // hi = 50, learned at 51
    pacer.released(90 * MS, false, RETRY_AFTER, FAR, 91 * MS); // lo = 40, learned at 91
    assertThat(pacer.learnedIntervalNanos(91 * MS)).isEqualTo(55 * MS);
    assertThat(pacer.learnedIntervalNanos(51 * MS + memory - 1))
        .as("both known")
        .isEqualTo(55 * MS);
    assertThat(pacer.learnedIntervalNanos(51 * MS + memory))
        .as("hi forgotten, lo known: 40 × 1.25")
        .isEqualTo(50 * MS);
    assertThat(pacer.learnedIntervalNanos(91 * MS + memory - 1)).isEqualTo(50 * MS);
    assertThat(pacer.learnedIntervalNanos(91 * MS + memory)).as("lo forgotten too").isZero();
  }

  @Test
  void anUpperBoundAlreadyForgottenIsReplacedByAWiderOne() {
    long memory = 1_000 * MS;
    OriginPacer pacer =
        new OriginPacer(
            Tuning.PACING_GROWTH,
            Tuning.PACING_MARGIN,
            memory,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(30 * MS, true, ABSENT, FAR, 31 * MS); // hi = 30, learned at 31
    pacer.released(472 * MS, true, ABSENT, FAR, 473 * MS);
    pacer.released(500 * MS, false, RETRY_AFTER, FAR, 501 * MS); // lo = 28, learned at 501
    assertThat(pacer.learnedIntervalNanos()).as("min(30, 35) × 1.1").isEqualTo(33 * MS);
    pacer.released(1_040 * MS, true, ABSENT, FAR, 1_041 * MS);
    // 40 back to back, after hi was forgotten
    pacer.released(1_080 * MS, true, ABSENT, FAR, 1_081 * MS);
    assertThat(pacer.learnedIntervalNanos())
        .as("hi = 40: min(40, 35) × 1.1")
        .isEqualTo(38_500_000L);
  }

  @Test
  void aRefusalAfterTheLowerBoundWasForgottenTeachesANarrowerOne() {
    long memory = 1_000 * MS;
    OriginPacer pacer =
        new OriginPacer(
            Tuning.PACING_GROWTH,
            Tuning.PACING_MARGIN,
            memory,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, FAR, 41 * MS); // lo = 40, learned at 41
    pacer.released(900 * MS, true, ABSENT, FAR, 901 * MS); // activity: the pacer itself is not idle
    pacer.released(
        920 * MS, false, RETRY_AFTER, FAR, 1_041 * MS); // 20 ms after an admission, lo forgotten
    assertThat(pacer.learnedIntervalNanos()).as("lo = 20: 20 × 1.25").isEqualTo(25 * MS);
  }

  @Test
  void anUpperBoundOfOneNanosecondKeepsTheIntervalAboveZero() {
    OriginPacer pacer = fiftyMsApartNoTurnHeld(); // lo = 40
    pacer.released(100 * MS, true, ABSENT, FAR, 101 * MS);
    pacer.released(100 * MS + 1, true, ABSENT, FAR, 102 * MS); // admitted back to back 1 ns apart
    assertThat(pacer.learnedIntervalNanos())
        .as("lo at least 1 ns: something was refused")
        .isEqualTo(1);
  }

  @Test
  void aTurnExactlyNowIsNotAheadSoTheCallAskingIsAlone() {
    OriginPacer pacer = threeTurns();
    assertThat(pacer.reserve(142 * MS, FAR, 150 * MS))
        .as("the turn at 142 is not ahead at 142: capped at 150")
        .isEqualTo(150 * MS);
  }

  @Test
  void reportsOfTurnsUsedOrGivenBackAreActivity() {
    OriginPacer used = threeTurns();
    long late = 1_000 * MS;
    used.used(42 * MS, late);
    used.used(92 * MS, late);
    used.used(142 * MS, late);
    assertThat(used.isIdle(late + Tuning.PACING_MEMORY_NANOS - 1)).isFalse();
    assertThat(used.isIdle(late + Tuning.PACING_MEMORY_NANOS)).isTrue();

    OriginPacer givenBack = threeTurns();
    givenBack.givenBack(42 * MS, late);
    givenBack.givenBack(92 * MS, late);
    givenBack.givenBack(142 * MS, late);
    assertThat(givenBack.isIdle(late + Tuning.PACING_MEMORY_NANOS - 1)).isFalse();
    assertThat(givenBack.isIdle(late + Tuning.PACING_MEMORY_NANOS)).isTrue();
  }

  @Test
  void aTurnUsedAfterThePacerWentIdleCountsNothingFromBefore() {
    OriginPacer pacer = threeTurns();
    long later = 44 * MS + Tuning.PACING_MEMORY_NANOS;
    pacer.used(42 * MS, later); // everything before was forgotten: the three turns too
    assertThat(pacer.heldTurns()).isZero();
    assertThat(pacer.learnedIntervalNanos()).isZero();
  }

  @Test
  void whenTheLowerBoundIsEqualToANewUpperBoundItDropsStrictlyBelowIt() {
    OriginPacer pacer =
        new OriginPacer(
            1.0,
            Tuning.PACING_MARGIN,
            Tuning.PACING_MEMORY_NANOS,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, FAR, 41 * MS); // lo = 40
    pacer.released(90 * MS, true, ABSENT, FAR, 91 * MS);
    // hi = 40: lo drops below it, to 40 ms - 1 ns
    pacer.released(130 * MS, true, ABSENT, FAR, 131 * MS);
    assertThat(pacer.learnedIntervalNanos())
        .as("min(40, lo) × 1.1, lo < hi")
        .isEqualTo((long) ((40 * MS - 1) * 1.1));
  }

  @Test
  void aRefusalAboveTheLoweredBoundTeachesItAnew() {
    long memory = 1_000 * MS;
    OriginPacer pacer =
        new OriginPacer(
            Tuning.PACING_GROWTH,
            Tuning.PACING_MARGIN,
            memory,
            Tuning.PACING_RATE_WINDOW_NANOS,
            Tuning.PACING_RATE_SLACK);
    pacer.released(0, true, ABSENT, FAR, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, FAR, 41 * MS); // lo = 40, learned at 41
    pacer.released(90 * MS, true, ABSENT, FAR, 91 * MS);
    pacer.released(
        130 * MS, true, ABSENT, FAR,
        131 * MS); // hi = 40, learned at 131: lo drops to 40 / 1.25 = 32
    pacer.released(200 * MS, true, ABSENT, FAR, 201 * MS);
    // 35 ms after an admission: above 32, lo = 35
    pacer.released(235 * MS, false, RETRY_AFTER, FAR, 236 * MS);
    assertThat(pacer.learnedIntervalNanos(131 * MS + memory))
        .as("hi forgotten, lo = 35 learned at 236: 35 × 1.25")
        .isEqualTo(43_750_000L);
  }

  @Test
  void aTurnGivenBackAfterTheIntervalGrewIsNeverHandedOutBeforeTheLastTurnUsed() {
    OriginPacer pacer = threeTurns();
    pacer.used(92 * MS, 92 * MS);
    pacer.released(
        92 * MS,
        false,
        RETRY_AFTER,
        FAR,
        93 * MS); // refused 92 ms after the admission: 115 ms apart
    pacer.givenBack(142 * MS, 94 * MS);
    assertThat(pacer.reserve(95 * MS, FAR, FAR))
        .as("115 ms after the turn used at 92")
        .isEqualTo(207 * MS);
  }

  @Test
  void aTurnGivenBackAtTheEndAfterAnEarlierOneWasUsedIsHandedOutAgain() {
    OriginPacer pacer = threeTurns();
    pacer.used(42 * MS, 42 * MS);
    pacer.givenBack(142 * MS, 43 * MS);
    assertThat(pacer.reserve(50 * MS, FAR, FAR))
        .as("behind the turn at 92, still held")
        .isEqualTo(142 * MS);
  }
}
