package io.github.okretry;

import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * What a driver does next for one logical call, one of five, as {@link LogicalCall} decides it:
 * {@linkplain Kind#SEND send} an attempt, {@linkplain Kind#WAIT wait} (then ask again), {@linkplain
 * Kind#RETURN return} a response, or {@linkplain Kind#THROW throw}; with hedges also {@linkplain
 * Kind#DROP drop} an attempt whose outcome does not end the call, or a hedge. The driver acts on it
 * and never works out a reason itself. The steps of a successful call cost nothing: a SEND is the
 * {@link Attempt} itself (one per call, reused by each attempt; a first attempt made without state
 * has no step: {@link LogicalCall#open}), RETURN one constant for all; only failure paths and waits
 * allocate a step ({@code CallOverheadBenchmark}'s {@code okretry-call-timeout} measures a success
 * with per-call state). Only {@link Attempt} extends it.
 */
class Step {

  /** The five kinds of step. */
  enum Kind {
    SEND,
    WAIT,
    RETURN,
    THROW,
    /**
     * Only with hedges (the async driver): close any response in hand and forget this attempt, as
     * another attempt of the call still in flight decides; or send no hedge now.
     */
    DROP
  }

  /** Return the response in hand (of the attempt that just ended), as it is. */
  static final Step RETURN = new Other(Kind.RETURN, null, null, false, null);

  /**
   * Drop the attempt that just ended (another in flight answers for the call), or the hedge asked
   * for.
   */
  static final Step DROP = new Other(Kind.DROP, null, null, false, null);

  private final Kind kind;

  /** A SEND: an {@link Attempt} (send it, then hand its outcome to {@link LogicalCall#ended}). */
  Step() {
    this.kind = Kind.SEND;
  }

  private Step(Kind kind) {
    this.kind = kind;
  }

  /** A WAIT: how long. */
  private static final class Wait extends Step {
    final long waitNanos;

    Wait(long waitNanos) {
      super(Kind.WAIT);
      if (waitNanos < 0) throw new IllegalArgumentException("waitNanos < 0: " + waitNanos);
      this.waitNanos = waitNanos;
    }
  }

  /**
   * A RETURN, THROW or DROP: the end of the call or of an attempt, with what the caller gets. Apart
   * from the SEND and the WAIT, so that neither carries these fields.
   */
  private static final class Other extends Step {
    final @Nullable Response response;
    final @Nullable Throwable failure;
    final boolean timedOut;
    final RetryOutcome.@Nullable Mark mark; // a RETURN whose response must carry its call's outcome

    Other(
        Kind kind,
        @Nullable Response response,
        @Nullable Throwable failure,
        boolean timedOut,
        RetryOutcome.@Nullable Mark mark) {
      super(kind);
      this.response = response;
      this.failure = failure;
      this.timedOut = timedOut;
      this.mark = mark;
    }
  }

  /** Close any response in hand, wait {@code waitNanos}, then ask {@link LogicalCall#next}. */
  static Step waitFor(long waitNanos) {
    return new Wait(waitNanos);
  }

  /**
   * Close any response in hand and throw {@code failure}; {@code timedOut}: the call ran out of
   * time ({@link #timedOut}).
   */
  static Step throwing(Throwable failure, boolean timedOut) {
    return new Other(Kind.THROW, null, failure, timedOut, null);
  }

  /**
   * Return {@code local}, a response okretry made standing for the origin's ({@link
   * OriginTurn#admit}): nothing was sent.
   */
  static Step returning(Response local) {
    return new Other(Kind.RETURN, local, null, false, null);
  }

  /**
   * As {@code returned} (a RETURN: {@link #RETURN}, or of a local response), the response the
   * caller gets carrying {@code mark}: rebuilt with it unless its request has it ({@link
   * RetryOutcome.Mark#onto}).
   */
  static Step returningMarked(Step returned, RetryOutcome.Mark mark) {
    return new Other(Kind.RETURN, returned.responseOr(null), null, false, mark);
  }

  final Kind kind() {
    return kind;
  }

  /** For {@link Kind#WAIT}: how long; else 0. */
  final long waitNanos() {
    return this instanceof Wait ? ((Wait) this).waitNanos : 0;
  }

  /**
   * For {@link Kind#RETURN}: the response to return, {@code inHand} unless okretry made one (the
   * driver then closes {@code inHand}, as every step but a RETURN of it does).
   */
  final @Nullable Response responseOr(@Nullable Response inHand) {
    Response local = this instanceof Other ? ((Other) this).response : null;
    return local != null ? local : inHand;
  }

  /**
   * The one rule for the response in hand ({@code inHand}, or null) at this step: a RETURN gives
   * the caller the response it names ({@link #responseOr}) and closes the other one, if any; every
   * other step closes it, since no step keeps a response through a wait or past a dropped attempt.
   *
   * @return what the caller gets for a RETURN; null for every other step
   */
  final @Nullable Response settle(@Nullable Response inHand) {
    Response out = kind == Kind.RETURN ? responseOr(inHand) : null;
    if (inHand != null && inHand != out) inHand.close();
    RetryOutcome.Mark mark = this instanceof Other ? ((Other) this).mark : null;
    return out != null && mark != null ? mark.onto(out) : out;
  }

  /**
   * For {@link Kind#THROW}: what the caller gets, with earlier failures attached as suppressed. An
   * {@link java.io.IOException}, or what a layer below okretry threw as it is (unchecked, or a
   * checked exception Kotlin code threw undeclared).
   */
  final Throwable failure() {
    Throwable failure = this instanceof Other ? ((Other) this).failure : null;
    if (failure == null) throw new IllegalStateException("not a THROW: " + this);
    return failure;
  }

  /**
   * True if this step ends the call: a {@link Kind#RETURN} or {@link Kind#THROW}. Any other goes
   * on: a SEND or WAIT retries, a DROP leaves the call to an attempt still in flight.
   */
  final boolean ends() {
    return kind == Kind.RETURN || kind == Kind.THROW;
  }

  /**
   * For {@link Kind#THROW}: true if the call gave up because its time ran out (okretry's deadline
   * or OkHttp's call timeout); the driver then reports the call as canceled, as OkHttp reports a
   * call whose timeout fired. False for every other step.
   */
  final boolean timedOut() {
    return this instanceof Other && ((Other) this).timedOut;
  }

  @Override
  public final String toString() {
    switch (kind) {
      case SEND:
        return "SEND";
      case WAIT:
        return "WAIT(" + waitNanos() + " ns)";
      case DROP:
        return "DROP";
      case RETURN:
        Response local = responseOr(null);
        return local != null ? "RETURN(local " + local.code() + ")" : "RETURN";
      default:
        return "THROW(" + failure() + (timedOut() ? ", timed out)" : ")");
    }
  }
}
