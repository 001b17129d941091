package io.github.okretry.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The one source of randomness behind jitter and the {@code Retry-After} spread: {@link
 * #THREAD_LOCAL} in production, a seeded or scripted source in tests. Shaped like Java 17's {@code
 * RandomGenerator}, which Android API 21 lacks, so a test can pass {@code new
 * SplittableRandom(seed)::nextLong}.
 */
public interface RandomSource {

  /** {@link ThreadLocalRandom}: no contention between the calls of a shared policy. */
  RandomSource THREAD_LOCAL =
      new RandomSource() {
        @Override
        public long nextLong() {
          return ThreadLocalRandom.current().nextLong();
        }

        @Override
        public long nextLong(long bound) {
          return ThreadLocalRandom.current().nextLong(bound);
        }

        @Override
        public String toString() {
          return "RandomSource.THREAD_LOCAL";
        }
      };

  /** A uniformly distributed {@code long}. */
  long nextLong();

  /**
   * Uniform in {@code [0, bound)} for {@code bound > 0}; the same algorithm as {@code
   * RandomGenerator.nextLong(long)}, so a seeded source gives the same draws on every JDK.
   */
  default long nextLong(long bound) {
    long m = bound - 1;
    long r = nextLong();
    if ((bound & m) == 0L) return r & m; // a power of two
    // Reject the over-represented top of the range: u + m - r overflows exactly there.
    for (long u = r >>> 1; u + m - (r = u % bound) < 0L; u = nextLong() >>> 1) {}
    return r;
  }
}
