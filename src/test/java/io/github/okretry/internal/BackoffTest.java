package io.github.okretry.internal;

import static io.github.okretry.SeededProperties.logUniform;
import static io.github.okretry.SeededProperties.multiplier;
import static io.github.okretry.internal.ExtremeRandom.HIGHEST;
import static io.github.okretry.internal.ExtremeRandom.LOWEST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.Diagnostics;
import io.github.okretry.SeededProperties;
import io.github.okretry.internal.Backoff.Jitter;
import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Backoff}: the cap {@code min(base × m^(n-1), max)} with saturating arithmetic, each jitter
 * kind's range and exact ends, validation, and seeded properties over random valid configurations.
 * Through the interceptor: {@code DelaysTest}.
 */
@Tag("unit")
class BackoffTest {
  static final long S = TimeUnit.SECONDS.toNanos(1);
  static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void rejectsInvalidParts() {
    assertThatThrownBy(() -> new Backoff(0, 1, 2, Jitter.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("baseNanos");
    assertThatThrownBy(() -> new Backoff(1, 0, 2, Jitter.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxNanos");
    assertThatThrownBy(() -> new Backoff(S, -1, 2, Jitter.FULL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxNanos");
    assertThatThrownBy(() -> new Backoff(1, 1, 1.0, Jitter.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(1, 1, Double.NaN, Jitter.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(1, 1, Double.POSITIVE_INFINITY, Jitter.NONE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(1, 1, 2, null)).isInstanceOf(NullPointerException.class);
    assertThat(new Backoff(1, 1, Math.nextUp(1.0), Jitter.NONE).capNanos(1))
        .isEqualTo(1); // the least multiplier above 1
    assertThatThrownBy(() -> new Backoff(1, 1, 2, Jitter.NONE).capNanos(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("retry < 1: 0");
  }

  @Nested
  class Caps {
    @Test
    void withoutJitterBaseOneSecondCapThreeGivesOneTwoThreeThree() {
      Backoff b = new Backoff(S, 3 * S, 2.0, Jitter.NONE);
      List<Long> waits = new ArrayList<>();
      for (int n = 1; n <= 4; n++) waits.add(b.delayNanos(n, S, new SplittableRandom(1)::nextLong));
      assertThat(waits).containsExactly(S, 2 * S, 3 * S, 3 * S);
    }

    @Test
    void exactCaps() {
      Backoff b = new Backoff(100, 1000, 2, Jitter.NONE);
      assertThat(
              new long[] {
                b.capNanos(1),
                b.capNanos(2),
                b.capNanos(3),
                b.capNanos(4),
                b.capNanos(5),
                b.capNanos(6)
              })
          .containsExactly(100, 200, 400, 800, 1000, 1000);
      assertThat(new Backoff(100, 400, 2, Jitter.NONE).capNanos(3))
          .isEqualTo(400); // exactly at the max
      assertThat(b.delayNanos(3, 0, HIGHEST)).isEqualTo(400);
    }

    @Test
    void hugeRetryNumbersAreJustTheCap() {
      Backoff b = new Backoff(100 * MS, 20 * S, 2.0, Jitter.NONE);
      assertThat(b.capNanos(10_000)).isEqualTo(20 * S);
      assertThat(b.capNanos(Integer.MAX_VALUE)).isEqualTo(20 * S);
      assertThat(new Backoff(1, Long.MAX_VALUE, 1.0000001, Jitter.NONE).capNanos(Integer.MAX_VALUE))
          .isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void maxBelowBaseMakesEveryCapTheMax() {
      Backoff b = new Backoff(5 * S, S, 2.0, Jitter.NONE);
      assertThat(b.capNanos(1)).isEqualTo(S);
      assertThat(b.capNanos(7)).isEqualTo(S);
      assertThat(new Backoff(500, 100, 2, Jitter.NONE).capNanos(1)).isEqualTo(100);
    }
  }

  /**
   * The longest waits, as {@code explain()} states them: each the most {@code delayNanos} can draw
   * with every earlier wait at its most, and their sum with a floor (a server's wait) in any count.
   */
  @Nested
  class Longest {
    @ParameterizedTest
    @EnumSource(Jitter.class)
    void eachIsTheMostThatIsDrawn(Jitter jitter) {
      Backoff b = new Backoff(200 * MS, 10 * S, 2.0, jitter);
      long previous = 200 * MS;
      for (int n = 1; n <= 12; n++) {
        long drawn = b.delayNanos(n, previous, HIGHEST);
        assertThat(b.longestNanos(n)).as("retry %d", n).isEqualTo(drawn);
        previous = drawn;
      }
    }

    @Test
    void decorrelatedGrowsThreeTimesTheLastUpToMax() {
      Backoff b = new Backoff(200 * MS, 10 * S, 2.0, Jitter.DECORRELATED);
      assertThat(
              List.of(b.longestNanos(1), b.longestNanos(2), b.longestNanos(3), b.longestNanos(4)))
          .containsExactly(600 * MS, 1800 * MS, 5400 * MS, 10 * S);
      assertThat(new Backoff(5 * S, S, 2.0, Jitter.DECORRELATED).longestNanos(1)).isEqualTo(S);
      assertThat(b.longestNanos(Integer.MAX_VALUE)).isEqualTo(10 * S);
    }

    @Test
    void theTotalCountsTheFloorWhereItIsLonger() {
      Backoff b = new Backoff(200 * MS, 10 * S, 2.0, Jitter.FULL);
      assertThat(b.longestTotalNanos(3, 0)).isEqualTo(1400 * MS);
      assertThat(b.longestTotalNanos(3, 60 * S)).isEqualTo(180 * S);
      assertThat(b.longestTotalNanos(3, 500 * MS)).isEqualTo(500 * MS + 500 * MS + 800 * MS);
      assertThat(b.longestTotalNanos(0, 60 * S)).isZero();
      assertThat(b.longestTotalNanos(100, 0)).isEqualTo(b.scheduleNanos(100));
      assertThat(b.longestTotalNanos(Integer.MAX_VALUE, 0)).isEqualTo(Long.MAX_VALUE);
    }

    @ParameterizedTest
    @EnumSource(
        value = Jitter.class,
        names = {"NONE", "FULL", "EQUAL"})
    void withoutAFloorItIsTheScheduleOfCaps(Jitter jitter) {
      Backoff b = new Backoff(3 * MS, 7 * S, 1.7, jitter);
      for (int retries = 0; retries <= 70; retries++) {
        assertThat(b.longestTotalNanos(retries, 0)).isEqualTo(b.scheduleNanos(retries));
      }
    }

    /**
     * A multiplier so near 1 that the caps grow for a million retries: the sum past the first 64 is
     * a geometric series, as the waits one by one add up, and any count is quick.
     */
    @Test
    void aSlowGrowthIsSummedInFewSteps() {
      Backoff b = new Backoff(MS, 10 * S, 1.00001, Jitter.FULL);
      int retries = 1_000_000;
      assertThat((double) b.longestTotalNanos(retries, 2 * MS))
          .isCloseTo(
              oneByOne(b, retries, 2 * MS), org.assertj.core.data.Percentage.withPercentage(1e-6));
      long start = System.nanoTime();
      // 921 039 retries to reach 10 s, about 1.8e15 ns, then 10 s each: more than a long holds
      assertThat(b.longestTotalNanos(Integer.MAX_VALUE, 0)).isEqualTo(Long.MAX_VALUE);
      assertThat(b.longestTotalNanos(2_000_000, 0))
          .isCloseTo(
              (long) (oneByOne(b, 2_000_000, 0)),
              org.assertj.core.data.Percentage.withPercentage(1e-6));
      assertThat(System.nanoTime() - start).as("nanos").isLessThan(TimeUnit.SECONDS.toNanos(1));
    }

    private double oneByOne(Backoff b, int retries, long floorNanos) {
      double sum = 0;
      for (int n = 1; n <= retries; n++) sum += Math.max(b.capNanos(n), floorNanos);
      return sum;
    }
  }

  @Nested
  class JitterKinds {
    @Test
    void fullJitterEnds() {
      Backoff b = new Backoff(100, 1000, 2, Jitter.FULL);
      assertThat(b.delayNanos(2, 0, LOWEST)).isEqualTo(0);
      assertThat(b.delayNanos(2, 0, HIGHEST)).isEqualTo(200);
    }

    @Test
    void fullJitterLiesInZeroToCapAndUsesTheWholeRange() {
      Backoff b = new Backoff(100 * MS, 2 * S, 2.0, Jitter.FULL);
      RandomSource random = new SplittableRandom(42)::nextLong;
      for (int n = 1; n <= 12; n++) {
        long cap = b.capNanos(n);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 2_000; i++) {
          long d = b.delayNanos(n, 0, random);
          assertThat(d).isBetween(0L, cap);
          min = Math.min(min, d);
          max = Math.max(max, d);
        }
        assertThat(min).as("retry %d draws near 0", n).isLessThan(cap / 20);
        assertThat(max).as("retry %d draws near the cap", n).isGreaterThan(cap - cap / 20);
      }
    }

    @Test
    void equalJitterEnds() {
      Backoff b = new Backoff(101, 1000, 2, Jitter.EQUAL);
      // cap 101: half 50, so [51, 101]
      assertThat(b.delayNanos(1, 0, LOWEST)).isEqualTo(51);
      assertThat(b.delayNanos(1, 0, HIGHEST)).isEqualTo(101);
    }

    @Test
    void equalJitterLiesInUpperHalf() {
      Backoff b = new Backoff(100 * MS, 2 * S, 2.0, Jitter.EQUAL);
      RandomSource random = new SplittableRandom(7)::nextLong;
      for (int n = 1; n <= 8; n++) {
        long cap = b.capNanos(n);
        for (int i = 0; i < 1_000; i++) {
          assertThat(b.delayNanos(n, 0, random)).isBetween(cap - cap / 2, cap);
        }
      }
    }

    @Test
    void decorrelatedEnds() {
      Backoff b = new Backoff(100, 10_000, 2, Jitter.DECORRELATED);
      assertThat(b.delayNanos(1, 100, LOWEST)).isEqualTo(100);
      assertThat(b.delayNanos(1, 100, HIGHEST)).isEqualTo(300);
      assertThat(b.delayNanos(2, 1000, HIGHEST)).isEqualTo(3000);
      assertThat(b.delayNanos(2, 5000, HIGHEST)).isEqualTo(10_000); // capped
      assertThat(b.delayNanos(2, 10, HIGHEST)).isEqualTo(300); // previous below base: base
      assertThat(b.delayNanos(2, Long.MAX_VALUE, HIGHEST)).isEqualTo(10_000); // saturated
      Backoff low = new Backoff(500, 200, 2, Jitter.DECORRELATED);
      assertThat(low.delayNanos(1, 500, LOWEST)).isEqualTo(200);
    }

    @Test
    void decorrelatedJitterStaysBetweenBaseAndThreeTimesPreviousCappedAtMax() {
      Backoff b = new Backoff(100 * MS, 2 * S, 2.0, Jitter.DECORRELATED);
      RandomSource random = new SplittableRandom(9)::nextLong;
      long previous = 100 * MS;
      for (int n = 1; n <= 200; n++) {
        long d = b.delayNanos(n, previous, random);
        assertThat(d).isBetween(100 * MS, Math.min(2 * S, previous * 3));
        previous = d;
      }
    }

    @ParameterizedTest
    @EnumSource(Jitter.class)
    void neverExceedsMaxNorGoesNegative(Jitter jitter) {
      Backoff b = new Backoff(3 * MS, 50 * MS, 3.5, jitter);
      RandomSource random = new SplittableRandom(jitter.ordinal())::nextLong;
      long previous = 3 * MS;
      for (int n = 1; n <= 500; n++) {
        long d = b.delayNanos(n, previous, random);
        assertThat(d).isBetween(0L, 50 * MS);
        previous = d;
      }
    }

    @Test
    void uniformAndSaturation() {
      assertThat(Backoff.uniform(HIGHEST, 5, 5)).isEqualTo(5);
      assertThat(Backoff.uniform(HIGHEST, 5, 4)).isEqualTo(5);
      assertThat(Backoff.uniform(HIGHEST, 5, 7)).isEqualTo(7);
      assertThat(Backoff.uniform(LOWEST, 5, 7)).isEqualTo(5);
      assertThat(Backoff.uniform(HIGHEST, 0, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE); // -1 >>> 1
      assertThat(Backoff.uniform(LOWEST, 0, Long.MAX_VALUE)).isEqualTo(0);
      assertThat(Backoff.saturatedMultiply(0, 3)).isEqualTo(0);
      assertThat(Backoff.saturatedMultiply(7, 3)).isEqualTo(21);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE / 3, 3))
          .isEqualTo(Long.MAX_VALUE / 3 * 3);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE / 3 + 1, 3)).isEqualTo(Long.MAX_VALUE);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE / 2 + 1, 3)).isEqualTo(Long.MAX_VALUE);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE, 3)).isEqualTo(Long.MAX_VALUE);
    }
  }

  /**
   * For seeded random valid configurations and retry numbers, the cap is {@code min(base × m^(n-1),
   * max)} and never decreases, and every jittered wait lies in its documented range. Each seed is a
   * dynamic test named after it, so a failure names the seed to replay.
   */
  @Nested
  class Properties {
    static final int CASES_PER_SEED = 50;
    static final long DAY_NANOS = Duration.ofHours(24).toNanos();
    static final Map<String, LongAdder> CASES = new ConcurrentSkipListMap<>();

    @AfterAll
    static void printCounts() {
      Diagnostics.println(
          "Backoff properties: cases checked per property "
              + CASES
              + " ("
              + SeededProperties.SEEDS
              + " seeds x "
              + CASES_PER_SEED
              + " cases)");
    }

    static Stream<DynamicTest> forSeeds(String name, Consumer<SplittableRandom> property) {
      return SeededProperties.forSeeds(
          name,
          property,
          () -> CASES.computeIfAbsent(name, k -> new LongAdder()).add(CASES_PER_SEED));
    }

    static int retry(SplittableRandom r) {
      switch (r.nextInt(4)) {
        case 0:
          return 1 + r.nextInt(5);
        case 1:
          return 1 + r.nextInt(64);
        case 2:
          return 1 + r.nextInt(10_000);
        default:
          return Integer.MAX_VALUE - r.nextInt(3);
      }
    }

    /** A {@link Backoff} with the settings it was built from, which it does not show. */
    record Config(
        long baseNanos, long maxNanos, double multiplier, Jitter jitter, Backoff backoff) {
      long capNanos(int retry) {
        return backoff.capNanos(retry);
      }

      long delayNanos(int retry, long previousNanos, RandomSource random) {
        return backoff.delayNanos(retry, previousNanos, random);
      }

      @Override
      public String toString() {
        return backoff.toString();
      }
    }

    static Config backoff(SplittableRandom r) {
      long base = logUniform(r, DAY_NANOS);
      long max = r.nextInt(4) == 0 ? base : logUniform(r, DAY_NANOS);
      Jitter jitter = Jitter.values()[r.nextInt(Jitter.values().length)];
      double m = multiplier(r);
      return new Config(base, max, m, jitter, new Backoff(base, max, m, jitter));
    }

    /** The cap by exact decimal arithmetic, independent of the double formula under test. */
    static BigDecimal expectedCap(Config b, int retry) {
      BigDecimal m = new BigDecimal(b.multiplier());
      BigDecimal max = BigDecimal.valueOf(b.maxNanos());
      // Far past the cap (by more than a factor e) the answer is the max; skip the huge power.
      if ((retry - 1) * Math.log(b.multiplier())
          > Math.log(b.maxNanos()) - Math.log(b.baseNanos()) + 1) {
        return max;
      }
      BigDecimal cap = BigDecimal.valueOf(b.baseNanos()).multiply(pow(m, retry - 1));
      return cap.min(max);
    }

    /** {@code m^e} by squaring at 34 significant digits; BigDecimal.pow stops at 999 999 999. */
    static BigDecimal pow(BigDecimal m, long e) {
      BigDecimal result = BigDecimal.ONE;
      for (BigDecimal square = m;
          e > 0;
          e >>= 1, square = square.multiply(square, MathContext.DECIMAL128)) {
        if ((e & 1) == 1) result = result.multiply(square, MathContext.DECIMAL128);
      }
      return result;
    }

    @TestFactory
    Stream<DynamicTest> capIsMinOfExponentialAndMax() {
      return forSeeds(
          "cap",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Config b = backoff(r);
              int n = retry(r);
              long cap = b.capNanos(n);
              BigDecimal expected = expectedCap(b, n);
              // Floating error: pow() and the product round, so allow a relative 1e-9 plus 1 ns.
              BigDecimal tolerance = expected.multiply(new BigDecimal("1e-9")).add(BigDecimal.ONE);
              assertThat(BigDecimal.valueOf(cap).subtract(expected).abs())
                  .as("%s retry %d: cap %d vs exact %s", b, n, cap, expected)
                  .isLessThanOrEqualTo(tolerance);
              assertThat(cap).isBetween(Math.min(b.baseNanos(), b.maxNanos()), b.maxNanos());
            }
          });
    }

    @TestFactory
    Stream<DynamicTest> capNeverDecreases() {
      return forSeeds(
          "monotone",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Config b = backoff(r);
              int n = Math.min(retry(r), Integer.MAX_VALUE - 1);
              long previous = b.capNanos(n);
              for (int k = 1; k <= 70 && n + k > 0; k++) {
                long next = b.capNanos(n + k);
                assertThat(next)
                    .as("%s cap(%d) after cap(%d)=%d", b, n + k, n + k - 1, previous)
                    .isGreaterThanOrEqualTo(previous);
                previous = next;
              }
            }
          });
    }

    @TestFactory
    Stream<DynamicTest> jitteredWaitsStayInTheirRanges() {
      return forSeeds(
          "jitter",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Config b = backoff(r);
              SplittableRandom rng = r.split();
              long previous = b.baseNanos();
              int first = r.nextBoolean() ? 1 : retry(r);
              for (int n = first; n < first + 20 && n > 0; n++) {
                long cap = b.capNanos(n);
                long d = b.delayNanos(n, previous, rng::nextLong);
                String what =
                    b + " retry " + n + " previous " + previous + " cap " + cap + " got " + d;
                switch (b.jitter()) {
                  case NONE -> assertThat(d).as(what).isEqualTo(cap);
                  case FULL -> assertThat(d).as(what).isBetween(0L, cap);
                  case EQUAL -> {
                    assertThat(2 * d).as(what).isGreaterThanOrEqualTo(cap);
                    assertThat(d).as(what).isLessThanOrEqualTo(cap);
                  }
                  case DECORRELATED ->
                      assertThat(d)
                          .as(what)
                          .isBetween(Math.min(b.baseNanos(), b.maxNanos()), b.maxNanos());
                }
                // Hostile previous too
                previous = r.nextInt(8) == 0 ? r.nextLong(1, Long.MAX_VALUE) : d;
              }
            }
          });
    }
  }
}
