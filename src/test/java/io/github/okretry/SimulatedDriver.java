package io.github.okretry;

import io.github.okretry.internal.OriginStreaks;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.TokenBalance;
import io.github.okretry.internal.WallClock;
import java.io.IOException;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Plays the blocking driver's part for a simulator on fake time: feeds one logical call the
 * outcomes of its attempts and turns okretry's {@link Step}s into "send", "wait" or "done", as
 * {@link RetryInterceptor#intercept} does (a stateless first attempt when {@link LogicalCall#open}
 * allows it, then {@code next} and {@code ended}). Every rule (classification, backoff, {@code
 * Retry-After}, the budget, the origin gate and pacer) runs in okretry's own code; this class only
 * carries the steps out.
 *
 * <p>A peer's budget can veto what okretry decided ({@link Veto}), so the peers in the simulator
 * share okretry's per-call sequence and differ only in the budget.
 *
 * <p>With a {@link HedgingPolicy}, a call is driven as {@link AsyncLoop} drives a hedging
 * factory's: it always has its state (no stateless first attempt); each SEND carries the delay of a
 * hedge ({@link Call#hedgeAfterNanos}), and when that time comes {@link Call#hedge} asks {@code
 * next} again and, for a hedge, {@code departs} at once, sending what goes beside the attempt in
 * flight; each attempt's outcome is reported with its {@link Sent} handle, and {@link Next#DROP}
 * says that outcome was dropped (another attempt answers for the call). On any other answer the
 * round is over: the simulator cancels the attempts still in flight.
 */
public final class SimulatedDriver {

  /** What the driver does next. */
  public enum Next {
    SEND,
    WAIT,
    DONE,
    /**
     * Only with hedges: this attempt's outcome was dropped; another attempt in flight answers for
     * the call.
     */
    DROP
  }

  /** An attempt in flight, by which its outcome is reported (one of several, with hedges). */
  public static final class Sent {
    private final @Nullable Attempt attempt; // null for a first attempt made without state
    private final int number;

    private Sent(@Nullable Attempt attempt, int number) {
      this.attempt = attempt;
      this.number = number;
    }

    /** 1 for the first attempt of the call, counting hedges and retries alike. */
    public int number() {
      return number;
    }
  }

  /** A peer's budget, consulted around okretry's own decisions (run with an unlimited budget). */
  public interface Veto {
    /**
     * Before attempt {@code attempt} (1 for the first): false sheds it locally, ending the call.
     */
    boolean admit(long nowNanos, int attempt);

    /** okretry decided to retry after a failed attempt: false refuses the retry. */
    boolean allowRetry(long nowNanos, Failure failure);

    /** Attempt {@code attempt} reached the server and ended: success or not. */
    void attemptEnded(long nowNanos, int attempt, boolean success, @Nullable Failure failure);
  }

  /** How an attempt failed, as a peer's budget tells them apart. */
  public enum Failure {
    ERROR,
    THROTTLED,
    TIMEOUT
  }

  /** A policy with the simulator's time, wall clock and randomness. */
  public static RetryPolicy.Builder seams(
      RetryPolicy.Builder builder, TimeSource time, WallClock clock, RandomSource random) {
    return builder.timeSource(time).clock(clock).random(random);
  }

  /** A budget built with other numbers than the defaults (candidates, ablations). */
  public static RetryBudget budget(
      TokenBalance tokens, OriginStreaks streaks, int downAfterSchedules, long timeoutCostMilli) {
    return RetryBudget.over(tokens, streaks, downAfterSchedules, timeoutCostMilli);
  }

  private final RetryPolicy policy;
  private final Hedging.@Nullable Shared hedging; // a factory's, as RetryingCallFactory keeps it
  private final String url; // the calls' origin unless start(url) names another
  private final @Nullable Veto veto;
  private final int retryAfterSeconds;
  private final java.util.Map<String, Target> targets = new java.util.HashMap<>();

  /**
   * @param retryAfterSeconds the {@code Retry-After} a failing 503 carries, or negative for none
   */
  public SimulatedDriver(
      RetryPolicy policy, String url, @Nullable Veto veto, int retryAfterSeconds) {
    this(policy, null, url, veto, retryAfterSeconds);
  }

  /**
   * @param hedging hedges the calls as a {@link RetryingCallFactory} with it does, or null for none
   * @param retryAfterSeconds the {@code Retry-After} a failing 503 carries, or negative for none
   */
  public SimulatedDriver(
      RetryPolicy policy,
      @Nullable HedgingPolicy hedging,
      String url,
      @Nullable Veto veto,
      int retryAfterSeconds) {
    if (veto != null && hedging != null) {
      throw new IllegalArgumentException("a peer's veto with hedging");
    }
    this.policy = policy;
    this.hedging = hedging != null ? new Hedging.Shared(hedging) : null;
    this.url = url;
    this.veto = veto;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** One URL's request and the responses the simulator hands back for it, made once. */
  private final class Target {
    final Request request;
    final Response ok;
    final Response cached; // as OkHttp's cache serves it: no network response
    final Response failed;
    final @Nullable Response failedWithRetryAfter;

    Target(String url) {
      request = policy.keys.stamp(new Request.Builder().url(url).build());
      ok = response(200, -1);
      cached = ok.newBuilder().cacheResponse(ok).build();
      failed = response(503, -1);
      failedWithRetryAfter = retryAfterSeconds >= 0 ? response(503, retryAfterSeconds) : null;
    }

    private Response response(int code, int retryAfterSeconds) {
      Response.Builder b =
          new Response.Builder()
              .request(request)
              .protocol(Protocol.HTTP_1_1)
              .code(code)
              .message("");
      if (retryAfterSeconds >= 0) b.header("Retry-After", Integer.toString(retryAfterSeconds));
      return b.build();
    }
  }

  /** A new logical call. */
  public Call start() {
    return start(url);
  }

  /** A new logical call to {@code url} (another origin, or another path of the same). */
  public Call start(String url) {
    return new Call(targets.computeIfAbsent(url, Target::new));
  }

  /** One logical call, driven step by step. */
  public final class Call {
    private @Nullable LogicalCall logical;
    private @Nullable Sent sent; // the attempt sent last
    private int attempt;
    private long waitNanos;
    private long hedgeAfterNanos; // of the latest SEND
    private boolean succeeded;
    private @Nullable GiveUpReason reason;

    // A first attempt made without state: its deadline runs from here
    private final long startNanos;
    private final Target target;
    private final Request request;

    private Call(Target target) {
      this.target = target;
      this.request = target.request;
      startNanos = policy.time.nanoTime();
      // A call that may hedge has its state from the start, as the async driver's has.
      logical =
          hedging != null
              ? LogicalCall.start(policy, request, 0, hedging)
              : LogicalCall.open(policy, request, 0);
    }

    /**
     * Before an attempt: {@link Next#SEND}, {@link Next#WAIT} ({@link #waitNanos}) or {@link
     * Next#DONE}.
     */
    public Next next() {
      Step step = null;
      if (logical != null) {
        step = logical.next(null);
        if (step.kind() == Step.Kind.WAIT) {
          waitNanos = step.waitNanos();
          return Next.WAIT;
        }
        if (step.kind() != Step.Kind.SEND) {
          return done(false, logical.gaveUpFor()); // throttled locally
        }
      }
      if (veto != null && !veto.admit(policy.time.nanoTime(), attempt + 1)) {
        return done(false, GiveUpReason.BUDGET_EXHAUSTED);
      }
      attempt++;
      sent = new Sent(step != null ? Attempt.of(step) : null, attempt);
      hedgeAfterNanos = step != null ? Attempt.of(step).hedgeAfterNanos : 0;
      return Next.SEND;
    }

    /**
     * The attempt sent last (by {@link #next} or {@link #hedge}): the handle to report its outcome
     * with.
     */
    public Sent sent() {
      Sent s = sent;
      if (s == null) throw new IllegalStateException("nothing sent");
      return s;
    }

    /**
     * After a SEND or a hedge: nanoseconds until a hedge is due, 0 for none (okretry's {@code
     * Attempt.hedgeAfterNanos}).
     */
    public long hedgeAfterNanos() {
      return hedgeAfterNanos;
    }

    /**
     * A hedge's time came: the hedge to send beside the attempts in flight, or null if okretry
     * sends none now.
     */
    public @Nullable Sent hedge() {
      LogicalCall call = logical;
      Step due = call != null ? call.next(null) : Step.DROP;
      // The simulated client queues nothing: a hedge handed over leaves at once, as it is due.
      Step went = due.kind() == Step.Kind.SEND ? call.departs(Attempt.of(due)) : Step.DROP;
      if (went.kind() != Step.Kind.SEND) return null;
      attempt++;
      hedgeAfterNanos = Attempt.of(went).hedgeAfterNanos;
      return sent = new Sent(Attempt.of(went), attempt);
    }

    /** The attempt was answered: 200, or the failing 503 (with the driver's Retry-After if any). */
    public Next answered(boolean success) {
      return answered(sent(), success);
    }

    /**
     * Attempt {@code leg} was answered: 200, or the failing 503 (with the driver's Retry-After if
     * any).
     */
    public Next answered(Sent leg, boolean success) {
      Response withRetryAfter = target.failedWithRetryAfter;
      Response response =
          success ? target.ok : withRetryAfter != null ? withRetryAfter : target.failed;
      if (veto != null) {
        veto.attemptEnded(
            policy.time.nanoTime(),
            leg.number,
            success,
            success ? null : withRetryAfter != null ? Failure.THROTTLED : Failure.ERROR);
      }
      return ended(
          leg, response, null, success, withRetryAfter != null ? Failure.THROTTLED : Failure.ERROR);
    }

    /**
     * The attempt was answered from OkHttp's cache: a 200 without a network response, nothing
     * reached the server.
     */
    public Next answeredFromCache() {
      return ended(sent(), target.cached, null, true, Failure.ERROR);
    }

    /**
     * The attempt was answered {@code code} with {@code headers} (a server that publishes its
     * quota, or any other answer the simulator makes up); {@code failure} as a peer's budget would
     * count a failed one.
     */
    public Next answered(int code, okhttp3.Headers headers, Failure failure) {
      Response response =
          new Response.Builder()
              .request(request)
              .protocol(Protocol.HTTP_1_1)
              .code(code)
              .message("")
              .headers(headers)
              .build();
      boolean success = code < 400;
      if (veto != null) {
        veto.attemptEnded(policy.time.nanoTime(), attempt, success, success ? null : failure);
      }
      return ended(sent(), response, null, success, failure);
    }

    /** The attempt failed with {@code error} (a timeout, a refused connection). */
    public Next failed(IOException error, Failure failure) {
      return failed(sent(), error, failure);
    }

    /** Attempt {@code leg} failed with {@code error} (a timeout, a refused connection). */
    public Next failed(Sent leg, IOException error, Failure failure) {
      if (veto != null) veto.attemptEnded(policy.time.nanoTime(), leg.number, false, failure);
      return ended(leg, null, error, false, failure);
    }

    private Next ended(
        Sent leg,
        @Nullable Response response,
        @Nullable IOException error,
        boolean success,
        Failure failure) {
      Attempt a = leg.attempt;
      Step step;
      if (a == null || logical == null) {
        // The interceptor's stateless first attempt: a success ends here, a failure makes the
        // state.
        logical = LogicalCall.firstEnded(policy, request, startNanos, response, error, 0);
        if (logical == null) return done(true, null);
        step = logical.next(null);
      } else {
        step = logical.ended(a, response, error, 0);
        if (step.kind() == Step.Kind.DROP) return Next.DROP;
      }
      if (step.kind() == Step.Kind.WAIT) {
        if (veto != null && !veto.allowRetry(policy.time.nanoTime(), failure)) {
          return done(false, GiveUpReason.BUDGET_EXHAUSTED);
        }
        waitNanos = step.waitNanos();
        return Next.WAIT;
      }
      return done(success && step.kind() == Step.Kind.RETURN, logical.gaveUpFor());
    }

    private Next done(boolean ok, @Nullable GiveUpReason why) {
      succeeded = ok;
      reason = why;
      return Next.DONE;
    }

    public long waitNanos() {
      return waitNanos;
    }

    /** Attempts sent so far, counting the first. */
    public int attempts() {
      return attempt;
    }

    public boolean succeeded() {
      return succeeded;
    }

    public @Nullable GiveUpReason reason() {
      return reason;
    }
  }
}
