package io.github.okretry;

import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.RetryTokenBucket;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.WallClock;
import java.io.IOException;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Plays the blocking driver's part for a simulator on fake time: feeds one logical call the
 * outcomes of its attempts and turns okretry's {@link Step}s into "send", "wait" or "done", as
 * {@link RetryInterceptor#intercept} does (a stateless first attempt when {@link
 * LogicalCall#open} allows it, then {@code next} and {@code ended}). Every rule (classification,
 * backoff, {@code Retry-After}, the budget, the origin gate and pacer) runs in okretry's own code;
 * this class only carries the steps out.
 *
 * <p>A peer's budget can veto what okretry decided ({@link Veto}), so the peers in the simulator
 * share okretry's per-call sequence and differ only in the budget.
 */
public final class SimulatedDriver {

  /** What the driver does next. */
  public enum Next {
    SEND,
    WAIT,
    DONE
  }

  /** A peer's budget, consulted around okretry's own decisions (run with an unlimited budget). */
  public interface Veto {
    /** Before attempt {@code attempt} (1 for the first): false sheds it locally, ending the call. */
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

  /** A budget over a bucket built with other numbers than the defaults (candidates, ablations). */
  public static RetryBudget budget(RetryTokenBucket bucket) {
    return RetryBudget.over(bucket);
  }

  private final RetryPolicy policy;
  private final Request request;
  private final @Nullable Veto veto;
  private final Response ok;
  private final Response failed;
  private final @Nullable Response failedWithRetryAfter;

  /**
   * @param retryAfterSeconds the {@code Retry-After} a failing 503 carries, or negative for none
   */
  public SimulatedDriver(RetryPolicy policy, String url, @Nullable Veto veto, int retryAfterSeconds) {
    this.policy = policy;
    this.request = policy.keys.stamp(new Request.Builder().url(url).build());
    this.veto = veto;
    this.ok = response(200, -1);
    this.failed = response(503, -1);
    this.failedWithRetryAfter = retryAfterSeconds >= 0 ? response(503, retryAfterSeconds) : null;
  }

  private Response response(int code, int retryAfterSeconds) {
    Response.Builder b = new Response.Builder().request(request).protocol(Protocol.HTTP_1_1).code(code).message("");
    if (retryAfterSeconds >= 0) b.header("Retry-After", Integer.toString(retryAfterSeconds));
    return b.build();
  }

  /** A new logical call. */
  public Call start() {
    return new Call();
  }

  /** One logical call, driven step by step. */
  public final class Call {
    private @Nullable LogicalCall logical;
    private @Nullable Attempt sent; // null for a first attempt made without state
    private int attempt;
    private long waitNanos;
    private boolean succeeded;
    private @Nullable GiveUpReason reason;

    private final long startNanos; // a first attempt made without state: its deadline runs from here

    private Call() {
      startNanos = policy.time.nanoTime();
      logical = LogicalCall.open(policy, request, 0);
    }

    /** Before an attempt: {@link Next#SEND}, {@link Next#WAIT} ({@link #waitNanos}) or {@link Next#DONE}. */
    public Next next() {
      Step step = null;
      if (logical != null) {
        step = logical.next(null);
        if (step.kind() == Step.Kind.WAIT) {
          waitNanos = step.waitNanos();
          return Next.WAIT;
        }
        if (step.kind() != Step.Kind.SEND) return done(false, logical.gaveUpFor()); // throttled locally
      }
      if (veto != null && !veto.admit(policy.time.nanoTime(), attempt + 1)) return done(false, GiveUpReason.BUDGET_EXHAUSTED);
      attempt++;
      sent = step != null ? step.attempt() : null;
      return Next.SEND;
    }

    /** The attempt was answered: 200, or the failing 503 (with the driver's Retry-After if any). */
    public Next answered(boolean success) {
      Response response = success ? ok : failedWithRetryAfter != null ? failedWithRetryAfter : failed;
      if (veto != null) {
        veto.attemptEnded(policy.time.nanoTime(), attempt, success, success ? null : failedWithRetryAfter != null ? Failure.THROTTLED : Failure.ERROR);
      }
      return ended(response, null, success, failedWithRetryAfter != null ? Failure.THROTTLED : Failure.ERROR);
    }

    /**
     * The attempt was answered {@code code} with {@code headers} (a server that publishes its
     * quota, or any other answer the simulator makes up); {@code failure} as a peer's budget
     * would count a failed one.
     */
    public Next answered(int code, okhttp3.Headers headers, Failure failure) {
      Response response = new Response.Builder().request(request).protocol(Protocol.HTTP_1_1).code(code).message("")
          .headers(headers).build();
      boolean success = code < 400;
      if (veto != null) veto.attemptEnded(policy.time.nanoTime(), attempt, success, success ? null : failure);
      return ended(response, null, success, failure);
    }

    /** The attempt failed with {@code error} (a timeout, a refused connection). */
    public Next failed(IOException error, Failure failure) {
      if (veto != null) veto.attemptEnded(policy.time.nanoTime(), attempt, false, failure);
      return ended(null, error, false, failure);
    }

    private Next ended(@Nullable Response response, @Nullable IOException error, boolean success, Failure failure) {
      Attempt a = sent;
      Step step;
      if (a == null || logical == null) {
        // The interceptor's stateless first attempt: a success ends here, a failure makes the state.
        logical = LogicalCall.afterStatelessAttempt(policy, request, startNanos, response, error, 0);
        if (logical == null) return done(true, null);
        step = logical.next(null);
      } else {
        step = logical.ended(a, response, error, 0);
      }
      if (step.kind() == Step.Kind.WAIT) {
        if (veto != null && !veto.allowRetry(policy.time.nanoTime(), failure)) return done(false, GiveUpReason.BUDGET_EXHAUSTED);
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
