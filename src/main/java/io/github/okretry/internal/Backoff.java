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
    return summed(retries, 0, false);
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

  /**
   * The longest {@link #delayNanos} draws before retry {@code retry} (1-based), every earlier wait
   * at its longest: the cap; with {@link Jitter#DECORRELATED}, which draws up to 3 × the previous
   * wait, {@code min(3^retry × base, max)}. Never decreases as {@code retry} grows.
   */
  public long longestNanos(int retry) {
    if (retry < 1) throw new IllegalArgumentException("retry < 1: " + retry);
    if (jitter != Jitter.DECORRELATED) return capNanos(retry);
    long low = Math.min(baseNanos, maxNanos);
    long wait = baseNanos; // what delayNanos is given before retry 1
    // ×3 from at least 1 ns reaches any max within 40 steps
    for (int n = 1; n <= retry && wait < maxNanos; n++) {
      wait = saturatedMultiply(Math.max(wait, low), 3);
    }
    return Math.min(wait, maxNanos);
  }

  /**
   * The longest the waits before retries 1 to {@code retries} take together, each {@link
   * #longestNanos}, or {@code floorNanos} where that is longer (a wait a server may set in its
   * place, as a {@code Retry-After} up to its ceiling; 0 for none), saturated at {@code
   * Long.MAX_VALUE}, to a double's precision past the first 64 retries (see {@code summed}).
   */
  public long longestTotalNanos(int retries, long floorNanos) {
    return summed(retries, floorNanos, true);
  }

  /**
   * The waits before retries 1 to {@code retries} summed, each {@link #longestNanos} if {@code
   * longest}, else {@link #capNanos}, or {@code floorNanos} where that is longer; saturated. Exact
   * for the first 64 retries and past them for every wait at {@code max}; the waits still growing
   * past them (a multiplier very near 1: only caps grow this slowly, decorrelated jitter is at max
   * within 40 retries) are summed as a geometric series, so any count takes a few dozen steps.
   */
  private long summed(int retries, long floorNanos, boolean longest) {
    long total = 0;
    int n = 1;
    for (; n <= retries && n <= EXACT_RETRIES; n++) {
      long wait = longest ? longestNanos(n) : capNanos(n);
      if (wait == maxNanos) return saturatedAdd(total, atMax(retries - n + 1L, floorNanos));
      total = saturatedAdd(total, Math.max(wait, floorNanos));
    }
    if (n > retries) return total;
    long firstAtMax = firstRetryFrom(n, retries, maxNanos); // retries + 1: none
    long firstAboveFloor = firstRetryFrom(n, firstAtMax - 1, floorNanos);
    total = saturatedAdd(total, saturatedMultiply(floorNanos, firstAboveFloor - n));
    total = saturatedAdd(total, capsSummed(firstAboveFloor, firstAtMax - 1));
    return saturatedAdd(total, atMax(retries - firstAtMax + 1, floorNanos));
  }

  /** Retries summed one by one by {@code summed}. */
  private static final int EXACT_RETRIES = 64;

  private long atMax(long count, long floorNanos) {
    return count <= 0 ? 0 : saturatedMultiply(Math.max(maxNanos, floorNanos), count);
  }

  /**
   * The first retry in {@code [from, to]} whose cap is at least {@code nanos}; {@code to + 1} if
   * none.
   */
  private long firstRetryFrom(long from, long to, long nanos) {
    long lo = from;
    long hi = to + 1; // capNanos never decreases (Math.pow is semi-monotonic)
    while (lo < hi) {
      long mid = lo + (hi - lo) / 2; // at most Integer.MAX_VALUE: a retry
      if (capNanos((int) mid) >= nanos) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The caps of retries {@code from} to {@code to} summed as a geometric series, saturated. */
  private long capsSummed(long from, long to) {
    if (to < from) return 0;
    double growth = multiplier - 1; // exact near 1, where expm1 and log1p keep the precision
    double first = baseNanos * Math.pow(multiplier, from - 1); // capNanos(from), unrounded
    double sum = first * (Math.expm1((to - from + 1.0) * Math.log1p(growth)) / growth);
    return sum >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) sum;
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
