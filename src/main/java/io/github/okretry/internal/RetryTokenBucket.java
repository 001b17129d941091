package io.github.okretry.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The arithmetic of a retry budget: a balance that calls whose first attempt succeeds pay into
 * and retries draw from, plus a small reserve refilled with time, and a count of the retries paid
 * since the last success, which stops at one failing call's worth. Every decision takes the time
 * as an argument, so the same code runs on a real clock inside {@code RetryBudget} and on a
 * simulated one in a fleet simulator. Tokens are kept in thousandths. Thread-safe: the balance
 * and the count are lock-free, the reserve is {@code synchronized}.
 */
public final class RetryTokenBucket {

  /** Thousandths per token. */
  public static final long MILLI = 1000;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private final long depositMilli;
  private final long capacityMilli;
  private final int reservePerSecond;
  private final long reserveCapMilli; // one second's refill
  private final long retryCostMilli;
  private final long timeoutCostMilli;
  private final long retryAfterCostMilli;
  private final AtomicLong balanceMilli;
  private final boolean retryBeforeFirstSuccess;
  // Retries paid since the last success (any call's), in halves: 2 for a retry after an error, 1
  // for one that waits out a Retry-After. A success sets it to 0.
  private final AtomicLong sinceSuccessHalves = new AtomicLong();
  private volatile boolean succeeded; // read only when retryBeforeFirstSuccess is false

  private long reserveMilli; // guarded by this
  private long reserveRefilledAtNanos; // guarded by this
  private boolean reserveStarted; // guarded by this

  /**
   * @param depositMilli paid in by each call whose first attempt succeeds, ≥ 0
   * @param capacityMilli the most the balance holds, ≥ 1000 (one retry)
   * @param initialMilli the balance of a new bucket, in {@code [0, capacityMilli]}
   * @param reservePerSecond the reserve's refill rate and cap, in tokens; 0 for no reserve
   * @param retryCostMilli what a retry after an error without a server-given wait costs, > 0
   * @param timeoutCostMilli what a retry after a timeout costs, > 0
   * @param retryAfterCostMilli what a retry honouring a 429/503 {@code Retry-After} costs, > 0
   * @param retryBeforeFirstSuccess false: no retry after an error is paid before the bucket's
   *     first success (the strict rule for fleets of one-shot processes)
   */
  public RetryTokenBucket(long depositMilli, long capacityMilli, long initialMilli, int reservePerSecond,
      long retryCostMilli, long timeoutCostMilli, long retryAfterCostMilli, boolean retryBeforeFirstSuccess) {
    if (depositMilli < 0) throw new IllegalArgumentException("depositMilli < 0: " + depositMilli);
    if (capacityMilli < MILLI) throw new IllegalArgumentException("capacityMilli < 1000: " + capacityMilli);
    if (initialMilli < 0 || initialMilli > capacityMilli) {
      throw new IllegalArgumentException("initialMilli not in [0, " + capacityMilli + "]: " + initialMilli);
    }
    if (reservePerSecond < 0) throw new IllegalArgumentException("reservePerSecond < 0: " + reservePerSecond);
    if (retryCostMilli <= 0) throw new IllegalArgumentException("retryCostMilli <= 0: " + retryCostMilli);
    if (timeoutCostMilli <= 0) throw new IllegalArgumentException("timeoutCostMilli <= 0: " + timeoutCostMilli);
    if (retryAfterCostMilli <= 0) {
      throw new IllegalArgumentException("retryAfterCostMilli <= 0: " + retryAfterCostMilli);
    }
    this.depositMilli = depositMilli;
    this.capacityMilli = capacityMilli;
    this.reservePerSecond = reservePerSecond;
    this.retryCostMilli = retryCostMilli;
    this.timeoutCostMilli = timeoutCostMilli;
    this.retryAfterCostMilli = retryAfterCostMilli;
    this.balanceMilli = new AtomicLong(initialMilli);
    this.reserveCapMilli = (long) reservePerSecond * MILLI;
    this.reserveMilli = reserveCapMilli;
    this.retryBeforeFirstSuccess = retryBeforeFirstSuccess;
  }

  /** A bucket with okretry's defaults ({@link Tuning}) and the given public settings. */
  public static RetryTokenBucket withDefaults(
      double percentCanRetry, int maxTokens, int minRetriesPerSecond, boolean retryBeforeFirstSuccess) {
    long capacity = (long) maxTokens * MILLI;
    long initial = Math.round(capacity * Tuning.INITIAL_FILL);
    return new RetryTokenBucket(Math.round(percentCanRetry * MILLI), capacity, initial, minRetriesPerSecond,
        Tuning.RETRY_COST_MILLI, Tuning.TIMEOUT_COST_MILLI, Tuning.RETRY_AFTER_COST_MILLI, retryBeforeFirstSuccess);
  }

  /** The balance, without the reserve, in thousandths of a token. */
  public long balanceMilli() {
    return balanceMilli.get();
  }

  /** A call's first attempt succeeded: evidence that the server works, and its share paid in, up to the capacity. */
  public void deposit() {
    succeeded();
    // Skipping the write when full keeps the healthy path to one volatile read per call.
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + depositMilli))) return;
    }
  }

  /**
   * A call succeeded on a retry: evidence that the server works, so retries after errors may go
   * again, as after a first-attempt success; nothing is paid in (only first attempts earn tokens).
   */
  public void succeeded() {
    // Read first: the healthy path writes nothing.
    if (sinceSuccessHalves.get() != 0) sinceSuccessHalves.set(0);
    if (!retryBeforeFirstSuccess && !succeeded) succeeded = true;
  }

  /** What a retry follows, which sets its price. */
  public enum Kind {
    /** An error: a failed connection, a retryable status without a server-given wait. */
    ERROR,
    /** A timeout: the server may still be working on the request, and may be overloaded. */
    TIMEOUT,
    /** A 503 with a {@code Retry-After} the retry waits out: the server is unavailable, and said when. */
    RETRY_AFTER,
    /**
     * A 429 with a {@code Retry-After}, or a refusal whose published quota is spent, waited out
     * to its reset: the server is working and paces this client; the pacers space such retries.
     */
    THROTTLED
  }

  /** What {@link #payForRetry} did. */
  public enum Payment {
    /** Paid for: send it. */
    PAID,
    /**
     * Not paid: the retries paid since the last success already add up to one call's {@code
     * maxRetries} (or, under the strict rule, nothing has succeeded yet). Nothing was taken.
     */
    NO_RECENT_SUCCESS,
    /** Not paid: neither the balance nor the reserve holds its cost. Nothing was taken. */
    NO_TOKENS
  }

  /**
   * Pays for one retry about to be scheduled, by {@code RetryBudget}'s rules: counted since the
   * last success ({@link #deposit} or {@link #succeeded}) as {@link #halves} says, up to one
   * failing call's worth, and its cost taken from the balance, or else from the reserve. Take back
   * with {@link #refund} a retry that is not sent.
   *
   * @param kind what the retry follows
   * @param maxRetries the asking call's {@code maxRetries}: how many retries one failing call may make
   * @param nowNanos the monotonic time, for the reserve's refill
   */
  // halves > 0 only guards the loop, which ends by break or return.
  @SuppressWarnings("LoopConditionChecker")
  public Payment payForRetry(Kind kind, int maxRetries, long nowNanos) {
    if (!retryBeforeFirstSuccess && !serverSaidWhen(kind) && !succeeded) return Payment.NO_RECENT_SUCCESS;
    long halves = halves(kind);
    long limit = 2L * maxRetries;
    for (long n = sinceSuccessHalves.get(); halves > 0; n = sinceSuccessHalves.get()) {
      if (n + halves > limit) return Payment.NO_RECENT_SUCCESS; // stays there until a success
      if (sinceSuccessHalves.compareAndSet(n, n + halves)) break;
    }
    if (withdraw(cost(kind), nowNanos)) return Payment.PAID;
    uncount(halves);
    return Payment.NO_TOKENS;
  }

  private long cost(Kind kind) {
    return serverSaidWhen(kind) ? retryAfterCostMilli : kind == Kind.TIMEOUT ? timeoutCostMilli : retryCostMilli;
  }

  private static boolean serverSaidWhen(Kind kind) {
    return kind == Kind.RETRY_AFTER || kind == Kind.THROTTLED;
  }

  /**
   * What a retry of {@code kind} counts since the last success, in halves. A throttled client's
   * retries count nothing: the server works, and its pacing bounds them (a burst against a rate
   * limiter meets its refusals after its successes, and would otherwise lose all but a few).
   */
  private static long halves(Kind kind) {
    return kind == Kind.THROTTLED ? 0 : kind == Kind.RETRY_AFTER ? 1 : 2;
  }

  /** A retry {@link #payForRetry} paid for is not sent after all: its cost and its count are given back. */
  public void refund(Kind kind) {
    long cost = cost(kind);
    // Back to the balance even if the reserve paid: a small gift, never past the capacity.
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + cost))) break;
    }
    uncount(halves(kind));
  }

  private void uncount(long halves) {
    // A success in between has set the count to 0 already: never below it.
    for (long n = sinceSuccessHalves.get(); n > 0; n = sinceSuccessHalves.get()) {
      if (sinceSuccessHalves.compareAndSet(n, Math.max(0, n - halves))) return;
    }
  }

  /**
   * Takes one retry's cost from the balance, or else from the reserve, without the count since
   * the last success (a hedge's price); false if neither holds it, and then nothing is taken.
   *
   * @param honoursRetryAfter true for the cost of a retry that waits out a 429/503 {@code Retry-After}
   * @param nowNanos the monotonic time, for the reserve's refill
   */
  public boolean tryWithdraw(boolean honoursRetryAfter, long nowNanos) {
    return withdraw(honoursRetryAfter ? retryAfterCostMilli : retryCostMilli, nowNanos);
  }

  private boolean withdraw(long cost, long nowNanos) {
    for (long current = balanceMilli.get(); current >= cost; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, current - cost)) return true;
    }
    return tryWithdrawReserve(cost, nowNanos);
  }

  private synchronized boolean tryWithdrawReserve(long cost, long nowNanos) {
    if (reservePerSecond == 0) return false;
    // It refills from its first use, reservePerSecond thousandths of a token per millisecond
    // (computed without overflow); its clock moves on only when something was added.
    long elapsed = reserveStarted ? Math.max(0, nowNanos - reserveRefilledAtNanos) : 0;
    long refill = elapsed >= NANOS_PER_SECOND ? reserveCapMilli : elapsed * reservePerSecond / 1_000_000L;
    if (!reserveStarted || refill > 0) {
      reserveStarted = true;
      reserveRefilledAtNanos = nowNanos;
      reserveMilli = Math.min(reserveCapMilli, reserveMilli + refill);
    }
    if (reserveMilli < cost) return false;
    reserveMilli -= cost;
    return true;
  }
}
