package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.Backoff;
import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Property tests of the builder's validation: every invalid configuration is rejected with an IAE.
 * (The properties of {@link Backoff} itself are in {@code internal/BackoffTest.Properties}.)
 *
 * <p>Plain JUnit: each seed is a dynamic test named after it, so a failure names the seed to
 * replay ({@code caseFor(seed)} regenerates the exact case).
 */
class ReliabilityBackoffPropertiesTest {

  /** Lowered by the pit profile, where every surviving mutant reruns the whole property. */
  static final int SEEDS = SeededProperties.SEEDS;
  static final int CASES_PER_SEED = 50;
  static final long DAY_NANOS = Duration.ofHours(24).toNanos();

  /** Log-uniform in [1, max], so nanoseconds, milliseconds and hours are all drawn. */
  static long logUniform(SplittableRandom r, long max) {
    double x = Math.exp(r.nextDouble() * Math.log(max));
    return Math.max(1, Math.min(max, (long) x));
  }

  static double multiplier(SplittableRandom r) {
    switch (r.nextInt(5)) {
      case 0:
        return Math.nextUp(1.0); // the smallest valid growth
      case 1:
        return 2.0;
      case 2:
        return 1 + r.nextDouble() * 0.5;
      case 3:
        return 1 + r.nextDouble() * 10;
      default:
        return Math.exp(r.nextDouble() * Math.log(1e12)); // huge: overflows pow() quickly
    }
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

  static Backoff backoff(SplittableRandom r) {
    long base = logUniform(r, DAY_NANOS);
    long max = r.nextInt(4) == 0 ? base : logUniform(r, DAY_NANOS);
    Jitter jitter = Jitter.values()[r.nextInt(Jitter.values().length)];
    return new Backoff(base, max, multiplier(r), jitter);
  }

  /** The cap by exact decimal arithmetic, independent of the double formula under test. */
  static BigDecimal expectedCap(Backoff b, int retry) {
    BigDecimal m = new BigDecimal(b.multiplier());
    BigDecimal max = BigDecimal.valueOf(b.maxNanos());
    // Far past the cap (by more than a factor e) the answer is the max; skip the huge power.
    if ((retry - 1) * Math.log(b.multiplier()) > Math.log(b.maxNanos()) - Math.log(b.baseNanos()) + 1) {
      return max;
    }
    BigDecimal cap = BigDecimal.valueOf(b.baseNanos()).multiply(pow(m, retry - 1));
    return cap.min(max);
  }

  static final java.util.Map<String, java.util.concurrent.atomic.LongAdder> CASES =
      new java.util.concurrent.ConcurrentSkipListMap<>();

  @org.junit.jupiter.api.AfterAll
  static void printCounts() {
    Diagnostics.println("Backoff properties: cases checked per property " + CASES
        + " (" + SEEDS + " seeds x " + CASES_PER_SEED + " cases)");
  }

  /** {@code m^e} by squaring at 34 significant digits; BigDecimal.pow stops at 999 999 999. */
  static BigDecimal pow(BigDecimal m, long e) {
    BigDecimal result = BigDecimal.ONE;
    for (BigDecimal square = m; e > 0; e >>= 1, square = square.multiply(square, MathContext.DECIMAL128)) {
      if ((e & 1) == 1) result = result.multiply(square, MathContext.DECIMAL128);
    }
    return result;
  }

  static Stream<DynamicTest> forSeeds(String name, Consumer<SplittableRandom> property) {
    return SeededProperties.forSeeds(name, property, () -> CASES.computeIfAbsent(name, k -> new java.util.concurrent.atomic.LongAdder()).add(CASES_PER_SEED));
  }

  /** Out-of-range values, drawn at random; each must be rejected at once with an IAE. */
  @TestFactory
  Stream<DynamicTest> invalidConfigurationsAreRejected() {
    return forSeeds(
        "invalid",
        r -> {
          for (int i = 0; i < CASES_PER_SEED; i++) {
            RetryInterceptor.Builder b = RetryInterceptor.builder();
            Duration badDuration = badDuration(r);
            double badMultiplier = badMultiplier(r);
            double badSpread = badSpread(r);
            int badRetries = -1 - r.nextInt(Integer.MAX_VALUE);
            int badStatus = r.nextBoolean() ? r.nextInt(Integer.MIN_VALUE, 100) : r.nextInt(1000, Integer.MAX_VALUE);
            switch (r.nextInt(8)) {
              case 0 -> assertRejected(() -> b.baseDelay(badDuration), "baseDelay", badDuration);
              case 1 -> assertRejected(() -> b.maxDelay(badDuration), "maxDelay", badDuration);
              case 2 -> assertRejected(() -> b.deadline(badDuration), "deadline", badDuration);
              case 3 -> assertRejected(() -> b.maxRetryAfter(badDuration), "maxRetryAfter", badDuration);
              case 4 -> assertRejected(() -> b.multiplier(badMultiplier), "multiplier", badMultiplier);
              case 5 -> assertRejected(() -> b.retryAfterSpread(badSpread), "retryAfterSpread", badSpread);
              case 6 -> assertRejected(() -> b.maxRetries(badRetries), "maxRetries", badRetries);
              default -> assertRejected(() -> b.retryOnStatus(200, badStatus), "retryOnStatus", badStatus);
            }
            // The builder is still usable and its earlier state intact: a rejected value changed nothing.
            RetryInterceptor built = b.build();
            assertThat(built.maxRetries()).isEqualTo(3);
            assertThat(built.baseDelay()).isEqualTo(Duration.ofMillis(200));
            assertThat(built.retryStatuses()).containsExactly(429, 503);
          }
        });
  }

  /** The mirror image: every value inside the ranges is accepted and reaches the interceptor. */
  @TestFactory
  Stream<DynamicTest> validConfigurationsAreAccepted() {
    return forSeeds(
        "valid",
        r -> {
          for (int i = 0; i < CASES_PER_SEED; i++) {
            Duration base = Duration.ofNanos(logUniform(r, DAY_NANOS));
            Duration max = Duration.ofNanos(logUniform(r, DAY_NANOS));
            double m = multiplier(r);
            double spread = r.nextInt(3) == 0 ? (r.nextBoolean() ? 0.0 : 1.0) : r.nextDouble();
            RetryInterceptor built =
                RetryInterceptor.builder()
                    .baseDelay(base)
                    .maxDelay(max)
                    .multiplier(m)
                    .retryAfterSpread(spread)
                    .maxRetries(r.nextInt(0, Integer.MAX_VALUE))
                    .deadline(Duration.ofNanos(logUniform(r, DAY_NANOS)))
                    .maxRetryAfter(Duration.ofNanos(logUniform(r, DAY_NANOS)))
                    .retryOnStatus(r.nextInt(100, 1000))
                    .build();
            assertThat(built.baseDelay()).isEqualTo(base);
            assertThat(built.maxDelay()).isEqualTo(max);
            assertThat(built.multiplier()).isEqualTo(m);
          }
        });
  }

  static Duration badDuration(SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> Duration.ZERO;
      case 1 -> Duration.ofNanos(-1 - r.nextLong(Long.MAX_VALUE));
      case 2 -> Duration.ofHours(24).plusNanos(1 + r.nextLong(Long.MAX_VALUE / 2));
      default -> Duration.ofSeconds(Long.MAX_VALUE - r.nextInt(1000));
    };
  }

  static double badMultiplier(SplittableRandom r) {
    return switch (r.nextInt(6)) {
      case 0 -> Double.NaN;
      case 1 -> Double.POSITIVE_INFINITY;
      case 2 -> Double.NEGATIVE_INFINITY;
      case 3 -> 1.0;
      case 4 -> -r.nextDouble() * 1e300;
      default -> r.nextDouble(); // [0, 1)
    };
  }

  static double badSpread(SplittableRandom r) {
    return switch (r.nextInt(5)) {
      case 0 -> Double.NaN;
      case 1 -> Double.POSITIVE_INFINITY;
      case 2 -> Math.nextUp(1.0) + r.nextDouble() * 10;
      case 3 -> Math.nextDown(0.0) - r.nextDouble();
      default -> Double.NEGATIVE_INFINITY;
    };
  }

  static void assertRejected(Runnable setter, String field, Object value) {
    assertThatThrownBy(setter::run)
        .as("%s(%s)", field, value)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(field);
  }
}
