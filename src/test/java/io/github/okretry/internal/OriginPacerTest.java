package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The pacer on fake time: what it learns from each answer, and a crowd against a limiter. */
@Tag("unit")
class OriginPacerTest {

  static final long MS = 1_000_000L;
  static final long RETRY_AFTER = 1_000 * MS;
  static final long NO_LIMIT = Long.MAX_VALUE / 4;
  static final long ABSENT = RetryAfter.ABSENT;
  static final long WAITED = NO_LIMIT; // the Retry-After a refused call had waited: no bound here

  @Test
  void untilTheOriginRefusesOneEveryRetryGoesAsItWakes() {
    OriginPacer pacer = new OriginPacer();
    assertThat(pacer.reserve(0, NO_LIMIT, NO_LIMIT)).isZero();
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    assertThat(pacer.reserve(10 * MS, NO_LIMIT, NO_LIMIT)).isEqualTo(10 * MS);
    assertThat(pacer.reserve(11 * MS, NO_LIMIT, NO_LIMIT)).isEqualTo(11 * MS);
    pacer.released(10 * MS, true, ABSENT, WAITED, 12 * MS);
    assertThat(pacer.learnedIntervalNanos()).isZero();
  }

  @Test
  void aRefusalSoonAfterAnAdmissionSpacesTheNextReleasesWiderThanThatGap() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.reserve(40 * MS, NO_LIMIT, NO_LIMIT);
    // 40 ms after an admitted one: too soon
    pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
    assertThat(pacer.learnedIntervalNanos()).isEqualTo(50 * MS); // 40 ms × PACING_GROWTH 1.25
    assertThat(pacer.reserve(42 * MS, NO_LIMIT, NO_LIMIT)).isEqualTo(90 * MS);
    assertThat(pacer.reserve(43 * MS, NO_LIMIT, NO_LIMIT)).as("in turn").isEqualTo(140 * MS);
  }

  @Test
  void twoAdmissionsBackToBackBoundTheGapFromAbove() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS); // lo = 40 ms
    pacer.released(90 * MS, true, ABSENT, WAITED, 91 * MS); // after a refusal: not back to back
    assertThat(pacer.learnedIntervalNanos()).isEqualTo(50 * MS);
    pacer.released(140 * MS, true, ABSENT, WAITED, 141 * MS); // hi = 50 ms
    assertThat(pacer.learnedIntervalNanos())
        .as("the narrowest gap admitted back to back, × 1.1")
        .isEqualTo(55 * MS);
    pacer.released(250 * MS, true, ABSENT, WAITED, 251 * MS); // 110 back to back: not narrower
    assertThat(pacer.learnedIntervalNanos()).isEqualTo(55 * MS);
  }

  @Test
  void aRefusalLongerAfterTheLastAdmissionThanItsRetryAfterSaysNothingAboutSpacing() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.released(2_000 * MS, false, RETRY_AFTER, WAITED, 2_001 * MS);
    assertThat(pacer.learnedIntervalNanos()).isZero();
    // No Retry-After: nothing to learn either
    pacer.released(2_100 * MS, false, ABSENT, WAITED, 2_101 * MS);
    assertThat(pacer.learnedIntervalNanos()).isZero();
  }

  @Test
  void refusalsWithoutAnyAdmissionLeaveTheBudgetToProtectTheOrigin() {
    OriginPacer pacer = new OriginPacer();
    for (long t = 0; t < 100; t++) {
      assertThat(pacer.reserve(t * MS, NO_LIMIT, NO_LIMIT)).isEqualTo(t * MS);
      pacer.released(t * MS, false, RETRY_AFTER, WAITED, t * MS + 1);
    }
    assertThat(pacer.learnedIntervalNanos()).isZero();
  }

  @Test
  void aRetryBehindOthersWhoseTurnWouldComeAfterItsLatestTimeTakesNoTurn() {
    OriginPacer pacer = oneTurnFiveHundredMsAhead();
    assertThat(pacer.reserve(403 * MS, 900 * MS, 900 * MS))
        .as("its turn (1 000 ms) is too late: none taken")
        .isEqualTo(1_000 * MS);
    assertThat(pacer.reserve(404 * MS, NO_LIMIT, NO_LIMIT))
        .as("the turn it did not take")
        .isEqualTo(1_000 * MS);
    assertThat(pacer.reserve(2_000 * MS, 1_500 * MS, 1_500 * MS))
        .as("latest already past: now")
        .isEqualTo(2_000 * MS);
  }

  @Test
  void boundsThatContradictEachOtherKeepTheNewer() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.released(50 * MS, true, ABSENT, WAITED, 51 * MS); // hi = 50
    pacer.released(90 * MS, false, RETRY_AFTER, WAITED, 91 * MS); // 40 after an admission: lo = 40
    assertThat(pacer.learnedIntervalNanos()).isEqualTo(55 * MS);
    // 120 after: the origin slowed down
    pacer.released(170 * MS, false, RETRY_AFTER, WAITED, 171 * MS);
    assertThat(pacer.learnedIntervalNanos()).as("hi dropped: 120 × 1.25").isEqualTo(150 * MS);
    pacer.released(200 * MS, true, ABSENT, WAITED, 201 * MS);
    pacer.released(230 * MS, true, ABSENT, WAITED, 231 * MS); // 30 back to back: it sped up again
    assertThat(pacer.learnedIntervalNanos()).as("hi = 30, lo dropped below it").isEqualTo(33 * MS);
  }

  @Test
  void aCrowdIsNeverPacedMuchSlowerThanTheOriginAdmitsThisClientsOtherCalls() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    // Refused 400 ms after: other calls filled the origin, not this retry's spacing.
    pacer.released(400 * MS, false, RETRY_AFTER, WAITED, 401 * MS);
    assertThat(pacer.intervalNanos(402 * MS)).isEqualTo(500 * MS);
    // Meanwhile the origin admits 100 of the client's unpaced calls within a second.
    for (int i = 0; i < 100; i++) pacer.admitted(402 * MS + i * 6 * MS);
    long now = 1_000 * MS;
    assertThat(pacer.learnedIntervalNanos()).as("learned").isEqualTo(500 * MS);
    assertThat(pacer.intervalNanos(now))
        .as("capped at 2 × the mean gap, 1 s / 101")
        .isEqualTo(2_000 * MS / 101);
    // The window slides: two seconds without admissions and the cap is gone.
    assertThat(pacer.intervalNanos(now + 2_500 * MS)).isEqualTo(500 * MS);
  }

  @Test
  void aRefusalAfterTheOriginAdmittedAnotherOfTheClientsCallsSaysNothingAboutSpacing() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.sent(20 * MS);
    pacer.admitted(20 * MS); // an unpaced call got through
    pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
    assertThat(pacer.learnedIntervalNanos())
        .as("20 ms after the last admission")
        .isEqualTo(25 * MS);
    pacer.sent(60 * MS);
    pacer.admitted(60 * MS); // sent after the next release left
    pacer.released(50 * MS, false, RETRY_AFTER, WAITED, 61 * MS);
    assertThat(pacer.learnedIntervalNanos()).as("unchanged").isEqualTo(25 * MS);
  }

  @Test
  void aRefusalAfterTheClientSentOtherCallsToTheOriginSaysNothingAboutSpacing() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.sent(10 * MS); // a first attempt, still in flight when the next release is refused
    pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
    assertThat(pacer.learnedIntervalNanos()).isZero();
  }

  @Test
  void everythingIsForgottenAfterItsMemory() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
    assertThat(pacer.isIdle(41 * MS + Tuning.PACING_MEMORY_NANOS - 1)).isFalse();
    assertThat(pacer.isIdle(41 * MS + Tuning.PACING_MEMORY_NANOS)).isTrue();
    long later = 41 * MS + Tuning.PACING_MEMORY_NANOS;
    assertThat(pacer.reserve(later, NO_LIMIT, NO_LIMIT)).isEqualTo(later);
    assertThat(pacer.learnedIntervalNanos()).isZero();
    assertThat(new OriginPacer().isIdle(0)).as("a new pacer holds nothing").isTrue();
  }

  /**
   * Refused 400 ms after an admitted release, so turns go 500 ms apart; a retry asking at 402 ms
   * holds the turn at 500 ms.
   */
  static OriginPacer oneTurnFiveHundredMsAhead() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.released(400 * MS, false, RETRY_AFTER, WAITED, 401 * MS);
    assertThat(pacer.reserve(402 * MS, NO_LIMIT, NO_LIMIT)).isEqualTo(500 * MS);
    return pacer;
  }

  /**
   * The refusal that teaches {@code lo}: 40 ms after an admitted release, so turns go 50 ms apart.
   */
  static OriginPacer learnedFiftyMs() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT, NO_LIMIT);
    pacer.released(0, true, ABSENT, WAITED, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
    assertThat(pacer.learnedIntervalNanos()).isEqualTo(50 * MS);
    return pacer;
  }

  /** Each setting's edge is accepted, and the first value past it rejected, naming it. */
  @Nested
  class Validation {
    @Test
    void growthMarginAndSlackOfExactlyOneAreAccepted() {
      OriginPacer pacer =
          new OriginPacer(
              1.0, 1.0, Tuning.PACING_MEMORY_NANOS, Tuning.PACING_RATE_WINDOW_NANOS, 1.0);
      pacer.reserve(0, NO_LIMIT, NO_LIMIT);
      pacer.released(0, true, ABSENT, WAITED, 1 * MS);
      pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
      assertThat(pacer.learnedIntervalNanos()).as("growth 1: lo itself").isEqualTo(40 * MS);
      pacer.released(80 * MS, true, ABSENT, WAITED, 81 * MS);
      pacer.released(130 * MS, true, ABSENT, WAITED, 131 * MS); // back to back, 50 ms apart
      assertThat(pacer.learnedIntervalNanos())
          .as("margin 1: min(hi, lo × growth) itself")
          .isEqualTo(40 * MS);
      assertThat(pacer.intervalNanos(131 * MS))
          .as("slack 1: at most the mean gap, 1 s / 3")
          .isEqualTo(40 * MS);
    }

    @Test
    void aMemoryAndARateWindowOfOneNanosecondAreAccepted() {
      OriginPacer pacer =
          new OriginPacer(
              Tuning.PACING_GROWTH, Tuning.PACING_MARGIN, 1, 1, Tuning.PACING_RATE_SLACK);
      pacer.reserve(0, NO_LIMIT, NO_LIMIT);
      pacer.released(0, true, ABSENT, WAITED, 1 * MS);
      pacer.released(40 * MS, false, RETRY_AFTER, WAITED, 41 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("everything forgotten 1 ns later: nothing learned")
          .isZero();
      assertThat(pacer.isIdle(41 * MS + 1)).isTrue();
    }

    static Stream<Arguments> badSettings() {
      long memory = Tuning.PACING_MEMORY_NANOS;
      long window = Tuning.PACING_RATE_WINDOW_NANOS;
      return Stream.of(
          Arguments.of(
              Named.of(
                  "growth below 1", (Executable) () -> new OriginPacer(0.99, 1, memory, window, 1)),
              "growth < 1: 0.99"),
          Arguments.of(
              Named.of(
                  "infinite growth",
                  (Executable)
                      () -> new OriginPacer(Double.POSITIVE_INFINITY, 1, memory, window, 1)),
              "growth < 1: Infinity"),
          Arguments.of(
              Named.of(
                  "margin below 1", (Executable) () -> new OriginPacer(1, 0.5, memory, window, 1)),
              "margin < 1: 0.5"),
          Arguments.of(
              Named.of(
                  "margin NaN",
                  (Executable) () -> new OriginPacer(1, Double.NaN, memory, window, 1)),
              "margin < 1: NaN"),
          Arguments.of(
              Named.of("no memory", (Executable) () -> new OriginPacer(1, 1, 0, window, 1)),
              "memoryNanos <= 0: 0"),
          Arguments.of(
              Named.of("no rate window", (Executable) () -> new OriginPacer(1, 1, memory, 0, 1)),
              "rateWindowNanos <= 0: 0"),
          Arguments.of(
              Named.of(
                  "slack below 1", (Executable) () -> new OriginPacer(1, 1, memory, window, 0.9)),
              "rateSlack < 1: 0.9"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badSettings")
    void badSettingsAreRejectedNamingThem(Executable make, String message) {
      assertThatThrownBy(make::execute)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(message);
    }
  }

  /** The exact edges of what an answer teaches and of when a turn is taken. */
  @Nested
  class Boundaries {
    @Test
    void aTurnThatFallsExactlyOnTheRetrysLatestTimeIsTaken() {
      OriginPacer pacer = oneTurnFiveHundredMsAhead();
      assertThat(pacer.reserve(403 * MS, 1_000 * MS, 1_000 * MS))
          .as("its turn is its latest time")
          .isEqualTo(1_000 * MS);
      assertThat(pacer.reserve(404 * MS, NO_LIMIT, NO_LIMIT))
          .as("so the next turn is one interval later")
          .isEqualTo(1_500 * MS);
    }

    @Test
    void aRefusalExactlyItsRetryAfterAfterTheLastAdmissionTeachesNothing() {
      OriginPacer pacer = new OriginPacer();
      pacer.reserve(0, NO_LIMIT, NO_LIMIT);
      pacer.released(0, true, ABSENT, WAITED, 1 * MS);
      pacer.released(RETRY_AFTER, false, RETRY_AFTER, WAITED, RETRY_AFTER + 1 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("gap == Retry-After: spacing could not have helped")
          .isZero();

      OriginPacer justBelow = new OriginPacer();
      justBelow.reserve(0, NO_LIMIT, NO_LIMIT);
      justBelow.released(0, true, ABSENT, WAITED, 1 * MS);
      justBelow.released(RETRY_AFTER - 1 * MS, false, RETRY_AFTER, WAITED, RETRY_AFTER);
      assertThat(justBelow.learnedIntervalNanos())
          .as("999 ms × 1.25, at most the Retry-After")
          .isEqualTo(RETRY_AFTER);
    }

    @Test
    void twoReleasesAtTheSameInstantSayNothingAboutTheGap() {
      OriginPacer pacer = learnedFiftyMs();
      pacer.released(90 * MS, true, ABSENT, WAITED, 91 * MS);
      pacer.released(90 * MS, true, ABSENT, WAITED, 92 * MS);
      assertThat(pacer.learnedIntervalNanos()).isEqualTo(50 * MS);
    }

    @Test
    void aRefusalExactlyAtTheUpperBoundMakesItTheLowerBoundAndDropsTheUpper() {
      OriginPacer pacer = learnedFiftyMs(); // lo = 40
      pacer.released(90 * MS, true, ABSENT, WAITED, 91 * MS);
      pacer.released(140 * MS, true, ABSENT, WAITED, 141 * MS); // hi = 50
      assertThat(pacer.learnedIntervalNanos()).isEqualTo(55 * MS);
      // Refused 50 ms after an admission
      pacer.released(190 * MS, false, RETRY_AFTER, WAITED, 191 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("lo = hi = 50: hi dropped, 50 × 1.25")
          .isEqualTo(62_500_000L);
    }

    @Test
    void whenTheOriginSpeedsUpToTheLowerBoundTheLowerBoundDropsBelowIt() {
      OriginPacer pacer = learnedFiftyMs(); // lo = 40
      pacer.released(90 * MS, true, ABSENT, WAITED, 91 * MS);
      pacer.released(130 * MS, true, ABSENT, WAITED, 131 * MS); // hi = 40 = lo: lo drops to 30
      assertThat(pacer.learnedIntervalNanos()).isEqualTo(44 * MS);
      // Refused 40 ms after: above lo again
      pacer.released(170 * MS, false, RETRY_AFTER, WAITED, 171 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("lo = hi = 40: hi dropped, 40 × 1.25")
          .isEqualTo(50 * MS);
    }

    @Test
    void aMemoryLongPauseBeforeAnAnswerForgetsWhatWasLearned() {
      OriginPacer pacer = learnedFiftyMs();
      long later = 41 * MS + Tuning.PACING_MEMORY_NANOS;
      pacer.released(later, true, ABSENT, WAITED, later);
      assertThat(pacer.learnedIntervalNanos()).isZero();
    }

    @Test
    void refusalsAreNotCountedAsAdmissions() {
      OriginPacer pacer = new OriginPacer();
      pacer.reserve(0, NO_LIMIT, NO_LIMIT);
      pacer.released(0, true, ABSENT, WAITED, 1 * MS);
      pacer.released(400 * MS, false, RETRY_AFTER, WAITED, 401 * MS); // interval 500 ms
      for (long t = 401; t <= 404; t++) pacer.released(t * MS, false, ABSENT, WAITED, t * MS + 1);
      assertThat(pacer.intervalNanos(405 * MS))
          .as("one admission in the window: capped at 2 s, not 2 s / 5")
          .isEqualTo(500 * MS);
    }
  }

  /**
   * Reports come in the order their threads take the lock, not the order of their times: each one
   * counts by the time it carries, so a late report of an earlier event changes nothing.
   */
  @Nested
  class ReportsOutOfOrder {
    @Test
    void aLateAnswerForAnEarlierReleaseIsNotTheLatestRelease() {
      OriginPacer pacer = learnedFiftyMs();
      pacer.released(140 * MS, true, ABSENT, WAITED, 141 * MS);
      pacer.released(90 * MS, true, ABSENT, WAITED, 142 * MS); // answered late
      pacer.released(190 * MS, true, ABSENT, WAITED, 191 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("back to back with 140, 50 ms: hi = 50")
          .isEqualTo(55 * MS);
    }

    @Test
    void aLateAdmissionOfAnEarlierReleaseIsNotTheLatestAdmission() {
      OriginPacer pacer = learnedFiftyMs();
      pacer.released(140 * MS, true, ABSENT, WAITED, 141 * MS);
      pacer.released(90 * MS, true, ABSENT, WAITED, 142 * MS); // answered late
      pacer.released(200 * MS, false, RETRY_AFTER, WAITED, 201 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("refused 60 ms after the admission at 140: 60 × 1.25")
          .isEqualTo(75 * MS);
    }

    @Test
    void aLateReportOfAnEarlierSendIsNotTheLatestSend() {
      OriginPacer pacer = new OriginPacer();
      pacer.reserve(100 * MS, NO_LIMIT, NO_LIMIT);
      pacer.released(100 * MS, true, ABSENT, WAITED, 101 * MS);
      pacer.sent(50 * MS);
      pacer.sent(120 * MS); // still in flight when the next release is refused
      pacer.sent(60 * MS); // reported late
      pacer.released(140 * MS, false, RETRY_AFTER, WAITED, 141 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("another call was sent since the admission: nothing learned")
          .isZero();
    }

    @Test
    void aLateReportOfAnEarlierAdmissionIsNotTheLatestAdmission() {
      OriginPacer pacer = new OriginPacer();
      pacer.reserve(100 * MS, NO_LIMIT, NO_LIMIT);
      pacer.released(100 * MS, true, ABSENT, WAITED, 101 * MS);
      pacer.admitted(50 * MS);
      pacer.admitted(120 * MS);
      pacer.admitted(60 * MS); // reported late
      pacer.released(140 * MS, false, RETRY_AFTER, WAITED, 141 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("refused 20 ms after the admission at 120: 20 × 1.25")
          .isEqualTo(25 * MS);
    }

    @Test
    void anAdmissionOfAnotherCallBeforeTheLastReleaseDoesNotMoveTheGapsStart() {
      OriginPacer pacer = new OriginPacer();
      pacer.reserve(0, NO_LIMIT, NO_LIMIT);
      pacer.sent(5 * MS);
      pacer.admitted(5 * MS);
      pacer.released(10 * MS, true, ABSENT, WAITED, 11 * MS);
      pacer.released(50 * MS, false, RETRY_AFTER, WAITED, 51 * MS);
      assertThat(pacer.learnedIntervalNanos())
          .as("40 ms after the release at 10, not 45 after the call at 5")
          .isEqualTo(50 * MS);
    }
  }

  /**
   * {@code System.nanoTime()} has an arbitrary origin, possibly negative, and a client may have run
   * for days: the pacer compares only differences, so it answers the same at any origin.
   */
  @Nested
  class AnyClockOrigin {
    static final long DAYS = 1_000_000_000_000_000L; // about 11.6 days of nanoseconds

    @ParameterizedTest(name = "origin {0}")
    @ValueSource(longs = {0, DAYS, -DAYS})
    void theSameAnswersAtAnyOrigin(long o) {
      OriginPacer pacer = new OriginPacer();
      assertThat(pacer.reserve(o, o + NO_LIMIT, o + NO_LIMIT)).isEqualTo(o);
      pacer.released(o, true, ABSENT, WAITED, o + 1 * MS);
      pacer.sent(o + 5 * MS);
      pacer.admitted(o + 5 * MS); // another call, before the next release left
      pacer.released(
          o + 45 * MS, false, RETRY_AFTER, WAITED, o + 46 * MS); // 40 ms after that admission
      assertThat(pacer.reserve(o + 47 * MS, o + NO_LIMIT, o + NO_LIMIT))
          .as("turns 50 ms apart")
          .isEqualTo(o + 50 * MS);
      assertThat(pacer.reserve(o + 48 * MS, o + NO_LIMIT, o + NO_LIMIT)).isEqualTo(o + 100 * MS);
      long later = o + 48 * MS + Tuning.PACING_MEMORY_NANOS;
      assertThat(pacer.reserve(later, o + NO_LIMIT, o + NO_LIMIT))
          .as("forgotten after its memory")
          .isEqualTo(later);
      assertThat(pacer.learnedIntervalNanos()).isZero();
    }

    @Test
    void aPacerThatOnlyHeardAnswersForgetsThemAfterItsMemory() {
      long o = DAYS;
      OriginPacer pacer = new OriginPacer(); // an answer may reach a pacer that handed out no turn
      pacer.released(o, true, ABSENT, WAITED, o + 1 * MS);
      pacer.released(o + 40 * MS, false, RETRY_AFTER, WAITED, o + 41 * MS);
      assertThat(pacer.learnedIntervalNanos()).isEqualTo(50 * MS);
      long later = o + 41 * MS + Tuning.PACING_MEMORY_NANOS;
      assertThat(pacer.reserve(later, o + NO_LIMIT, o + NO_LIMIT)).isEqualTo(later);
      assertThat(pacer.learnedIntervalNanos()).isZero();
    }

    @Test
    void admissionsOfOtherCallsBeforeTheFirstTurnCountTowardTheRate() {
      long o = DAYS;
      OriginPacer pacer = new OriginPacer();
      for (int i = 0; i < 40; i++) pacer.admitted(o);
      pacer.reserve(o + 1 * MS, o + NO_LIMIT, o + NO_LIMIT);
      pacer.released(o + 1 * MS, true, ABSENT, WAITED, o + 2 * MS);
      pacer.released(o + 41 * MS, false, RETRY_AFTER, WAITED, o + 42 * MS); // learned: 50 ms
      assertThat(pacer.intervalNanos(o + 42 * MS))
          .as("41 admissions in the window: 2 s / 41")
          .isEqualTo(2_000 * MS / 41);
    }
  }

  /**
   * The cap by the rate of admissions: counted in a sliding window of two fixed ones, the previous
   * window weighted by the part of it still inside the sliding one. A 100 ms window and slack 1
   * here, so the cap is 100 ms / admissions.
   */
  @Nested
  class RateWindow {
    static final long WINDOW = 100 * MS;

    /**
     * A pacer that learned a 500 ms interval at {@code o}; its window is empty from {@code o + 450
     * ms}.
     */
    static OriginPacer learned(long o) {
      OriginPacer pacer =
          new OriginPacer(
              Tuning.PACING_GROWTH, Tuning.PACING_MARGIN, Tuning.PACING_MEMORY_NANOS, WINDOW, 1.0);
      pacer.reserve(o, o + NO_LIMIT, o + NO_LIMIT);
      pacer.released(o, true, ABSENT, WAITED, o + 1 * MS);
      pacer.released(o + 400 * MS, false, RETRY_AFTER, WAITED, o + 401 * MS);
      assertThat(pacer.intervalNanos(o + 450 * MS))
          .as("the admission at o is out of the window")
          .isEqualTo(500 * MS);
      return pacer;
    }

    @ParameterizedTest(name = "origin {0}")
    @ValueSource(longs = {0, -AnyClockOrigin.DAYS})
    void oneAdmissionInTheWindowCapsTheInterval(long o) {
      OriginPacer pacer = learned(o);
      pacer.admitted(o + 450 * MS);
      assertThat(pacer.intervalNanos(o + 450 * MS)).isEqualTo(WINDOW);
    }

    @ParameterizedTest(name = "origin {0}")
    @ValueSource(longs = {0, -AnyClockOrigin.DAYS})
    void thePreviousWindowCountsByTheShareOfItStillInside(long o) {
      OriginPacer pacer = learned(o);
      long s = o + 450 * MS;
      pacer.admitted(s);
      pacer.admitted(s + 50 * MS);
      assertThat(pacer.intervalNanos(s + 150 * MS)).as("2 × 0.5 + 0").isEqualTo(WINDOW);
      pacer.admitted(s + 150 * MS);
      assertThat(pacer.intervalNanos(s + 175 * MS))
          .as("2 × 0.25 + 1")
          .isEqualTo((long) (WINDOW / 1.5));
    }

    @Test
    void anAdmissionExactlyOneWindowLaterOpensTheNextWindow() {
      OriginPacer pacer = learned(0);
      long s = 450 * MS;
      pacer.admitted(s);
      pacer.admitted(s + WINDOW);
      assertThat(pacer.intervalNanos(s + 150 * MS))
          .as("1 × 0.5 + 1")
          .isEqualTo((long) (WINDOW / 1.5));
    }

    @Test
    void anAdmissionExactlyTwoWindowsLaterStartsAfresh() {
      OriginPacer pacer = learned(0);
      long s = 450 * MS;
      pacer.admitted(s);
      pacer.admitted(s + 2 * WINDOW);
      assertThat(pacer.intervalNanos(s + 250 * MS)).as("0 × 0.5 + 1").isEqualTo(WINDOW);
    }
  }

  // ---- A crowd against a limiter, on fake time: the same model as the nginx benchmark ----

  /** Admits a request only if at least {@code gapNanos} passed since the last admitted one. */
  static final class StrictLimiter {
    final long gapNanos;
    long lastAdmitted = Long.MIN_VALUE / 2;

    StrictLimiter(long gapNanos) {
      this.gapNanos = gapNanos;
    }

    boolean admit(long t) {
      if (t - lastAdmitted < gapNanos) return false;
      lastAdmitted = t;
      return true;
    }
  }

  record Crowd(int succeeded, int attempts, long makespanNanos) {}

  /**
   * {@code callers} first attempts arrive within 30 ms; each refused one waits {@code Retry-After:
   * 1} spread upward by up to 50 %, asks the pacer (or, unpaced, goes at once), and is answered 1–3
   * ms after it arrives. Deadline 20 s, maxRetryAfter 5 s.
   */
  static Crowd crowd(int callers, long limiterGapNanos, boolean paced, long seed) {
    return crowd(callers, limiterGapNanos, paced, seed, new OriginPacer());
  }

  static int jitterMs = 2; // a release leaves 0..jitterMs-1 ms after its turn

  static Crowd crowd(
      int callers, long limiterGapNanos, boolean paced, long seed, OriginPacer pacer) {
    SplittableRandom random = new SplittableRandom(seed);
    StrictLimiter limiter = new StrictLimiter(limiterGapNanos);
    // event: {time, kind (0 arrive at server, 1 wake), caller, slot or -1}
    PriorityQueue<long[]> events = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    for (int i = 0; i < callers; i++) events.add(new long[] {random.nextLong(30 * MS), 0, i, -1});
    long[] latest = new long[callers];
    long[] ownLatest = new long[callers];
    int attempts = 0;
    int succeeded = 0;
    long makespan = 0;
    while (!events.isEmpty()) {
      long[] e = events.poll();
      long t = e[0];
      int caller = (int) e[2];
      if (e[1] == 0) {
        attempts++;
        if (e[3] >= 0) pacer.used(e[3], t);
        boolean admitted = limiter.admit(t);
        long answered = t + (1 + random.nextInt(3)) * MS;
        if (e[3] >= 0) {
          pacer.released(e[3], admitted, admitted ? ABSENT : RETRY_AFTER, RETRY_AFTER, answered);
        }
        if (admitted) {
          succeeded++;
          makespan = Math.max(makespan, answered);
        } else if (answered + RETRY_AFTER < 20_000 * MS) {
          long spread = random.nextLong(RETRY_AFTER / 2 + 1);
          latest[caller] =
              answered
                  + Math.min(5_000 * MS, RETRY_AFTER + (20_000 * MS - answered - RETRY_AFTER) / 2);
          ownLatest[caller] = Math.min(latest[caller], answered + RETRY_AFTER + RETRY_AFTER / 2);
          events.add(new long[] {answered + RETRY_AFTER + spread, 1, caller, -1});
        }
      } else {
        long slot = paced ? pacer.reserve(t, latest[caller], ownLatest[caller]) : t;
        if (slot - Math.max(t, latest[caller]) > 0) {
          continue; // no turn before its latest time: gives up
        }
        events.add(new long[] {slot + random.nextInt(jitterMs) * MS, 0, caller, paced ? slot : -1});
      }
    }
    return new Crowd(succeeded, attempts, makespan);
  }

  @ParameterizedTest(name = "limiter {0}/s")
  @ValueSource(ints = {5, 20, 100})
  void aCrowdOfFortyPacedAgainstAStrictLimiterNeedsFewerAttemptsAndLessTime(int perSecond) {
    long gap = 1_000 * MS / perSecond;
    List<Crowd> paced = new ArrayList<>();
    List<Crowd> unpaced = new ArrayList<>();
    for (long seed = 1; seed <= 50; seed++) {
      paced.add(crowd(40, gap, true, seed));
      unpaced.add(crowd(40, gap, false, seed));
    }
    double pacedAttempts = paced.stream().mapToInt(Crowd::attempts).average().orElseThrow() / 40;
    double unpacedAttempts =
        unpaced.stream().mapToInt(Crowd::attempts).average().orElseThrow() / 40;
    double pacedMs = paced.stream().mapToLong(Crowd::makespanNanos).average().orElseThrow() / MS;
    double unpacedMs =
        unpaced.stream().mapToLong(Crowd::makespanNanos).average().orElseThrow() / MS;
    if (Boolean.getBoolean("okretry.printTables")) {
      System.out.printf(
          "limiter %d/s, 40 callers, 50 seeds: paced %.2f attempts/call, %.0f ms; unpaced %.2f,"
              + " %.0f ms%n",
          perSecond, pacedAttempts, pacedMs, unpacedAttempts, unpacedMs);
    }
    // At 5/s the 40 need 8 s, past the 5 s ceiling: those whose turn would come later give up
    // with the origin's answer (11 to 16 of 40) instead of being released together at 5 s.
    int fit = perSecond == 5 ? 20 : 40;
    assertThat(paced).allSatisfy(c -> assertThat(c.succeeded()).isGreaterThanOrEqualTo(fit));
    assertThat(pacedAttempts).isLessThan(unpacedAttempts);
    assertThat(pacedMs).isLessThan(unpacedMs);
    if (perSecond == 20) { // the burst: ≤ 2.5 attempts per call, ≤ 4 s
      assertThat(pacedAttempts).isLessThanOrEqualTo(2.5);
      assertThat(pacedMs).isLessThanOrEqualTo(4_000);
    }
  }

  // The table behind Tuning.PACING_GROWTH and PACING_MARGIN, a report and not a test: it runs
  // only when asked for, -Dokretry.tune=true, and so is never counted as a test that passed.
  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "okretry.tune", matches = "true")
  void printTuningTable() {
    for (int jitter : new int[] {2, 5}) {
      jitterMs = jitter;
      for (int perSecond : new int[] {5, 20, 100}) {
        for (double growth : new double[] {1.25, 1.5}) {
          for (double margin : new double[] {1.0, 1.05, 1.1, 1.2}) {
            double att = 0, ms = 0, worst = 0, over4 = 0;
            for (long seed = 1; seed <= 200; seed++) {
              Crowd c =
                  crowd(
                      40,
                      1_000 * MS / perSecond,
                      true,
                      seed,
                      new OriginPacer(
                          growth,
                          margin,
                          Tuning.PACING_MEMORY_NANOS,
                          Tuning.PACING_RATE_WINDOW_NANOS,
                          Tuning.PACING_RATE_SLACK));
              att += c.attempts() / 40.0 / 200;
              ms += c.makespanNanos() / 1e6 / 200;
              worst = Math.max(worst, c.makespanNanos() / 1e6);
              if (c.makespanNanos() > 4_000 * MS) over4++;
            }
            System.out.printf(
                "jitter %d ms, %3d/s, growth %.2f, margin %.2f: %.2f attempts/call, %.0f ms mean,"
                    + " %.0f ms worst, %.0f%% over 4 s%n",
                jitter, perSecond, growth, margin, att, ms, worst, over4 / 2);
          }
        }
      }
    }
    jitterMs = 2;
  }
}
