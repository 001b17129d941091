package io.github.okretry;

import io.github.okretry.internal.RetryTokenBucket;
import io.github.okretry.internal.RetryTokenBucket.Kind;
import io.github.okretry.internal.RetryTokenBucket.Payment;
import io.github.okretry.internal.RetryTokenBucket.Streak;
import io.github.okretry.internal.Tuning;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the extra load retries put on a server, across every call that shares this budget: backoff
 * per call does little when many calls share one client and each of them retries. A retry must pass
 * two rules:
 *
 * <ul>
 *   <li><b>Per origin, one failing call's worth since it last answered.</b> After a call to an
 *       origin (scheme, host, port) succeeds (a response that shows the server working: below 500,
 *       not 408 or 429, and not served from OkHttp's cache), the budget pays for retries to it
 *       until they add up to one call's {@code maxRetries}. Past that, a retry is <i>held</i>: it
 *       waits its backoff as it would anyway, and goes if a call to that origin succeeded
 *       meanwhile; if none did, its attempt is not sent and counts as failed, and the call waits
 *       for its next attempt the same way. A call none of whose held retries found its origin
 *       working ends with its last failure as it came ({@link GiveUpReason#NO_RECENT_SUCCESS}),
 *       after about the time it would have taken without a budget. So a failure that hits many
 *       calls at once (a restart, a dropped connection) is retried as one that hits one call, and a
 *       process whose server dies adds at most one call's retries to its load however many calls it
 *       makes ({@code docs/fleet.md}). A retry that waits out a 503's {@code Retry-After} or spent
 *       published quota's reset counts half; one that waits out a 4xx's (a 429, GitHub's 403), or
 *       follows an HTTP/2 stream the server refused unread, is not counted. A new budget starts as
 *       if every origin had just answered.
 *   <li><b>Tokens.</b> Each call whose first attempt succeeds deposits {@link
 *       Builder#percentCanRetry} of a token; each retry withdraws its price: one token, half for
 *       one that waits out a server's wait. While failures are rare among the recent answers (a
 *       lossy link), a retry that succeeds gets its price back; while they are common (a third or
 *       more: an outage, an overload), a retry after a timeout costs fourteen, never from the
 *       reserve, and nothing is paid back: the retries that turn an overload into an outage follow
 *       timeouts. When neither the balance nor a small time-based reserve ({@link
 *       Builder#minRetriesPerSecond}) can pay, the failure is returned ({@link
 *       GiveUpReason#BUDGET_EXHAUSTED}). A new budget starts full ({@link Builder#maxTokens}). The
 *       defaults follow Finagle's {@code RetryBudget}, gRPC's retry throttling and the AWS SDKs'
 *       retry quota.
 * </ul>
 *
 * <p>A retry paid for but not sent (its call was canceled, ran out of time, or found no turn in its
 * origin's crowd) is given back. The numbers behind the rules: {@code docs/semantics.md} ("Retry
 * budget"). Every {@link RetryPolicy} gets its own budget with the defaults unless given one; share
 * one instance between policies, or pass {@link #unlimited()} to turn budgeting off. Thread-safe.
 */
public final class RetryBudget {

  private static final RetryBudget UNLIMITED = new RetryBudget(null, "RetryBudget.unlimited()");

  // null: unlimited; LogicalCall counts attempts on its streaks
  final @Nullable RetryTokenBucket bucket;
  private final String settings; // for toString()

  private RetryBudget(@Nullable RetryTokenBucket bucket, String settings) {
    this.bucket = bucket;
    this.settings = settings;
  }

  /**
   * A budget over a bucket with other numbers than the builder's: the fleet simulator's candidates.
   */
  static RetryBudget over(RetryTokenBucket bucket) {
    return new RetryBudget(bucket, "RetryBudget{a simulator's bucket}");
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
   * A builder with the defaults listed on its methods; {@code builder().build()} is the budget each
   * policy gets by default.
   *
   * @return a builder with the defaults listed on its methods
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Tokens in the balance, ignoring the reserve; for metrics. A new budget holds {@link
   * Builder#maxTokens}.
   *
   * @return tokens in the balance, 0 or more; {@link Double#POSITIVE_INFINITY} for {@link
   *     #unlimited()}
   */
  public double availableTokens() {
    return bucket == null
        ? Double.POSITIVE_INFINITY
        : bucket.balanceMilli() / (double) RetryTokenBucket.MILLI;
  }

  /**
   * A call of {@code request} returns {@code response} to its caller after {@code attempts}
   * attempts, the last of them a retry paid {@code retryPriceMilli} for (0: none). If it shows the
   * server working (below 500, not 408 or 429, and not served from OkHttp's cache, which says
   * nothing of the server), that is a success: its origin's streak ends, so retries held on it go,
   * a first attempt's success pays in a fraction of a retry, and a retry's success gets its cost
   * back. A 500 the policy does not retry is the caller's answer, but no sign that retrying would
   * work.
   */
  void returned(
      Request request,
      @Nullable String origin,
      Response response,
      int attempts,
      long retryPriceMilli) {
    if (bucket == null || !showsServerWorking(response)) return;
    bucket.succeeded(request.url(), origin, attempts == 1);
    if (retryPriceMilli > 0) bucket.paidBack(retryPriceMilli);
  }

  /**
   * Whether {@code response} shows its server working: below 500, not 408 or 429, and not served
   * from OkHttp's cache (which says nothing of the server).
   */
  static boolean showsServerWorking(Response response) {
    int code = response.code();
    if (code >= 500 || code == 408 || code == 429) return false;
    return response.networkResponse() != null || response.cacheResponse() == null;
  }

  /**
   * Whether some origin has a streak open: calls then keep their state from the first attempt on,
   * to be counted.
   */
  boolean hasOpenStreaks() {
    return bucket != null && bucket.hasOpenStreaks();
  }

  /**
   * The open streak of {@code origin} ({@link RetryTokenBucket#streak}), begun if it has none; null
   * for no budget.
   */
  @Nullable Streak streak(String origin) {
    return bucket == null ? null : bucket.streak(origin);
  }

  /** What a retry of {@code kind} costs now ({@link RetryTokenBucket#price}); 0 for no budget. */
  long price(Kind kind) {
    return bucket == null ? 0 : bucket.price(kind);
  }

  /**
   * Pays {@code priceMilli} ({@link #price}) for a retry of {@code kind} on {@code streak} when
   * {@link LogicalCall} decides it ({@link RetryTokenBucket#payForRetry}); one then not sent is
   * given back ({@link #refund}).
   */
  Payment payForRetry(
      @Nullable Streak streak, Kind kind, long priceMilli, int maxRetries, long nowNanos) {
    return bucket == null || streak == null
        ? Payment.PAID
        : bucket.payForRetry(streak, kind, priceMilli, maxRetries, nowNanos);
  }

  /**
   * A retry paid {@code priceMilli} for was not sent: its price and its count on {@code streak}
   * come back.
   */
  void refund(Kind kind, long priceMilli, @Nullable Streak streak) {
    if (bucket != null && streak != null) bucket.refund(kind, priceMilli, streak);
  }

  /** An attempt of one of this budget's calls failed ({@link RetryTokenBucket#failed}). */
  void failed() {
    if (bucket != null) bucket.failed();
  }

  /**
   * Pays one retry's cost after an error (not a server-given wait), from the balance or else the
   * reserve, without counting it on its origin's streak: a hedge's price. False if neither can pay.
   */
  boolean tryWithdraw(long nowNanos) {
    return bucket == null || bucket.tryWithdraw(false, nowNanos);
  }

  @Override
  public String toString() {
    return settings;
  }

  /** Builds a {@link RetryBudget}. Not thread-safe; {@link #build()} makes a fresh bucket. */
  public static final class Builder {
    private double percentCanRetry = Tuning.PERCENT_CAN_RETRY;
    private int minRetriesPerSecond = Tuning.MIN_RETRIES_PER_SECOND;
    private int maxTokens = Tuning.MAX_TOKENS;
    private boolean retryBeforeFirstSuccess = true;

    private Builder() {}

    /**
     * The fraction of a retry each call with a successful first attempt deposits. Default 0.2: once
     * failures persist, retries stay within about 20% of calls.
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
     * retry; the reserve holds at most one second's worth. Default 10; 0 disables the reserve.
     *
     * @param minRetriesPerSecond the reserve refill rate, in [0, 1 000 000]
     * @return this builder
     * @throws IllegalArgumentException if negative or over 1 000 000
     */
    public Builder minRetriesPerSecond(int minRetriesPerSecond) {
      if (minRetriesPerSecond < 0 || minRetriesPerSecond > 1_000_000) {
        throw new IllegalArgumentException(
            "minRetriesPerSecond not in [0, 1000000]: " + minRetriesPerSecond);
      }
      this.minRetriesPerSecond = minRetriesPerSecond;
      return this;
    }

    /**
     * The most tokens the balance holds, and what a new budget starts with: what it can pay for
     * retries before deposits and the reserve matter. Default 100.
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
     * Whether a new budget pays for retries after errors before any call of it has succeeded.
     * Default true: a new client retries its first failing call like any other. False is the strict
     * rule for fleets of one-shot processes (serverless functions, command-line tools, mobile apps
     * at start-up) that may each fail their only call against a dead server: they then add no retry
     * after an error to its load ({@code docs/fleet.md}), at the price that a process whose first
     * call fails does not retry it. A retry that waits out a 429/503 {@code Retry-After} is paid
     * either way.
     *
     * @param retryBeforeFirstSuccess false to pay no retry after an error before the first success
     * @return this builder
     */
    public Builder retryBeforeFirstSuccess(boolean retryBeforeFirstSuccess) {
      this.retryBeforeFirstSuccess = retryBeforeFirstSuccess;
      return this;
    }

    /**
     * A new budget with this configuration, its balance full.
     *
     * @return a new budget with this configuration, its balance full
     */
    public RetryBudget build() {
      return new RetryBudget(
          RetryTokenBucket.withDefaults(
              percentCanRetry, maxTokens, minRetriesPerSecond, retryBeforeFirstSuccess),
          "RetryBudget{percentCanRetry="
              + percentCanRetry
              + ", minRetriesPerSecond="
              + minRetriesPerSecond
              + ", maxTokens="
              + maxTokens
              + ", retryBeforeFirstSuccess="
              + retryBeforeFirstSuccess
              + "}");
    }
  }
}
