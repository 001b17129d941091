package io.github.okretry;

import io.github.okretry.internal.RetryTokenBucket;
import io.github.okretry.internal.RetryTokenBucket.Payment;
import io.github.okretry.internal.Tuning;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the extra load retries put on a server, across every call that shares this budget.
 *
 * <p>Backoff per call does little for an overloaded service when many calls share one client:
 * every call still retries, so a struggling server sees up to {@code maxRetries + 1} times its
 * normal load. A budget is a token bucket: each call whose <em>first</em> attempt succeeds
 * deposits {@link Builder#percentCanRetry} of a token, each retry withdraws its cost, and when the
 * bucket cannot pay a failure is returned without retrying ({@link GiveUpReason#BUDGET_EXHAUSTED}).
 * A retry after an error costs one token; a retry that waits out a 429 or 503 {@code Retry-After}
 * costs half a token, because the server said when it can take the request. A new budget starts
 * full ({@link Builder#maxTokens}, default 100), so a fresh client can ride out a burst of
 * rate-limited calls or a flaky start. A small time-based reserve ({@link
 * Builder#minRetriesPerSecond}) lets a quiet client, which makes too few calls to earn tokens,
 * still retry now and then. In the spirit of Finagle's {@code RetryBudget} and gRPC's retry
 * throttling, whose defaults these follow.
 *
 * <p>Tokens cannot protect a service from a <em>fleet</em>: 200 processes each calling once every
 * 2 s never run short of their own tokens, and against a dead server would send 4 requests per
 * call. So a retry after an error also needs <em>evidence that retrying works</em> ({@link
 * Builder#failureStreak}, default 20): a call of this budget that succeeded at once, or a retry
 * that succeeded, and fewer than 20 retries after errors since. A budget that has seen none (a new
 * one) lets the retry wait its backoff and asks again just before sending it, so a fresh client
 * whose concurrent calls succeed meanwhile still retries; if there is still none, the call ends
 * after that one wait with the last exception or the last response as it is (kept open, body
 * unread, through that wait), and nothing more is sent. The price: a fresh process making its
 * first call alone does not retry an error (a {@code Retry-After} it does honour). The numbers
 * behind it are in {@code docs/semantics.md} ("A fleet of processes") and {@code docs/fleet.md}.
 *
 * <p>So once failures persist and the starting balance is spent, retries stay within about
 * {@code percentCanRetry} of the calls (plus the reserve), and stop after 20 without a success,
 * while occasional failures among mostly successful calls are all retried.
 *
 * <p>Every {@link RetryPolicy} gets its own budget with the defaults unless given one; pass
 * the same instance to several interceptors to share it, or {@link #unlimited()} to turn
 * budgeting off. Thread-safe.
 */
public final class RetryBudget {

  private static final RetryBudget UNLIMITED = new RetryBudget((Builder) null);

  private final boolean unlimited;
  private final double percentCanRetry;
  private final int minRetriesPerSecond;
  private final int maxTokens;
  private final int failureStreak;
  private final @Nullable RetryTokenBucket bucket; // null when unlimited

  private RetryBudget(@Nullable Builder b) {
    this.unlimited = b == null;
    this.percentCanRetry = b == null ? Double.POSITIVE_INFINITY : b.percentCanRetry;
    this.minRetriesPerSecond = b == null ? 0 : b.minRetriesPerSecond;
    this.maxTokens = b == null ? 0 : b.maxTokens;
    this.failureStreak = b == null ? 0 : b.failureStreak;
    this.bucket =
        b == null ? null : RetryTokenBucket.withDefaults(percentCanRetry, maxTokens, minRetriesPerSecond, failureStreak);
  }

  private RetryBudget(RetryTokenBucket bucket) {
    this.unlimited = false;
    this.percentCanRetry = Double.NaN;
    this.minRetriesPerSecond = -1;
    this.maxTokens = -1;
    this.failureStreak = -1;
    this.bucket = bucket;
  }

  /** A budget over a bucket with other numbers than the builder's: the fleet simulator's candidates. */
  static RetryBudget over(RetryTokenBucket bucket) {
    return new RetryBudget(bucket);
  }

  /**
   * A budget with the defaults: starts with 100 tokens, 20% of calls may retry, a reserve of 10
   * retries per second, and retries after errors only with evidence that retrying works (a
   * failure streak of 20).
   *
   * @return a budget with the defaults
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
   * Tokens in the balance, ignoring the reserve; for metrics. A new budget holds {@link
   * Builder#maxTokens}; {@link #unlimited()} never runs out and reports {@link
   * Double#POSITIVE_INFINITY}.
   *
   * @return tokens in the balance, 0 or more; {@link Double#POSITIVE_INFINITY} for {@link
   *     #unlimited()}
   */
  public double availableTokens() {
    return unlimited ? Double.POSITIVE_INFINITY : bucket.balanceMilli() / (double) RetryTokenBucket.MILLI;
  }

  /** A successful first attempt earns a fraction of a retry. */
  void deposit() {
    if (!unlimited) bucket.deposit();
  }

  /** A retry succeeded: evidence that retrying works ({@link Builder#failureStreak}); nothing is paid in. */
  void retrySucceeded() {
    if (!unlimited) bucket.retrySucceeded();
  }

  /**
   * Pays for a retry, with evidence that retrying works if it follows an error ({@link
   * RetryTokenBucket#payForRetry}). {@link LogicalCall} asks when it decides the retry and, if
   * that was {@link Payment#UNPROVEN}, again after the retry's wait, just before sending it: a
   * retry never sent is never paid for.
   *
   * @param honoursRetryAfter true for a retry that waits out a 429/503 {@code Retry-After}
   */
  Payment payForRetry(boolean honoursRetryAfter, long nowNanos) {
    return unlimited ? Payment.PAID : bucket.payForRetry(honoursRetryAfter, nowNanos);
  }

  /**
   * Pays one retry's cost after an error (not a server-given wait), from the balance or else the
   * reserve, without asking for evidence: a hedge's price. False if neither can pay.
   */
  boolean tryWithdraw(long nowNanos) {
    return unlimited || bucket.tryWithdraw(false, nowNanos);
  }

  @Override
  public String toString() {
    return unlimited
        ? "RetryBudget.unlimited()"
        : "RetryBudget{percentCanRetry=" + percentCanRetry + ", minRetriesPerSecond="
            + minRetriesPerSecond + ", maxTokens=" + maxTokens + ", failureStreak=" + failureStreak + "}";
  }

  /** Builds a {@link RetryBudget}. Not thread-safe; {@link #build()} makes a fresh bucket. */
  public static final class Builder {
    private double percentCanRetry = Tuning.PERCENT_CAN_RETRY;
    private int minRetriesPerSecond = Tuning.MIN_RETRIES_PER_SECOND;
    private int maxTokens = Tuning.MAX_TOKENS;
    private int failureStreak = Tuning.FAILURE_STREAK_LIMIT;

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
     * Tokens per second available regardless of deposits, so a client that calls rarely can still
     * retry: 10 retries after errors, or 20 that honour a {@code Retry-After}, per second by
     * default. The reserve holds at most one second's worth. Default 10; 0 disables the reserve.
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
     * The most tokens the balance holds, and what a new budget starts with: the extra attempts a
     * server that fails everything sees before the budget holds (twice as many retries if each
     * honours a {@code Retry-After}). Default 100.
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
     * Makes retries after errors depend on evidence that retrying works: the budget pays for one
     * only while fewer than {@code limit} were counted since the last call whose first attempt
     * succeeded or whose retry succeeded, and a new budget has seen neither. A retry that finds no
     * evidence when it is decided still waits its backoff, and is sent only if evidence arrived
     * meanwhile (another call succeeded); else the call ends after that one wait with the last
     * exception or the last response as it is (kept open through that wait). A fleet of processes
     * that have only ever seen a server fail then adds no retries to its load, however few calls
     * each makes (the balance and the reserve cannot tell a quiet process from a healthy one); the
     * price is that a fresh process calling alone does not retry its first errors. Retries that
     * wait out a 429/503 {@code Retry-After} need no evidence: the server said when to come back.
     * Default 20, chosen with the fleet simulator ({@code docs/fleet.md}); 0 turns the rule off
     * (the budget before issue 20).
     *
     * @param limit retries after errors allowed in a row without a success, in [0, 1 000 000]; 0
     *     turns the rule off
     * @return this builder
     * @throws IllegalArgumentException if not in {@code [0, 1 000 000]}
     */
    public Builder failureStreak(int limit) {
      if (limit < 0 || limit > 1_000_000) {
        throw new IllegalArgumentException("failureStreak not in [0, 1000000]: " + limit);
      }
      this.failureStreak = limit;
      return this;
    }

    /**
     * A new budget with this configuration, its balance full.
     *
     * @return a new budget with this configuration, its balance full
     */
    public RetryBudget build() {
      return new RetryBudget(this);
    }
  }
}
