package io.github.okretry;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds the extra load retries put on a server, across every call that shares this budget.
 *
 * <p>Backoff per call does little for an overloaded service when many calls share one client:
 * every call still retries, so a struggling server sees up to {@code maxRetries + 1} times its
 * normal load. A budget is a token bucket: each call whose <em>first</em> attempt succeeds
 * deposits {@link Builder#percentCanRetry} of a token, each retry withdraws one, and when the
 * bucket is empty a failure is returned without retrying ({@link GiveUpReason#BUDGET_EXHAUSTED}).
 * A small time-based reserve ({@link Builder#minRetriesPerSecond}) lets a quiet client, which
 * makes too few calls to earn tokens, still retry now and then. In the spirit of Finagle's
 * {@code RetryBudget} and gRPC's retry throttling, whose defaults these follow.
 *
 * <p>So once failures persist, retries stay within about {@code percentCanRetry} of the calls
 * (plus the reserve), while occasional failures among mostly successful calls are all retried.
 *
 * <p>Every {@link RetryInterceptor} gets its own budget with the defaults unless given one; pass
 * the same instance to several interceptors to share it, or {@link #unlimited()} to turn
 * budgeting off. Thread-safe.
 */
public final class RetryBudget {

  private static final long MILLI = 1000; // tokens are kept in thousandths
  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final RetryBudget UNLIMITED = new RetryBudget(null);

  private final boolean unlimited;
  private final double percentCanRetry;
  private final int minRetriesPerSecond;
  private final int maxTokens;
  private final long depositMilli;
  private final long capacityMilli;

  private final AtomicLong balanceMilli;
  private long reserveMilli; // guarded by this
  private long reserveRefilledAtNanos; // guarded by this
  private boolean reserveStarted; // guarded by this

  private RetryBudget(Builder b) {
    this.unlimited = b == null;
    this.percentCanRetry = b == null ? Double.POSITIVE_INFINITY : b.percentCanRetry;
    this.minRetriesPerSecond = b == null ? 0 : b.minRetriesPerSecond;
    this.maxTokens = b == null ? 0 : b.maxTokens;
    this.depositMilli = b == null ? 0 : Math.round(b.percentCanRetry * MILLI);
    this.capacityMilli = (long) maxTokens * MILLI;
    this.balanceMilli = new AtomicLong(0);
    this.reserveMilli = (long) minRetriesPerSecond * MILLI;
  }

  /**
   * A budget with the defaults: 20% of calls may retry, a reserve of 10 retries per second.
   *
   * @return a budget with the defaults: 20% of calls may retry, a reserve of 10 retries per second
   */
  public static RetryBudget create() {
    return builder().build();
  }

  /**
   * No budget: every retry the policy allows happens.
   *
   * @return no budget: every retry the policy allows happens
   */
  public static RetryBudget unlimited() {
    return UNLIMITED;
  }

  /**
   * A builder with the defaults listed on its methods.
   *
   * @return a builder with the defaults listed on its methods
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * True for {@link #unlimited()}.
   *
   * @return true for {@link #unlimited()}
   */
  public boolean isUnlimited() {
    return unlimited;
  }

  /**
   * Retries currently available from deposits, ignoring the reserve; for metrics.
   *
   * @return retries currently available from deposits, ignoring the reserve; for metrics
   */
  public double availableTokens() {
    return unlimited ? Double.POSITIVE_INFINITY : balanceMilli.get() / (double) MILLI;
  }

  /** A successful first attempt earns a fraction of a retry. */
  void deposit() {
    if (unlimited) return;
    // Skipping the write when full keeps the healthy path to one volatile read per call.
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + depositMilli))) return;
    }
  }

  /** Takes one retry from the deposits or else the reserve; false if neither has one. */
  boolean tryWithdraw(long nowNanos) {
    if (unlimited) return true;
    for (long current = balanceMilli.get(); current >= MILLI; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, current - MILLI)) return true;
    }
    return tryWithdrawReserve(nowNanos);
  }

  private synchronized boolean tryWithdrawReserve(long nowNanos) {
    if (minRetriesPerSecond == 0) return false;
    long cap = (long) minRetriesPerSecond * MILLI;
    if (!reserveStarted) {
      reserveStarted = true;
      reserveRefilledAtNanos = nowNanos;
    } else {
      long elapsed = Math.max(0, nowNanos - reserveRefilledAtNanos);
      // minRetriesPerSecond thousandths of a token per millisecond, computed without overflow.
      long refill = elapsed >= NANOS_PER_SECOND ? cap : elapsed * minRetriesPerSecond / 1_000_000L;
      if (refill > 0) {
        reserveMilli = Math.min(cap, reserveMilli + refill);
        reserveRefilledAtNanos = nowNanos;
      }
    }
    if (reserveMilli < MILLI) return false;
    reserveMilli -= MILLI;
    return true;
  }

  @Override
  public String toString() {
    return unlimited
        ? "RetryBudget.unlimited()"
        : "RetryBudget{percentCanRetry=" + percentCanRetry + ", minRetriesPerSecond="
            + minRetriesPerSecond + ", maxTokens=" + maxTokens + "}";
  }

  /** Builds a {@link RetryBudget}. Not thread-safe; {@link #build()} makes a fresh bucket. */
  public static final class Builder {
    private double percentCanRetry = 0.2;
    private int minRetriesPerSecond = 10;
    private int maxTokens = 100;

    private Builder() {}

    /**
     * The fraction of a retry each call with a successful first attempt deposits. Default 0.2:
     * once failures persist, retries stay within about 20% of calls.
     *
     * @param percentCanRetry tokens deposited per successful first attempt, in [0, 1]
     * @return this builder
     * @throws IllegalArgumentException unless {@code 0 <= percentCanRetry <= 1}
     */
    public Builder percentCanRetry(double percentCanRetry) {
      if (!(percentCanRetry >= 0 && percentCanRetry <= 1)) {
        throw new IllegalArgumentException("percentCanRetry must be in [0, 1]: " + percentCanRetry);
      }
      this.percentCanRetry = percentCanRetry;
      return this;
    }

    /**
     * Retries allowed per second regardless of deposits, so a client that calls rarely can still
     * retry. Default 10; 0 disables the reserve.
     *
     * @param minRetriesPerSecond the reserve refill rate, in [0, 1 000 000]
     * @return this builder
     * @throws IllegalArgumentException if negative or over 1 000 000
     */
    public Builder minRetriesPerSecond(int minRetriesPerSecond) {
      if (minRetriesPerSecond < 0 || minRetriesPerSecond > 1_000_000) {
        throw new IllegalArgumentException("minRetriesPerSecond not in [0, 1000000]: " + minRetriesPerSecond);
      }
      this.minRetriesPerSecond = minRetriesPerSecond;
      return this;
    }

    /**
     * The most retries deposits can save up, which bounds the burst of retries at the start of an
     * outage. Default 100.
     *
     * @param maxTokens the largest saved balance, in [1, 1 000 000]
     * @return this builder
     * @throws IllegalArgumentException if not in {@code [1, 1 000 000]}
     */
    public Builder maxTokens(int maxTokens) {
      if (maxTokens < 1 || maxTokens > 1_000_000) {
        throw new IllegalArgumentException("maxTokens not in [1, 1000000]: " + maxTokens);
      }
      this.maxTokens = maxTokens;
      return this;
    }

    /**
     * A new, empty budget with this configuration.
     *
     * @return a new, empty budget with this configuration
     */
    public RetryBudget build() {
      return new RetryBudget(this);
    }
  }
}
