package io.github.okretry;

import io.github.okretry.internal.OriginStreaks;
import io.github.okretry.internal.OriginStreaks.Standing;
import io.github.okretry.internal.RetryKind;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.TokenBalance;
import io.github.okretry.internal.Tuning;
import okhttp3.HttpUrl;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the extra load retries put on a server, across every call that shares this budget: backoff
 * per call does little when many calls share one client and each of them retries. The budget is
 * asked once per retry, when it is about to leave (after its wait), and answers send, skip or stop:
 *
 * <ul>
 *   <li><b>Per origin, one failing call's worth since it last answered.</b> After a call to an
 *       origin (scheme, host, port) is answered by a server that works (below 500, not 408 or 429,
 *       not from OkHttp's cache), retries to it are sent until they add up to one call's {@code
 *       maxRetries}. Past that, a retry is <i>skipped</i>: not sent, counted as failed, and its
 *       call waits for its next attempt as it would have anyway; it goes if a call to the origin
 *       worked meanwhile. A call none of whose skipped retries found its origin working ends with
 *       its last failure ({@link GiveUpReason#NO_RECENT_SUCCESS}), its body not kept through the
 *       waits. Once the origin has failed everything for longer than twice a call's retry schedule
 *       (the sum of its backoff caps: 2.8 s by default), a call that would be skipped ends at once,
 *       with the response in hand. So a failure that hits many calls at once is retried like one
 *       that hits one call, and a process adds at most one call's retries to a dead origin's load
 *       however many calls it makes ({@code docs/fleet.md}). A retry that waits out a 503's {@code
 *       Retry-After} counts half; one that waits out a 4xx's (a 429, GitHub's 403), or follows an
 *       HTTP/2 stream the server refused unread, is not counted.
 *   <li><b>Tokens.</b> Each call whose first attempt succeeds deposits {@link
 *       Builder#percentCanRetry} of a token; each retry pays its price when it leaves: one token,
 *       half for one that waits out a 429's or 503's {@code Retry-After} or a spent quota's reset
 *       (another status's wait is an error's: a whole token). While failures are rare among its
 *       origin's recent answers (a lossy link), a retry that succeeds gets its price back; while
 *       they are common (a third or more: an outage, an overload), a retry after a timeout costs
 *       fourteen, never from the reserve, and nothing is paid back: the retries that turn an
 *       overload into an outage follow timeouts. When neither the balance nor a small time-based
 *       reserve ({@link Builder#minRetriesPerSecond}) can pay, the call ends with its failure
 *       ({@link GiveUpReason#BUDGET_EXHAUSTED}). A new budget starts full ({@link
 *       Builder#maxTokens}). The defaults follow Finagle's {@code RetryBudget}, gRPC's retry
 *       throttling and the AWS SDKs' retry quota.
 * </ul>
 *
 * <p>A hedge pays as a retry after an error, and none goes to an origin that has failed since it
 * last answered. What the budget knows of an origin is forgotten 30 s after its last failure. The
 * rules and their numbers: {@code docs/semantics.md} ("Retry budget"). Every {@link RetryPolicy}
 * gets its own budget with the defaults unless given one; share one instance between policies, or
 * pass {@link #unlimited()} to turn budgeting off. Thread-safe.
 */
public final class RetryBudget {

  private static final RetryBudget UNLIMITED =
      new RetryBudget(
          null,
          null,
          true,
          Tuning.DOWN_AFTER_SCHEDULES,
          Tuning.TIMEOUT_COST_MILLI,
          "RetryBudget.unlimited()");

  /** What the budget says of a retry ({@link #admit}). */
  enum Verdict {
    /** Send it: paid for (or, asked before the wait, it could be now). */
    SEND(null),
    /** Do not send it now: its origin's count is spent; the call may wait for its next attempt. */
    SKIP(null),
    /** End the call: its origin has failed everything for too long, or (strict) never worked. */
    ORIGIN_DOWN(GiveUpReason.NO_RECENT_SUCCESS),
    /** End the call: neither the balance nor the reserve holds the retry's price. */
    NO_TOKENS(GiveUpReason.BUDGET_EXHAUSTED);

    final @Nullable GiveUpReason reason; // null: the call goes on

    Verdict(@Nullable GiveUpReason reason) {
      this.reason = reason;
    }
  }

  // Both null: unlimited
  private final @Nullable TokenBalance tokens;
  private final @Nullable OriginStreaks streaks;
  private final boolean retryBeforeFirstSuccess;
  private final int downAfterSchedules;
  private final long timeoutCostMilli;
  private volatile boolean succeeded; // read only when retryBeforeFirstSuccess is false
  private final String settings; // for toString()

  RetryBudget(
      @Nullable TokenBalance tokens,
      @Nullable OriginStreaks streaks,
      boolean retryBeforeFirstSuccess,
      int downAfterSchedules,
      long timeoutCostMilli,
      String settings) {
    this.tokens = tokens;
    this.timeoutCostMilli = timeoutCostMilli;
    this.streaks = streaks;
    this.retryBeforeFirstSuccess = retryBeforeFirstSuccess;
    this.downAfterSchedules = downAfterSchedules;
    this.settings = settings;
  }

  /**
   * A budget with other numbers than the builder's: the fleet simulator's candidates and its table
   * of each number halved and doubled.
   */
  static RetryBudget over(
      TokenBalance tokens, OriginStreaks streaks, int downAfterSchedules, long timeoutCostMilli) {
    return new RetryBudget(
        tokens,
        streaks,
        true,
        downAfterSchedules,
        timeoutCostMilli,
        "RetryBudget{a simulator's numbers}");
  }

  /** The table of origins okretry's defaults use ({@link Tuning}). */
  static OriginStreaks defaultStreaks() {
    return new OriginStreaks(
        Tuning.ORIGIN_SLOTS,
        Tuning.ORIGIN_MEMORY_NANOS,
        Tuning.COMMON_FAILURE_SHARE,
        Tuning.FAILURE_SHARE_WINDOW);
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
    TokenBalance t = tokens;
    return t == null ? Double.POSITIVE_INFINITY : t.balanceMilli() / (double) TokenBalance.MILLI;
  }

  /**
   * The one question, for a retry of {@code kind} to {@code url}'s origin by a call of {@code
   * maxRetries} whose retry schedule (its backoff caps summed) is {@code scheduleNanos}; the rules
   * in order, each here and nowhere else:
   *
   * <ol>
   *   <li>under {@code retryBeforeFirstSuccess(false)}, before any success, a retry that follows no
   *       server-given wait: {@link Verdict#ORIGIN_DOWN};
   *   <li>its origin's count spent ({@link OriginStreaks#count}, limit {@code 2 × maxRetries}
   *       halves): {@link Verdict#ORIGIN_DOWN} once the origin has failed everything for longer
   *       than {@link Tuning#DOWN_AFTER_SCHEDULES} schedules, else {@link Verdict#SKIP};
   *   <li>its price ({@link #priceMilli}) beyond the balance and the reserve: {@link
   *       Verdict#NO_TOKENS};
   *   <li>else {@link Verdict#SEND}: if {@code departs}, it is paid for and counted now.
   * </ol>
   *
   * Asked before the wait ({@code departs} false), it takes nothing: a call then ends at once, with
   * the response in hand, rather than after a wait that could not end in a retry.
   */
  Verdict admit(
      HttpUrl url,
      RetryKind kind,
      int maxRetries,
      long scheduleNanos,
      long nowNanos,
      boolean departs) {
    TokenBalance t = tokens;
    OriginStreaks s = streaks;
    if (t == null || s == null) return Verdict.SEND;
    if (!retryBeforeFirstSuccess && !kind.serverSaidWhen() && !succeeded) {
      return Verdict.ORIGIN_DOWN;
    }
    long halves = kind.halves();
    long limit = 2L * maxRetries;
    long downAfter = saturatedTimes(scheduleNanos, downAfterSchedules);
    Standing standing = s.count(url, halves, limit, downAfter, nowNanos, false);
    if (standing != Standing.ROOM) {
      return standing == Standing.DOWN ? Verdict.ORIGIN_DOWN : Verdict.SKIP;
    }
    long price = priceMilli(kind, url, nowNanos);
    boolean reserveToo = price <= Tuning.RETRY_COST_MILLI; // never a timeout's in an overload
    if (!departs) return t.canPay(price, reserveToo, nowNanos) ? Verdict.SEND : Verdict.NO_TOKENS;
    if (!t.pay(price, reserveToo, nowNanos)) return Verdict.NO_TOKENS;
    standing = s.count(url, halves, limit, downAfter, nowNanos, true);
    if (standing == Standing.ROOM) return Verdict.SEND;
    t.giveBack(price); // another call's retry took the last of the count meanwhile
    return standing == Standing.DOWN ? Verdict.ORIGIN_DOWN : Verdict.SKIP;
  }

  /**
   * What a retry of {@code kind} to {@code url}'s origin costs now, in thousandths of a token: half
   * a retry's cost for one that waits out a server's wait; fourteen for one after a timeout while
   * failures are common on its origin; else one.
   */
  private long priceMilli(RetryKind kind, HttpUrl url, long nowNanos) {
    if (kind.serverSaidWhen()) return Tuning.SERVER_WAIT_RETRY_COST_MILLI;
    OriginStreaks s = streaks;
    return kind == RetryKind.TIMEOUT && s != null && s.failuresAreCommon(url, nowNanos)
        ? timeoutCostMilli
        : Tuning.RETRY_COST_MILLI;
  }

  private static long saturatedTimes(long nanos, int times) {
    return nanos > Long.MAX_VALUE / Math.max(1, times) ? Long.MAX_VALUE : nanos * times;
  }

  /**
   * A hedge to {@code url}'s origin is about to leave: true if it may, paid as a retry after an
   * error (from the reserve too); never while the origin has failed since it last answered.
   */
  boolean payForHedge(HttpUrl url, long nowNanos) {
    TokenBalance t = tokens;
    OriginStreaks s = streaks;
    if (t == null || s == null) return true;
    return !s.isOpen(url, nowNanos) && t.pay(Tuning.RETRY_COST_MILLI, true, nowNanos);
  }

  /** An attempt of one of this budget's calls to {@code url}'s origin failed. */
  void failed(HttpUrl url, long nowNanos) {
    OriginStreaks s = streaks;
    if (s != null) s.failed(url, nowNanos);
  }

  /**
   * A call to {@code url} returns {@code response} to its caller after {@code attempts} attempts,
   * the last of them a retry paid for as {@code paidKind} (null: none). If it shows the server
   * working, that is a success: its origin's streak ends, so retries skipped on it go, a first
   * attempt's success pays in a fraction of a retry, and, while failures are rare on the origin, a
   * paid retry's success gets its price back. A 500 the policy does not retry is the caller's
   * answer, but no sign that retrying would work.
   */
  void returned(
      HttpUrl url, Response response, int attempts, @Nullable RetryKind paidKind, TimeSource time) {
    TokenBalance t = tokens;
    OriginStreaks s = streaks;
    if (t == null || s == null || !showsServerWorking(response)) return;
    if (!retryBeforeFirstSuccess && !succeeded) succeeded = true;
    if (attempts == 1) t.deposit();
    // The healthy path of a budget none of whose calls failed reads no clock and takes no lock.
    if (!s.everFailed()) return;
    long now = time.nanoTime();
    s.succeeded(url, now);
    if (paidKind != null && !s.failuresAreCommon(url, now)) {
      t.giveBack(priceMilli(paidKind, url, now));
    }
  }

  /**
   * How long before {@code nowNanos} a call of this budget to {@code url}'s origin was last
   * answered by a server that works, in nanoseconds; {@link OriginStreaks#NO_ANSWER} if the budget
   * does not know ({@link OriginStreaks#sinceAnsweredNanos}) or is unlimited. Read only when it
   * ends a call.
   */
  long sinceAnsweredNanos(HttpUrl url, long nowNanos) {
    OriginStreaks s = streaks;
    return s == null ? OriginStreaks.NO_ANSWER : s.sinceAnsweredNanos(url, nowNanos);
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
      long capacity = maxTokens * TokenBalance.MILLI;
      return new RetryBudget(
          new TokenBalance(
              Math.round(percentCanRetry * TokenBalance.MILLI),
              capacity,
              Math.round(capacity * Tuning.INITIAL_FILL),
              minRetriesPerSecond),
          defaultStreaks(),
          retryBeforeFirstSuccess,
          Tuning.DOWN_AFTER_SCHEDULES,
          Tuning.TIMEOUT_COST_MILLI,
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
