package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The pacer on fake time: what it learns from each answer, and a crowd against a limiter. */
@Tag("unit")
class OriginPacerTest {

  static final long MS = 1_000_000L;
  static final long RETRY_AFTER = 1_000 * MS;
  static final long NO_LIMIT = Long.MAX_VALUE / 4;
  static final long ABSENT = RetryAfter.ABSENT;

  @Test
  void untilTheOriginRefusesOneEveryRetryGoesAsItWakes() {
    OriginPacer pacer = new OriginPacer();
    assertThat(pacer.reserve(0, NO_LIMIT)).isZero();
    pacer.released(0, true, ABSENT, 1 * MS);
    assertThat(pacer.reserve(10 * MS, NO_LIMIT)).isEqualTo(10 * MS);
    assertThat(pacer.reserve(11 * MS, NO_LIMIT)).isEqualTo(11 * MS);
    pacer.released(10 * MS, true, ABSENT, 12 * MS);
    assertThat(pacer.intervalNanos()).isZero();
  }

  @Test
  void aRefusalSoonAfterAnAdmissionSpacesTheNextReleasesWiderThanThatGap() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.reserve(40 * MS, NO_LIMIT);
    pacer.released(40 * MS, false, RETRY_AFTER, 41 * MS); // 40 ms after an admitted one: too soon
    assertThat(pacer.intervalNanos()).isEqualTo(50 * MS); // 40 ms × PACING_GROWTH 1.25
    assertThat(pacer.reserve(42 * MS, NO_LIMIT)).isEqualTo(90 * MS);
    assertThat(pacer.reserve(43 * MS, NO_LIMIT)).as("in turn").isEqualTo(140 * MS);
  }

  @Test
  void twoAdmissionsBackToBackBoundTheGapFromAbove() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, 41 * MS); // lo = 40 ms
    pacer.released(90 * MS, true, ABSENT, 91 * MS); // after a refusal: not back to back
    assertThat(pacer.intervalNanos()).isEqualTo(50 * MS);
    pacer.released(140 * MS, true, ABSENT, 141 * MS); // hi = 50 ms
    assertThat(pacer.intervalNanos()).as("the narrowest gap admitted back to back, × 1.1").isEqualTo(55 * MS);
    pacer.released(250 * MS, true, ABSENT, 251 * MS); // 110 back to back: not narrower
    assertThat(pacer.intervalNanos()).isEqualTo(55 * MS);
  }

  @Test
  void aRefusalLongerAfterTheLastAdmissionThanItsRetryAfterSaysNothingAboutSpacing() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.released(2_000 * MS, false, RETRY_AFTER, 2_001 * MS);
    assertThat(pacer.intervalNanos()).isZero();
    pacer.released(2_100 * MS, false, ABSENT, 2_101 * MS); // no Retry-After: nothing to learn either
    assertThat(pacer.intervalNanos()).isZero();
  }

  @Test
  void refusalsWithoutAnyAdmissionLeaveTheBudgetToProtectTheOrigin() {
    OriginPacer pacer = new OriginPacer();
    for (long t = 0; t < 100; t++) {
      assertThat(pacer.reserve(t * MS, NO_LIMIT)).isEqualTo(t * MS);
      pacer.released(t * MS, false, RETRY_AFTER, t * MS + 1);
    }
    assertThat(pacer.intervalNanos()).isZero();
  }

  @Test
  void aReleaseNeverComesAfterTheRetrysLatestTimeAndOneThatWouldTakesNoTurn() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.released(400 * MS, false, RETRY_AFTER, 401 * MS); // interval 500 ms
    assertThat(pacer.reserve(402 * MS, NO_LIMIT)).isEqualTo(500 * MS);
    assertThat(pacer.reserve(403 * MS, 900 * MS)).as("its turn (1 000 ms) is too late").isEqualTo(900 * MS);
    assertThat(pacer.reserve(404 * MS, NO_LIMIT)).as("the turn it did not take").isEqualTo(1_000 * MS);
    assertThat(pacer.reserve(2_000 * MS, 1_500 * MS)).as("latest already past: now").isEqualTo(2_000 * MS);
  }

  @Test
  void boundsThatContradictEachOtherKeepTheNewer() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.released(50 * MS, true, ABSENT, 51 * MS); // hi = 50
    pacer.released(90 * MS, false, RETRY_AFTER, 91 * MS); // 40 after an admission: lo = 40
    assertThat(pacer.intervalNanos()).isEqualTo(55 * MS);
    pacer.released(170 * MS, false, RETRY_AFTER, 171 * MS); // 120 after: the origin slowed down
    assertThat(pacer.intervalNanos()).as("hi dropped: 120 × 1.25").isEqualTo(150 * MS);
    pacer.released(200 * MS, true, ABSENT, 201 * MS);
    pacer.released(230 * MS, true, ABSENT, 231 * MS); // 30 back to back: it sped up again
    assertThat(pacer.intervalNanos()).as("hi = 30, lo dropped below it").isEqualTo(33 * MS);
  }

  @Test
  void aCrowdIsNeverPacedMuchSlowerThanTheOriginAdmitsThisClientsOtherCalls() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    // Refused 400 ms after: other calls filled the origin, not this retry's spacing.
    pacer.released(400 * MS, false, RETRY_AFTER, 401 * MS);
    assertThat(pacer.intervalNanos(402 * MS)).isEqualTo(500 * MS);
    // Meanwhile the origin admits 100 of the client's unpaced calls within a second.
    for (int i = 0; i < 100; i++) pacer.admitted(402 * MS + i * 6 * MS);
    long now = 1_000 * MS;
    assertThat(pacer.intervalNanos()).as("learned").isEqualTo(500 * MS);
    assertThat(pacer.intervalNanos(now)).as("capped at 2 × the mean gap, 1 s / 101").isEqualTo(2_000 * MS / 101);
    // The window slides: two seconds without admissions and the cap is gone.
    assertThat(pacer.intervalNanos(now + 2_500 * MS)).isEqualTo(500 * MS);
  }

  @Test
  void aRefusalAfterTheOriginAdmittedAnotherOfTheClientsCallsSaysNothingAboutSpacing() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.sent(20 * MS);
    pacer.admitted(20 * MS); // an unpaced call got through
    pacer.released(40 * MS, false, RETRY_AFTER, 41 * MS);
    assertThat(pacer.intervalNanos()).as("20 ms after the last admission").isEqualTo(25 * MS);
    pacer.sent(60 * MS);
    pacer.admitted(60 * MS); // sent after the next release left
    pacer.released(50 * MS, false, RETRY_AFTER, 61 * MS);
    assertThat(pacer.intervalNanos()).as("unchanged").isEqualTo(25 * MS);
  }

  @Test
  void aRefusalAfterTheClientSentOtherCallsToTheOriginSaysNothingAboutSpacing() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.sent(10 * MS); // a first attempt, still in flight when the next release is refused
    pacer.released(40 * MS, false, RETRY_AFTER, 41 * MS);
    assertThat(pacer.intervalNanos()).isZero();
  }

  @Test
  void everythingIsForgottenAfterItsMemory() {
    OriginPacer pacer = new OriginPacer();
    pacer.reserve(0, NO_LIMIT);
    pacer.released(0, true, ABSENT, 1 * MS);
    pacer.released(40 * MS, false, RETRY_AFTER, 41 * MS);
    assertThat(pacer.isIdle(41 * MS + Tuning.PACING_MEMORY_NANOS - 1)).isFalse();
    assertThat(pacer.isIdle(41 * MS + Tuning.PACING_MEMORY_NANOS)).isTrue();
    long later = 41 * MS + Tuning.PACING_MEMORY_NANOS;
    assertThat(pacer.reserve(later, NO_LIMIT)).isEqualTo(later);
    assertThat(pacer.intervalNanos()).isZero();
    assertThat(new OriginPacer().isIdle(0)).as("a new pacer holds nothing").isTrue();
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
   * 1} spread upward by up to 50 %, asks the pacer (or, unpaced, goes at once), and is answered
   * 1–3 ms after it arrives. Deadline 20 s, maxRetryAfter 5 s.
   */
  static Crowd crowd(int callers, long limiterGapNanos, boolean paced, long seed) {
    return crowd(callers, limiterGapNanos, paced, seed, new OriginPacer());
  }

  static int jitterMs = 2; // a release leaves 0..jitterMs-1 ms after its turn

  static Crowd crowd(int callers, long limiterGapNanos, boolean paced, long seed, OriginPacer pacer) {
    SplittableRandom random = new SplittableRandom(seed);
    StrictLimiter limiter = new StrictLimiter(limiterGapNanos);
    // event: {time, kind (0 arrive at server, 1 wake), caller, slot or -1}
    PriorityQueue<long[]> events = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    for (int i = 0; i < callers; i++) events.add(new long[] {random.nextLong(30 * MS), 0, i, -1});
    long[] latest = new long[callers];
    int attempts = 0;
    int succeeded = 0;
    long makespan = 0;
    while (!events.isEmpty()) {
      long[] e = events.poll();
      long t = e[0];
      int caller = (int) e[2];
      if (e[1] == 0) {
        attempts++;
        boolean admitted = limiter.admit(t);
        long answered = t + (1 + random.nextInt(3)) * MS;
        if (e[3] >= 0) pacer.released(e[3], admitted, admitted ? ABSENT : RETRY_AFTER, answered);
        if (admitted) {
          succeeded++;
          makespan = Math.max(makespan, answered);
        } else if (answered + RETRY_AFTER < 20_000 * MS) {
          long spread = random.nextLong(RETRY_AFTER / 2 + 1);
          latest[caller] = answered + Math.min(5_000 * MS, RETRY_AFTER + (20_000 * MS - answered - RETRY_AFTER) / 2);
          events.add(new long[] {answered + RETRY_AFTER + spread, 1, caller, -1});
        }
      } else {
        long slot = paced ? pacer.reserve(t, latest[caller]) : t;
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
    double unpacedAttempts = unpaced.stream().mapToInt(Crowd::attempts).average().orElseThrow() / 40;
    double pacedMs = paced.stream().mapToLong(Crowd::makespanNanos).average().orElseThrow() / MS;
    double unpacedMs = unpaced.stream().mapToLong(Crowd::makespanNanos).average().orElseThrow() / MS;
    if (Boolean.getBoolean("okretry.printTables")) {
      System.out.printf("limiter %d/s, 40 callers, 50 seeds: paced %.2f attempts/call, %.0f ms; unpaced %.2f, %.0f ms%n",
          perSecond, pacedAttempts, pacedMs, unpacedAttempts, unpacedMs);
    }
    assertThat(paced).allSatisfy(c -> assertThat(c.succeeded()).isEqualTo(40));
    assertThat(pacedAttempts).isLessThan(unpacedAttempts);
    assertThat(pacedMs).isLessThan(unpacedMs);
    if (perSecond == 20) { // the burst: ≤ 2.5 attempts per call, ≤ 4 s
      assertThat(pacedAttempts).isLessThanOrEqualTo(2.5);
      assertThat(pacedMs).isLessThanOrEqualTo(4_000);
    }
  }

  @Test
  void printTuningTable() { // -Dokretry.tune=true: the table behind Tuning.PACING_GROWTH and PACING_MARGIN
    if (!Boolean.getBoolean("okretry.tune")) return;
    for (int jitter : new int[] {2, 5}) {
      jitterMs = jitter;
      for (int perSecond : new int[] {5, 20, 100}) {
        for (double growth : new double[] {1.25, 1.5}) {
          for (double margin : new double[] {1.0, 1.05, 1.1, 1.2}) {
            double att = 0, ms = 0, worst = 0, over4 = 0;
            for (long seed = 1; seed <= 200; seed++) {
              Crowd c = crowd(40, 1_000 * MS / perSecond, true, seed,
                  new OriginPacer(growth, margin, Tuning.PACING_MEMORY_NANOS, Tuning.PACING_RATE_WINDOW_NANOS, Tuning.PACING_RATE_SLACK));
              att += c.attempts() / 40.0 / 200;
              ms += c.makespanNanos() / 1e6 / 200;
              worst = Math.max(worst, c.makespanNanos() / 1e6);
              if (c.makespanNanos() > 4_000 * MS) over4++;
            }
            System.out.printf("jitter %d ms, %3d/s, growth %.2f, margin %.2f: %.2f attempts/call, %.0f ms mean, %.0f ms worst, %.0f%% over 4 s%n",
                jitter, perSecond, growth, margin, att, ms, worst, over4 / 2);
          }
        }
      }
    }
    jitterMs = 2;
  }
}
