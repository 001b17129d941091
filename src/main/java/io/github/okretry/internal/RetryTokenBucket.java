package io.github.okretry.internal;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.HttpUrl;
import org.jspecify.annotations.Nullable;

/**
 * The arithmetic of a retry budget: a balance that calls whose first attempt succeeds pay into and
 * retries draw from, plus a small reserve refilled with time; and, per origin, a {@link Streak}:
 * the retries paid since that origin last answered a call, which stops at one failing call's worth,
 * past which a retry is held until the origin answers again. Every decision takes the time as an
 * argument, so the same code runs on a real clock inside {@code RetryBudget} and on a simulated one
 * in a fleet simulator. Tokens are kept in thousandths. Thread-safe: the balance is lock-free, the
 * reserve and the streaks each have a lock, and a success with no streak open (the healthy path)
 * takes neither.
 */
public final class RetryTokenBucket {

  /** Thousandths per token. */
  public static final long MILLI = 1000;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long MICROS = 1_000_000L;

  private final long depositMilli;
  private final long capacityMilli;
  private final int reservePerSecond;
  private final long reserveCapMilli; // one second's refill
  private final long retryCostMilli;
  private final long timeoutCostMilli;
  private final long retryAfterCostMilli;
  private final AtomicLong balanceMilli;
  private final boolean retryBeforeFirstSuccess;
  private volatile boolean succeeded; // read only when retryBeforeFirstSuccess is false

  // The open streaks by origin (OriginGate.origin), least recently used first, at most
  // Tuning.MAX_ORIGINS: an origin that answers a call closes its streak and leaves the table.
  // Guarded by itself
  private final LinkedHashMap<String, Streak> streaks = new LinkedHashMap<>(16, 0.75f, true);
  private volatile int openStreaks; // streaks.size(), read without the lock by the healthy path
  // The share of recent answers that were failures, in millionths ({@link #failed}); while it is
  // 0 (nothing failed lately) a success reads it and writes nothing.
  private final AtomicLong failureShareMicros = new AtomicLong();

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
   * @param retryBeforeFirstSuccess false: no retry after an error is paid before the bucket's first
   *     success (the strict rule for fleets of one-shot processes)
   */
  public RetryTokenBucket(
      long depositMilli,
      long capacityMilli,
      long initialMilli,
      int reservePerSecond,
      long retryCostMilli,
      long timeoutCostMilli,
      long retryAfterCostMilli,
      boolean retryBeforeFirstSuccess) {
    if (depositMilli < 0) throw new IllegalArgumentException("depositMilli < 0: " + depositMilli);
    if (capacityMilli < MILLI)
      throw new IllegalArgumentException("capacityMilli < 1000: " + capacityMilli);
    if (initialMilli < 0 || initialMilli > capacityMilli) {
      throw new IllegalArgumentException(
          "initialMilli not in [0, " + capacityMilli + "]: " + initialMilli);
    }
    if (reservePerSecond < 0)
      throw new IllegalArgumentException("reservePerSecond < 0: " + reservePerSecond);
    if (retryCostMilli <= 0)
      throw new IllegalArgumentException("retryCostMilli <= 0: " + retryCostMilli);
    if (timeoutCostMilli <= 0)
      throw new IllegalArgumentException("timeoutCostMilli <= 0: " + timeoutCostMilli);
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
      double percentCanRetry,
      int maxTokens,
      int minRetriesPerSecond,
      boolean retryBeforeFirstSuccess) {
    long capacity = (long) maxTokens * MILLI;
    long initial = Math.round(capacity * Tuning.INITIAL_FILL);
    return new RetryTokenBucket(
        Math.round(percentCanRetry * MILLI),
        capacity,
        initial,
        minRetriesPerSecond,
        Tuning.RETRY_COST_MILLI,
        Tuning.TIMEOUT_COST_MILLI,
        Tuning.RETRY_AFTER_COST_MILLI,
        retryBeforeFirstSuccess);
  }

  /** The balance, without the reserve, in thousandths of a token. */
  public long balanceMilli() {
    return balanceMilli.get();
  }

  /**
   * The retries since an origin last answered a call, in halves (2 for a retry after an error, 1
   * for one that waits out a 503's {@code Retry-After}), and whether it has answered since: a retry
   * held on the streak ({@link Payment#HELD}) goes once it has. One per origin at a time; a success
   * ends it and a new one starts at the next retry.
   */
  public static final class Streak {
    private long halves; // these three guarded by the bucket's streaks
    // Attempts to the origin sent during the streak ({@link #sent}), numbered from 1
    private long sends;
    private long lastFailedSend; // the number of the latest of them that failed; 0 for none
    private volatile boolean ended;

    /**
     * True once the origin answered a call (a success) after this streak began: held retries may
     * go.
     */
    public boolean ended() {
      return ended;
    }
  }

  /** Whether some origin has a streak open: only then are attempts numbered ({@link #sent}). */
  public boolean hasOpenStreaks() {
    return openStreaks != 0;
  }

  /**
   * The open streak of {@code origin} (a key from {@link OriginGate#origin}), or null if it has
   * none.
   */
  public @Nullable Streak openStreak(String origin) {
    if (openStreaks == 0) return null;
    synchronized (streaks) {
      return streaks.get(origin);
    }
  }

  /** An attempt to {@code streak}'s origin is sent: its number, to hand to {@link #answered}. */
  public long sent(Streak streak) {
    synchronized (streaks) {
      return ++streak.sends;
    }
  }

  /**
   * Attempt {@code send} ({@link #sent}) was answered, {@code failed} or not (a success also ends
   * the streak).
   */
  public void answered(Streak streak, long send, boolean failed) {
    if (!failed) return; // a success ends the streak, through succeeded()
    synchronized (streaks) {
      if (send > streak.lastFailedSend) streak.lastFailedSend = send;
    }
  }

  /**
   * The number of the latest attempt sent during {@code streak}: a held retry waits for one past
   * it.
   */
  public long lastSend(Streak streak) {
    synchronized (streaks) {
      return streak.sends;
    }
  }

  /**
   * Whether {@code streak}'s origin may yet be seen to work, by a held retry about to end that has
   * seen sends up to {@code since}: it has answered a call (the retry asks again at once), or no
   * attempt sent after {@code since} has failed yet. Attempts that left before may fail without
   * saying anything of now (a blip's last refusals come back after it is over); a later one's
   * failure does.
   */
  public boolean mayYetAnswer(Streak streak, long since) {
    synchronized (streaks) {
      // Ended: the origin answered a call; the held retry asks again at once and is paid.
      return streak.ended || streak.lastFailedSend <= since;
    }
  }

  /** The open streak of {@code url}'s origin, begun now if it has none. */
  public Streak streak(HttpUrl url) {
    return streak(OriginGate.origin(url));
  }

  /**
   * The open streak of {@code origin} (a key from {@link OriginGate#origin}), begun now if it has
   * none.
   */
  public Streak streak(String origin) {
    synchronized (streaks) {
      Streak s = streaks.get(origin);
      if (s != null) return s;
      s = new Streak();
      streaks.put(origin, s);
      if (streaks.size() > Tuning.MAX_ORIGINS) {
        // The least recently used is forgotten, as an origin never seen: its next retry, a held
        // one's included, starts a new count (bounded memory, at the price of one call's retries
        // again after 1024 other origins failed at once).
        Iterator<Streak> lru = streaks.values().iterator();
        lru.next();
        lru.remove();
      }
      openStreaks = streaks.size();
      return s;
    }
  }

  /**
   * A call to {@code url} was answered with a success ({@code firstAttempt}: by its first attempt):
   * evidence that its origin works, which ends the origin's streak; a first attempt's success also
   * pays its share in, up to the capacity.
   */
  public void succeeded(HttpUrl url, boolean firstAttempt) {
    succeeded(url, null, firstAttempt);
  }

  /**
   * As {@link #succeeded(HttpUrl, boolean)}, with the origin's key if the caller has it ({@link
   * OriginGate#origin}).
   */
  public void succeeded(HttpUrl url, @Nullable String origin, boolean firstAttempt) {
    if (!retryBeforeFirstSuccess && !succeeded) succeeded = true;
    if (failureShareMicros.get() != 0) share(0);
    // The healthy path reads one volatile field and writes nothing (while there is no streak open,
    // and the balance is full).
    if (openStreaks != 0) endStreak(origin != null ? origin : OriginGate.origin(url));
    if (!firstAttempt) return;
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + depositMilli)))
        return;
    }
  }

  private void endStreak(String origin) {
    Streak s;
    synchronized (streaks) {
      s = streaks.remove(origin);
      openStreaks = streaks.size();
    }
    if (s != null) s.ended = true;
  }

  /**
   * An attempt failed (a retryable outcome, or an error): the share of recent answers that are
   * failures grows ({@link #failuresAreCommon}).
   */
  public void failed() {
    share(MICROS);
  }

  // An average of the latest answers' outcomes (1 a failure, 0 a success) over about
  // FAILURE_SHARE_WINDOW answers; the -1 takes it down to 0 at last, after which a success
  // writes nothing.
  private void share(long sampleMicros) {
    for (long f = failureShareMicros.get(); ; f = failureShareMicros.get()) {
      long next =
          Math.max(
              0,
              f + (sampleMicros - f) / Tuning.FAILURE_SHARE_WINDOW - (sampleMicros == 0 ? 1 : 0));
      if (failureShareMicros.compareAndSet(f, next)) return;
    }
  }

  /**
   * Whether failures are common: a third or more of the recent answers of this budget's calls
   * ({@link Tuning#COMMON_FAILURE_SHARE}). While they are rare (a lossy link: a timeout now and
   * then on a server that answers), a retry after a timeout is priced as any other and a retry that
   * succeeds gets its price back; while they are common (an outage, an overload), a retry after a
   * timeout costs {@code timeoutCostMilli}, from the balance alone, and none is paid back.
   */
  public boolean failuresAreCommon() {
    return failureShareMicros.get() >= Tuning.COMMON_FAILURE_SHARE * MICROS;
  }

  /** The share of recent answers that were failures, in millionths (tests read it). */
  long failureShareMicros() {
    return failureShareMicros.get();
  }

  /** What a retry follows, which sets its price. */
  public enum Kind {
    /** An error: a failed connection, a retryable status without a server-given wait. */
    ERROR,
    /** A timeout: the server may still be working on the request, and may be overloaded. */
    TIMEOUT,
    /**
     * A 503 with a {@code Retry-After} the retry waits out: the server is unavailable, and said
     * when.
     */
    RETRY_AFTER,
    /**
     * A 4xx (429, or another the policy retries, such as GitHub's 403) with a {@code Retry-After},
     * or a refusal whose published quota is spent, waited out to its reset: the server is working
     * and paces this client; the pacers space such retries.
     */
    THROTTLED,
    /**
     * An HTTP/2 stream the server refused ({@code REFUSED_STREAM}, also after a GOAWAY): a live
     * server says it never processed the request, as gRPC's "transparent" retries count it.
     */
    REFUSED
  }

  /** What {@link #payForRetry} did. */
  public enum Payment {
    /** Paid for: send it. */
    PAID,
    /**
     * Not paid yet: the retries paid since the origin last answered a call already add up to one
     * call's {@code maxRetries}. The retry waits its backoff as it would anyway; if by then the
     * origin has answered a call ({@link Streak#ended}) it goes, paid for then ({@link #payHeld});
     * if not, it is not sent. Nothing was taken.
     */
    HELD,
    /** Not paid: under the strict rule, nothing has succeeded yet. Nothing was taken. */
    NO_RECENT_SUCCESS,
    /** Not paid: neither the balance nor the reserve holds its cost. Nothing was taken. */
    NO_TOKENS
  }

  /**
   * Pays for one retry about to be scheduled, by {@code RetryBudget}'s rules: counted on its
   * origin's {@code streak} as {@link #halves} says, up to one failing call's worth (past that,
   * {@link Payment#HELD}), and its cost taken from the balance, or else from the reserve. Take back
   * with {@link #refund} a retry that is not sent.
   *
   * @param streak the open streak of the origin the retry goes to ({@link #streak})
   * @param kind what the retry follows
   * @param maxRetries the asking call's {@code maxRetries}: how many retries one failing call may
   *     make
   * @param nowNanos the monotonic time, for the reserve's refill
   */
  public Payment payForRetry(
      Streak streak, Kind kind, long priceMilli, int maxRetries, long nowNanos) {
    if (!retryBeforeFirstSuccess && !serverSaidWhen(kind) && !succeeded)
      return Payment.NO_RECENT_SUCCESS;
    long halves = halves(kind);
    if (halves > 0) {
      synchronized (streaks) {
        if (!streak.ended && streak.halves + halves > 2L * maxRetries) return Payment.HELD;
        streak.halves += halves;
      }
    }
    if (withdraw(priceMilli, nowNanos)) return Payment.PAID;
    uncount(streak, halves);
    return Payment.NO_TOKENS;
  }

  /**
   * What a retry of {@code kind} costs now, in thousandths of a token, to hand to {@link
   * #payForRetry} and back with the retry ({@link #refund}, {@link #paidBack}): half a retry's cost
   * for one that waits out a server's wait; {@code timeoutCostMilli} for one after a timeout while
   * failures are common ({@link #failuresAreCommon}); else a retry's cost.
   */
  public long price(Kind kind) {
    if (serverSaidWhen(kind)) return retryAfterCostMilli;
    return kind == Kind.TIMEOUT && failuresAreCommon() ? timeoutCostMilli : retryCostMilli;
  }

  private static boolean serverSaidWhen(Kind kind) {
    return kind == Kind.RETRY_AFTER || kind == Kind.THROTTLED;
  }

  /**
   * What a retry of {@code kind} counts on its origin's streak, in halves. A throttled client's
   * retries count nothing: the server works, and its pacing bounds them (a burst against a rate
   * limiter meets its refusals after its successes, and would otherwise lose all but a few). Nor
   * does a retry of a refused stream: the server is alive and never saw the request.
   */
  private static long halves(Kind kind) {
    return kind == Kind.THROTTLED || kind == Kind.REFUSED ? 0 : kind == Kind.RETRY_AFTER ? 1 : 2;
  }

  /**
   * A retry of {@code kind} that {@link #payForRetry} paid {@code priceMilli} for is not sent after
   * all: its price, and its count on {@code streak}, are given back.
   */
  public void refund(Kind kind, long priceMilli, Streak streak) {
    giveBack(priceMilli);
    uncount(streak, halves(kind));
  }

  /**
   * A retry paid {@code priceMilli} for was answered with a success: while failures are rare, its
   * price comes back, as the AWS SDKs give back a retry's cost when it succeeds. A lossy link's
   * retries mostly succeed and so cost little; in an outage or an overload, where failures are
   * common, retries are paid for in full.
   */
  public void paidBack(long priceMilli) {
    if (!failuresAreCommon()) giveBack(priceMilli);
  }

  private void giveBack(long priceMilli) {
    // Back to the balance even if the reserve paid: a small gift, never past the capacity.
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + priceMilli)))
        return;
    }
  }

  private void uncount(Streak streak, long halves) {
    synchronized (streaks) {
      streak.halves = Math.max(0, streak.halves - halves);
    }
  }

  /**
   * Takes one retry's cost from the balance, or else from the reserve, without the count since the
   * last success (a hedge's price); false if neither holds it, and then nothing is taken.
   *
   * @param honoursRetryAfter true for the cost of a retry that waits out a 429/503 {@code
   *     Retry-After}
   * @param nowNanos the monotonic time, for the reserve's refill
   */
  public boolean tryWithdraw(boolean honoursRetryAfter, long nowNanos) {
    return withdraw(honoursRetryAfter ? retryAfterCostMilli : retryCostMilli, nowNanos);
  }

  private boolean withdraw(long cost, long nowNanos) {
    for (long current = balanceMilli.get(); current >= cost; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, current - cost)) return true;
    }
    // The reserve keeps a rare caller's retries going; a timeout's in an overload is not one.
    if (cost >= timeoutCostMilli && cost > retryCostMilli) return false;
    return tryWithdrawReserve(cost, nowNanos);
  }

  private synchronized boolean tryWithdrawReserve(long cost, long nowNanos) {
    if (reservePerSecond == 0) return false;
    // It refills from its first use, reservePerSecond thousandths of a token per millisecond
    // (computed without overflow); its clock moves on only when something was added.
    long elapsed = reserveStarted ? Math.max(0, nowNanos - reserveRefilledAtNanos) : 0;
    long refill =
        elapsed >= NANOS_PER_SECOND ? reserveCapMilli : elapsed * reservePerSecond / 1_000_000L;
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
