package io.github.okretry.internal;

/**
 * Exponential backoff with jitter, as pure arithmetic on nanoseconds.
 *
 * <p>The cap before retry {@code n} (1-based) is {@code min(base × multiplier^(n-1), max)}; the
 * jitter then draws the actual wait from a range derived from that cap ({@link Jitter}: a twin of
 * the public {@code Jitter}, which describes each kind, so internal names nothing of the API). The
 * order is backoff, then jitter, then cap, so no jitter can ever exceed {@code max}. No input
 * overflows: retry 10 000 simply waits the cap.
 */
public final class Backoff {

  /** How a wait is drawn from its cap: the public {@code Jitter}'s kinds, by the same names. */
  public enum Jitter {
    NONE,
    FULL,
    EQUAL,
    DECORRELATED
  }

  private final long baseNanos;
  private final long maxNanos;
  private final double multiplier;
  private final Jitter jitter;

  /**
   * @param baseNanos wait before retry 1 (its cap when jittered), positive
   * @param maxNanos cap on any single wait, positive; may be below {@code baseNanos}, in which case
   *     every cap is {@code maxNanos}
   * @param multiplier growth per retry, finite and greater than 1
   * @param jitter how the wait is drawn from the cap
   */
  public Backoff(long baseNanos, long maxNanos, double multiplier, Jitter jitter) {
    if (baseNanos <= 0) throw new IllegalArgumentException("baseNanos <= 0: " + baseNanos);
    if (maxNanos <= 0) throw new IllegalArgumentException("maxNanos <= 0: " + maxNanos);
    if (!(multiplier > 1.0) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException("multiplier must be finite and > 1: " + multiplier);
    }
    if (jitter == null) throw new NullPointerException("jitter == null");
    this.baseNanos = baseNanos;
    this.maxNanos = maxNanos;
    this.multiplier = multiplier;
    this.jitter = jitter;
  }

  /** {@code min(base × multiplier^(retry-1), max)} for {@code retry >= 1}, without overflow. */
  public long capNanos(int retry) {
    if (retry < 1) throw new IllegalArgumentException("retry < 1: " + retry);
    // A double holds base × 2^k exactly, so without jitter 1 s, 2 s, 4 s come out exact. Past
    // the cap, pow() may reach Infinity, which the comparison turns into the cap.
    double cap = baseNanos * Math.pow(multiplier, retry - 1);
    return cap >= maxNanos ? maxNanos : (long) cap;
  }

  /**
   * The longest a call's {@code retries} waits take together, without a server's wait: its caps
   * summed (1.4 s for the defaults' 3 retries), saturated at {@code Long.MAX_VALUE}.
   */
  public long scheduleNanos(int retries) {
    long sum = 0;
    for (int retry = 1; retry <= retries; retry++) {
      long cap = capNanos(retry);
      if (cap == maxNanos) { // every later cap is the max too
        return saturatedAdd(sum, saturatedMultiply(cap, (long) retries - retry + 1));
      }
      sum = saturatedAdd(sum, cap);
    }
    return sum;
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }

  /**
   * The wait before retry {@code retry}.
   *
   * @param previousNanos the wait chosen before the previous retry, or {@code baseNanos} before the
   *     first; only {@link Jitter#DECORRELATED} reads it
   */
  public long delayNanos(int retry, long previousNanos, RandomSource random) {
    long cap = capNanos(retry);
    switch (jitter) {
      case NONE:
        return cap;
      case FULL:
        return uniform(random, 0, cap);
      case EQUAL:
        long half = cap / 2;
        return (cap - half) + uniform(random, 0, half);
      case DECORRELATED:
        long low = Math.min(baseNanos, maxNanos);
        long high = saturatedMultiply(Math.max(previousNanos, low), 3);
        return Math.min(maxNanos, uniform(random, low, high));
      default:
        throw new AssertionError(jitter);
    }
  }

  /** Uniform in {@code [low, high]}, both ends included. */
  public static long uniform(RandomSource random, long low, long high) {
    if (high <= low) return low;
    long span = high - low;
    return span == Long.MAX_VALUE
        ? low + (random.nextLong() >>> 1)
        : low + random.nextLong(span + 1);
  }

  static long saturatedMultiply(long a, long b) {
    long r = a * b;
    return (a != 0 && r / a != b) || r < 0 ? Long.MAX_VALUE : r;
  }

  @Override
  public String toString() {
    return "Backoff{baseNanos="
        + baseNanos
        + ", maxNanos="
        + maxNanos
        + ", multiplier="
        + multiplier
        + ", jitter="
        + jitter
        + "}";
  }
}
