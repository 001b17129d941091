package io.github.okretry.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The arithmetic of a retry budget: a balance that calls whose first attempt succeeds pay into
 * and retries draw from, plus a small reserve refilled with time. Every decision takes the time
 * as an argument, so the same code runs on a real clock inside {@code RetryBudget} and on a
 * simulated one in a fleet simulator. Tokens are kept in thousandths. Thread-safe: the balance is
 * lock-free, the reserve is {@code synchronized}.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class RetryTokenBucket {

  /** Thousandths per token. */
  public static final long MILLI = 1000;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private final long depositMilli;
  private final long capacityMilli;
  private final int reservePerSecond;
  private final long retryCostMilli;
  private final long retryAfterCostMilli;
  private final AtomicLong balanceMilli;
  private final int failureStreakLimit; // 0: no evidence needed
  // Retries after errors counted since the last success (a first attempt, or a retry); a new
  // bucket starts at the limit: it has seen no success yet.
  private final AtomicInteger failureStreak;

  private long reserveMilli; // guarded by this
  private long reserveRefilledAtNanos; // guarded by this
  private boolean reserveStarted; // guarded by this

  /**
   * @param depositMilli paid in by each call whose first attempt succeeds, ≥ 0
   * @param capacityMilli the most the balance holds, ≥ 1000 (one retry)
   * @param initialMilli the balance of a new bucket, in {@code [0, capacityMilli]}
   * @param reservePerSecond the reserve's refill rate and cap, in tokens; 0 for no reserve
   * @param retryCostMilli what a retry after an error without a server-given wait costs, > 0
   * @param retryAfterCostMilli what a retry honouring a 429/503 {@code Retry-After} costs, > 0
   * @param failureStreakLimit a retry after an error is paid only while fewer than this many were
   *     counted since the last success (a first attempt, or a retry), and a new bucket has seen
   *     none: 0 turns the rule off, ≥ 0
   */
  public RetryTokenBucket(
      long depositMilli,
      long capacityMilli,
      long initialMilli,
      int reservePerSecond,
      long retryCostMilli,
      long retryAfterCostMilli,
      int failureStreakLimit) {
    if (depositMilli < 0) throw new IllegalArgumentException("depositMilli < 0: " + depositMilli);
    if (capacityMilli < MILLI) throw new IllegalArgumentException("capacityMilli < 1000: " + capacityMilli);
    if (initialMilli < 0 || initialMilli > capacityMilli) {
      throw new IllegalArgumentException("initialMilli not in [0, " + capacityMilli + "]: " + initialMilli);
    }
    if (reservePerSecond < 0) throw new IllegalArgumentException("reservePerSecond < 0: " + reservePerSecond);
    if (retryCostMilli <= 0) throw new IllegalArgumentException("retryCostMilli <= 0: " + retryCostMilli);
    if (retryAfterCostMilli <= 0) {
      throw new IllegalArgumentException("retryAfterCostMilli <= 0: " + retryAfterCostMilli);
    }
    if (failureStreakLimit < 0) throw new IllegalArgumentException("failureStreakLimit < 0: " + failureStreakLimit);
    this.depositMilli = depositMilli;
    this.capacityMilli = capacityMilli;
    this.reservePerSecond = reservePerSecond;
    this.retryCostMilli = retryCostMilli;
    this.retryAfterCostMilli = retryAfterCostMilli;
    this.balanceMilli = new AtomicLong(initialMilli);
    this.reserveMilli = (long) reservePerSecond * MILLI;
    this.failureStreakLimit = failureStreakLimit;
    this.failureStreak = new AtomicInteger(failureStreakLimit);
  }

  /** A bucket with okretry's defaults ({@link Tuning}) and the given public settings. */
  public static RetryTokenBucket withDefaults(
      double percentCanRetry, int maxTokens, int minRetriesPerSecond, int failureStreakLimit) {
    long capacity = (long) maxTokens * MILLI;
    return new RetryTokenBucket(
        Math.round(percentCanRetry * MILLI),
        capacity,
        Math.round(capacity * Tuning.INITIAL_FILL),
        minRetriesPerSecond,
        Tuning.RETRY_COST_MILLI,
        Tuning.RETRY_AFTER_COST_MILLI,
        failureStreakLimit);
  }

  /** The balance, without the reserve, in thousandths of a token. */
  public long balanceMilli() {
    return balanceMilli.get();
  }

  /** A call's first attempt succeeded: pays in its share, up to the capacity. */
  public void deposit() {
    // Evidence that retries can succeed. Read first: the healthy path writes nothing.
    if (failureStreakLimit != 0 && failureStreak.get() != 0) failureStreak.set(0);
    // Skipping the write when full keeps the healthy path to one volatile read per call.
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + depositMilli))) return;
    }
  }

  /**
   * A retry succeeded: evidence that retrying works, so the failure streak starts again, as after
   * a first-attempt success; nothing is paid in (only first attempts earn tokens).
   */
  public void retrySucceeded() {
    if (failureStreakLimit != 0 && failureStreak.get() != 0) failureStreak.set(0);
  }

  /**
   * Pays for one retry from the balance, or else from the reserve; false if neither holds its
   * cost, and then nothing is taken.
   *
   * @param honoursRetryAfter true for a retry that waits out a 429/503 {@code Retry-After}
   * @param nowNanos the monotonic time, for the reserve's refill
   */
  public boolean tryWithdraw(boolean honoursRetryAfter, long nowNanos) {
    long cost = honoursRetryAfter ? retryAfterCostMilli : retryCostMilli;
    for (long current = balanceMilli.get(); current >= cost; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, current - cost)) return true;
    }
    return tryWithdrawReserve(cost, nowNanos);
  }

  /**
   * Evidence that a retry after an error can work: counts one such retry into the failure streak
   * and answers true while fewer than the limit were counted since the last success ({@link
   * #deposit} or {@link #retrySucceeded}); false once the streak is at the limit, or before any
   * success (a new bucket), and then nothing is counted. Always true when the rule is off. Asked when a retry is
   * decided and, if that found none, again when it is about to be sent ({@code LogicalCall}).
   */
  public boolean tryCountInStreak() {
    if (failureStreakLimit == 0) return true;
    for (int n = failureStreak.get(); ; n = failureStreak.get()) {
      if (n >= failureStreakLimit) return false; // stays at the limit until a success
      if (failureStreak.compareAndSet(n, n + 1)) return true;
    }
  }

  /** What {@link #payForRetry} did. */
  public enum Payment {
    /** Paid for, and counted into the failure streak if it follows an error: send it. */
    PAID,
    /** Could be paid for, but there is no evidence that retrying works: nothing was taken. */
    UNPROVEN,
    /** Neither the balance nor the reserve holds its cost: nothing was taken. */
    REFUSED
  }

  /**
   * Pays for one retry about to be scheduled or sent. A retry honouring a 429/503 {@code
   * Retry-After} needs only its (lower) cost. A retry after an error also needs evidence that
   * retrying works ({@link #tryCountInStreak}); without it nothing is taken ({@link
   * Payment#UNPROVEN}), so a retry that is held and then never sent costs nothing, and the caller
   * asks again before sending it.
   *
   * @param honoursRetryAfter true for a retry that waits out a 429/503 {@code Retry-After}
   * @param nowNanos the monotonic time, for the reserve's refill
   */
  public Payment payForRetry(boolean honoursRetryAfter, long nowNanos) {
    if (honoursRetryAfter) return tryWithdraw(true, nowNanos) ? Payment.PAID : Payment.REFUSED;
    if (!tryCountInStreak()) return canWithdraw(retryCostMilli, nowNanos) ? Payment.UNPROVEN : Payment.REFUSED;
    if (tryWithdraw(false, nowNanos)) return Payment.PAID;
    uncountFromStreak(); // the retry counted above will not be sent
    return Payment.REFUSED;
  }

  private boolean canWithdraw(long cost, long nowNanos) {
    return balanceMilli.get() >= cost || reserveHolds(cost, nowNanos);
  }

  private void uncountFromStreak() {
    if (failureStreakLimit == 0) return;
    // A success in between has set the streak to 0 already: nothing to take back then.
    for (int n = failureStreak.get(); n > 0; n = failureStreak.get()) {
      if (failureStreak.compareAndSet(n, n - 1)) return;
    }
  }

  private synchronized boolean reserveHolds(long cost, long nowNanos) {
    return reservePerSecond != 0 && Math.min(reserveCapMilli(), reserveMilli + refillMilli(nowNanos)) >= cost;
  }

  private synchronized boolean tryWithdrawReserve(long cost, long nowNanos) {
    if (reservePerSecond == 0) return false;
    long refill = refillMilli(nowNanos);
    if (!reserveStarted) {
      reserveStarted = true;
      reserveRefilledAtNanos = nowNanos;
    } else if (refill > 0) {
      reserveMilli = Math.min(reserveCapMilli(), reserveMilli + refill);
      reserveRefilledAtNanos = nowNanos;
    }
    if (reserveMilli < cost) return false;
    reserveMilli -= cost;
    return true;
  }

  private long reserveCapMilli() {
    return (long) reservePerSecond * MILLI;
  }

  /** What the reserve has refilled by since its last refill; 0 until its first use. Guarded by this. */
  private long refillMilli(long nowNanos) {
    if (!reserveStarted) return 0;
    long elapsed = Math.max(0, nowNanos - reserveRefilledAtNanos);
    // reservePerSecond thousandths of a token per millisecond, computed without overflow.
    return elapsed >= NANOS_PER_SECOND ? reserveCapMilli() : elapsed * reservePerSecond / 1_000_000L;
  }
}
