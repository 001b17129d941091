package io.github.okretry;

import io.github.okretry.internal.AttemptFacts;
import io.github.okretry.internal.CallDeadline;
import io.github.okretry.internal.CallTimeouts;
import io.github.okretry.internal.Classifier;
import io.github.okretry.internal.Decision;
import io.github.okretry.internal.FailureHistory;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.PacedCall;
import io.github.okretry.internal.RepeatSafety;
import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.SendTracker;
import java.io.IOException;
import java.io.InterruptedIOException;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One logical call under a {@link RetryPolicy}: its state across attempts (the request with its
 * key, the attempt count, the deadline, the previous wait, earlier failures) and every decision
 * about it. A driver asks {@link #next} before an attempt and after a wait, and hands each
 * attempt's outcome to {@link #ended}, with what it saw as flags ({@link #CALLER_CANCELED} …);
 * both answer with a {@link Step}, never a reason. It reports each event to the policy's {@link
 * Events} but does no I/O: it never sends, closes, sleeps or throws. Not thread-safe: one logical
 * call is driven by one thread at a time.
 */
final class LogicalCall {

  /** Seen by the driver: the caller canceled (behind the interceptor: its one call was canceled). */
  static final int CALLER_CANCELED = 1;
  /** Seen by the driver: the attempt's OkHttp call was canceled, by whomever. */
  static final int ATTEMPT_CANCELED = 2;
  /** Seen by the driver: its {@link DeadlineWatch} cut the attempt. */
  static final int WATCH_FIRED = 4;
  /** Seen by the driver: its thread is interrupted. */
  static final int INTERRUPTED = 8;

  private final RetryPolicy policy;
  private final Request request;
  private final int maxRetries;
  private final CallDeadline deadline;
  private final boolean repeatableBody;
  private final boolean idempotent;
  private final boolean needsTracker;
  private final PacedCall paced; // this call's part in its origin's pacing

  private int attempts;
  private long previousDelayNanos;
  private @Nullable FailureHistory earlier; // bounded: the first and the last few
  private @Nullable String lastFailure;
  private @Nullable Attempt attempt; // one reused: attempts follow one another
  private @Nullable Step decided; // on an attempt made without state, for the first next()
  // What classify() found out about the attempt that just ended.
  private boolean retryable;
  private boolean provenUnprocessed;
  private long retryAfterNanos;

  private LogicalCall(
      RetryPolicy policy, Request request, @Nullable RetryOverrides overrides, long callTimeoutNanos) {
    this.policy = policy;
    this.request = request;
    // Overrides are read here and in canDefer(), from one ownDeadlineNanos().
    this.maxRetries =
        overrides != null && overrides.maxRetries >= 0 ? overrides.maxRetries : policy.maxRetries();
    this.deadline = CallDeadline.of(policy.time.nanoTime(), ownDeadlineNanos(policy, overrides), callTimeoutNanos);
    this.repeatableBody = RepeatSafety.repeatableBody(request.body());
    this.idempotent = RepeatSafety.idempotent(request.method(), policy.keys.hasKey(request));
    this.needsTracker =
        RepeatSafety.needsSendProof(repeatableBody, idempotent, maxRetries) || policy.events.hasListener();
    this.previousDelayNanos = policy.baseDelayNanos();
    this.paced = new PacedCall(policy.originGate, policy.time);
  }

  /**
   * A logical call for {@code request} (stamped with its key), or null if its first attempt needs
   * nothing from okretry: no deadline to start, no origin state to consult or report to, no
   * listener, no send to track and no OkHttp retry to turn off. The driver then makes that attempt
   * with no state at all and hands its outcome to {@link #afterStatelessAttempt}, so the common
   * success allocates nothing here.
   *
   * @param callTimeoutNanos OkHttp's timeout for the whole call, 0 for none; it started a moment
   *     before this is called
   */
  static @Nullable LogicalCall open(RetryPolicy policy, Request request, long callTimeoutNanos) {
    RetryOverrides overrides = RequestTags.overrides(request);
    if (callTimeoutNanos == 0 && ownDeadlineNanos(policy, overrides) == 0
        && policy.originGate.size() == 0 && !policy.events.hasListener()
        && RepeatSafety.idempotent(request.method(), policy.keys.hasKey(request))) {
      return null;
    }
    return new LogicalCall(policy, request, overrides, callTimeoutNanos);
  }

  /** A logical call for {@code request}, always with its state (the async driver's way in). */
  static LogicalCall start(RetryPolicy policy, Request request, long callTimeoutNanos) {
    return new LogicalCall(policy, request, RequestTags.overrides(request), callTimeoutNanos);
  }

  /**
   * After a first attempt made without state ({@link #open} returned null): null if {@code
   * response} ends the call as it is, by its status alone (this deposits into the budget, as any
   * first success does); else the logical call, whose first {@link #next} answers for that attempt.
   */
  static @Nullable LogicalCall afterStatelessAttempt(
      RetryPolicy policy, Request request, @Nullable Response response, @Nullable IOException error, int seen) {
    if (response != null && depositIfDone(policy, response)) return null;
    LogicalCall call = new LogicalCall(policy, request, RequestTags.overrides(request), 0);
    call.attempts = 1;
    call.decided = call.ended(call.attemptHandle(), response, error, seen);
    return call;
  }

  /** True, after a deposit into the budget, if {@code response} ends the call by status alone. */
  private static boolean depositIfDone(RetryPolicy policy, Response response) {
    if (policy.classifier.isRetryableStatus(response.code()) || policy.classifier.hasResponsePredicate()) {
      return false;
    }
    policy.budget.deposit();
    return true;
  }

  /** The one reading of the overrides' deadline: okretry's own budget, 0 for none. */
  private static long ownDeadlineNanos(RetryPolicy policy, @Nullable RetryOverrides overrides) {
    return overrides != null && overrides.deadlineNanos > 0 ? overrides.deadlineNanos : policy.deadlineNanos();
  }

  /**
   * What to do before an attempt: at the start and after each wait. {@code waitEndedBy} is what
   * ended the wait early (a cancel, an interrupt, a close), or null if it ran its course.
   */
  Step next(@Nullable IOException waitEndedBy) {
    Step d = decided;
    if (d != null) {
      decided = null;
      return d;
    }
    long now = policy.time.nanoTime();
    if (waitEndedBy != null) return waitEnded(waitEndedBy, now);
    if (policy.originWideRetryAfter()) {
      OriginGate.Closed closed = policy.originGate.check(request.url(), now);
      if (closed != null) return heldAtGate(closed, now);
    }
    long turn = paced.turnNanos();
    if (turn > 0) return Step.waitFor(turn);
    attempts++;
    paced.sending(request.url());
    policy.events.attemptStarted(request, attempts);
    return attemptHandle().send;
  }

  private Attempt attemptHandle() {
    Attempt a = attempt;
    if (a == null) attempt = a = new Attempt();
    a.number = attempts;
    return a;
  }

  /** The origin asked every caller to wait: wait with it, or answer locally if this call cannot. */
  private Step heldAtGate(OriginGate.Closed closed, long now) {
    long wait = closed.notBeforeNanos() - now;
    long remaining = deadline.remainingNanos(now);
    if (wait > policy.maxRetryAfterNanos() || wait >= remaining) {
      policy.events.gaveUp(request, attempts, GiveUpReason.ORIGIN_THROTTLED, "HTTP " + closed.code() + " (origin)");
      return Step.throttled(request, closed.code(), wait, policy.clock.currentTimeMillis());
    }
    // A call held at the gate joins the crowd waiting on the origin: paced like a retry.
    if (!paced.isPaced()) {
      paced.waitOn(OriginGate.origin(request.url()), now + policy.rules.latestWaitNanos(wait, remaining));
    }
    return Step.waitFor(policy.rules.spreadUpward(wait, remaining, policy.random));
  }

  /** A wait ended early: by a cancel, an interrupt or a close, or past the deadline. */
  private Step waitEnded(IOException e, long now) {
    boolean pastDeadline = deadline.passed(now);
    GiveUpReason reason =
        pastDeadline ? GiveUpReason.DEADLINE_EXCEEDED
            : e instanceof InterruptedIOException ? GiveUpReason.INTERRUPTED
            : GiveUpReason.CANCELED;
    String failure = lastFailure != null ? lastFailure : pastDeadline ? "deadline" : Events.describe(null, e);
    return giveUp(reason, failure, pastDeadline ? CallTimeouts.deadlineTimeout(e) : e);
  }

  /**
   * What to do after {@code attempt} ended with {@code response} or {@code error}; {@code seen}
   * is what the driver saw ({@link #CALLER_CANCELED} | … , 0 for nothing). {@code error} is an
   * {@link IOException}, or what a layer below okretry threw unchecked.
   */
  Step ended(Attempt attempt, @Nullable Response response, @Nullable Throwable error, int seen) {
    try {
      return decide(attempt, response, error, seen);
    } catch (RuntimeException e) { // a bug: never a silent hang, nor a throw into OkHttp's thread
      return failedBelow(e, new IOException("okretry: retry decision failed", e));
    }
  }

  private Step decide(Attempt attempt, @Nullable Response response, @Nullable Throwable error, int seen) {
    Throwable below = thrownBelow(error, seen);
    if (below != null) return failedBelow(below, error);
    GiveUpReason cut = cutShort(response == null, seen);
    IOException e = (IOException) error;
    Step early = response != null ? classify(response) : classify(attempt, e, cut);
    if (early != null) return early;
    lastFailure = Events.describe(response, e);
    if (cut != null) {
      // Checked for responses too: a retry that cannot happen must not spend a budget token, and
      // the wait this response would lead to can no longer happen, so it ends as a wait would.
      return giveUp(cut, lastFailure,
          response == null ? e
              : cut == GiveUpReason.INTERRUPTED ? new InterruptedIOException("interrupted")
              : new IOException("Canceled"));
    }
    long remaining = deadline.remainingNanos(policy.time.nanoTime());
    boolean throttled = provenUnprocessed && retryAfterNanos != RetryAfter.ABSENT;
    AttemptFacts facts =
        AttemptFacts.attempt(attempts, maxRetries)
            .retryable(retryable)
            .safeToRepeat(RepeatSafety.safeToRepeat(repeatableBody, idempotent, provenUnprocessed))
            .retryAfterNanos(retryAfterNanos)
            .remainingNanos(remaining)
            .previousDelayNanos(previousDelayNanos)
            .build();
    Decision decision = policy.rules.decide(facts, policy.random);
    // A retry that waits out the server's own Retry-After costs the budget less (RetryBudget).
    if (decision.isRetry() && !policy.budget.tryWithdraw(throttled, policy.time.nanoTime())) {
      decision = Decision.giveUp(GiveUpReason.BUDGET_EXHAUSTED);
    }
    if (!decision.isRetry()) return giveUp(decision.reason(), lastFailure, e);
    return retryScheduled(response, e, decision.delayNanos(), throttled, remaining);
  }

  /**
   * Why the attempt was ended from outside, with one precedence for both drivers: a deadline (only
   * for an attempt that failed: a response in hand was decided in time), the caller's cancel,
   * another's cancel, an interrupt; or null if it ended by itself.
   */
  private @Nullable GiveUpReason cutShort(boolean failed, int seen) {
    boolean attemptCanceled = (seen & ATTEMPT_CANCELED) != 0;
    if (failed && ((seen & WATCH_FIRED) != 0 || attemptCanceled && deadline.passed(policy.time.nanoTime()))) {
      return GiveUpReason.DEADLINE_EXCEEDED; // a cancel by a deadline is the timeout it is
    }
    if ((seen & CALLER_CANCELED) != 0 || failed && attemptCanceled) return GiveUpReason.CANCELED;
    return (seen & INTERRUPTED) != 0 ? GiveUpReason.INTERRUPTED : null;
  }

  /**
   * What an interceptor or request body threw, if that is how the attempt ended: thrown as it is,
   * or, for a separate OkHttp call, as its AsyncCall reports it (it cancels the call and reports
   * {@code IOException("canceled due to " + t)} with {@code t} as its cause in OkHttp 5.5, as
   * suppressed before). A bug, not a cancel.
   */
  private static @Nullable Throwable thrownBelow(@Nullable Throwable error, int seen) {
    if (error == null) return null;
    if (!(error instanceof IOException)) return error;
    if ((seen & CALLER_CANCELED) != 0 || (seen & ATTEMPT_CANCELED) == 0) return null;
    String message = error.getMessage();
    if (message == null || !message.startsWith("canceled due to ")) return null;
    Throwable cause = error.getCause();
    if (cause != null && !(cause instanceof IOException)) return cause;
    for (Throwable t : error.getSuppressed()) {
      if (!(t instanceof IOException)) return t;
    }
    return null;
  }

  /** Classifies a response; returns the step if that alone ends the call, else null. */
  private @Nullable Step classify(Response response) {
    try {
      retryable = policy.classifier.isRetryable(response);
    } catch (RuntimeException e) {
      // An interceptor may throw only IOException; the response goes unread, so it is closed.
      return giveUp(GiveUpReason.NOT_RETRYABLE, "retryOnResponse predicate threw",
          new IOException("okretry: the retryOnResponse predicate threw", e));
    }
    provenUnprocessed = Classifier.provesNotProcessed(response);
    if (!retryable) {
      paced.answered(response, provenUnprocessed, RetryAfter.ABSENT);
      if (attempts == 1) policy.budget.deposit();
      policy.events.succeeded(request, response, attempts);
      return Step.RETURN;
    }
    retryAfterNanos = RetryAfter.delayNanos(response, policy.clock);
    paced.answered(response, provenUnprocessed, retryAfterNanos);
    if (provenUnprocessed && retryAfterNanos != RetryAfter.ABSENT && policy.originWideRetryAfter()) {
      // Never close the origin for longer than any call would wait: a hostile "68 years" would
      // otherwise lock every call out long after the server recovered. The origin closed is
      // the one that answered: after a redirect, not the one first asked.
      long now = policy.time.nanoTime();
      long closedFor = Math.min(retryAfterNanos, policy.maxRetryAfterNanos());
      policy.originGate.close(response.request().url(), now, now + closedFor, response.code());
    }
    return null;
  }

  /** Classifies an exception; returns the step if that alone ends the call, else null. */
  private @Nullable Step classify(Attempt attempt, IOException e, @Nullable GiveUpReason cut) {
    paced.answered(null, false, RetryAfter.ABSENT); // an exception says nothing of the pace
    retryAfterNanos = RetryAfter.ABSENT;
    if (cut == GiveUpReason.DEADLINE_EXCEEDED) {
      return giveUp(GiveUpReason.DEADLINE_EXCEEDED, Events.describe(null, e), CallTimeouts.deadlineTimeout(e));
    }
    if (cut == null && deadline.remainingNanos(policy.time.nanoTime()) <= 0) {
      // The attempt ran into the deadline through its shrunk timeouts.
      return giveUp(GiveUpReason.DEADLINE_EXCEEDED, Events.describe(null, e), e);
    }
    try {
      retryable = cut == null && policy.classifier.isRetryable(e);
    } catch (RuntimeException thrown) {
      IOException wrapped = new IOException("okretry: the retryOnException predicate threw", thrown);
      wrapped.addSuppressed(e);
      return giveUp(GiveUpReason.NOT_RETRYABLE, "retryOnException predicate threw", wrapped);
    }
    // Never sent (no network request's headers were completely written: e.g. a connection shut
    // down by GOAWAY before the stream opened), or refused unprocessed. Without a tracker the
    // request is idempotent, or cannot be repeated anyway.
    provenUnprocessed = attempt.provenNotSent() || Classifier.provesNotProcessed(e);
    return null;
  }

  /** Reports a retry and remembers what the next decision needs; the driver then waits. */
  private Step retryScheduled(
      @Nullable Response response, @Nullable IOException error, long delayNanos, boolean throttled, long remaining) {
    if (throttled && response != null) {
      // After its Retry-After this retry joins the origin's crowd, paced by the origin that
      // answered, within the same bounds as the spread: the ceiling, half the time left.
      paced.waitOn(
          OriginGate.origin(response.request().url()),
          policy.time.nanoTime() + policy.rules.latestWaitNanos(retryAfterNanos, remaining));
    }
    policy.events.retryScheduled(request, attempts, lastFailure, delayNanos);
    if (error != null) {
      if (earlier == null) earlier = new FailureHistory();
      earlier.add(error);
    }
    // Decorrelated jitter grows from its own previous draw; a server's Retry-After is not one.
    if (retryAfterNanos == RetryAfter.ABSENT) previousDelayNanos = delayNanos;
    return Step.waitFor(delayNanos);
  }

  /** The attempt ended in a bug below okretry (or in it): the call ends with {@code failure}. */
  private Step failedBelow(Throwable below, @Nullable Throwable failure) {
    Throwable last = failure instanceof IOException ? withHistory((IOException) failure) : below;
    lastFailure = Events.describe(null, below);
    policy.events.gaveUp(request, attempts, GiveUpReason.NOT_RETRYABLE, lastFailure);
    return Step.throwing(last);
  }

  /**
   * The call ends for {@code reason}: the caller gets {@code thrown} with earlier failures attached
   * as suppressed, or, if null, the response in hand.
   */
  private Step giveUp(@Nullable GiveUpReason reason, String failure, @Nullable IOException thrown) {
    lastFailure = failure;
    policy.events.gaveUp(request, attempts, reason, failure);
    return thrown != null ? Step.throwing(withHistory(thrown)) : Step.RETURN;
  }

  /** {@code last} with at most the first and the last few earlier failures ({@link FailureHistory}). */
  private IOException withHistory(IOException last) {
    FailureHistory e = earlier;
    if (e != null) {
      e.attachTo(last);
      earlier = null;
    }
    return last;
  }

  /**
   * One attempt of this call, as a driver sends it: it gets the attempt with {@link Step#send} and
   * hands it back to {@link #ended}. Attempts of one call follow one another, so one is reused; a
   * hedge (two in flight) would take a second. The factory's attempts carry it as a request tag,
   * for {@link AttemptSettings}.
   */
  final class Attempt implements SendTracker.OnNetworkRequest {
    final Step send = Step.send(this);
    private int number;
    private @Nullable SendTracker tracker;
    private @Nullable Call trackedCall;

    /** The request to send, with its idempotency key if it has one. */
    Request request() {
      return request;
    }

    /** The end of the logical call on the policy's clock, or {@link CallDeadline#NO_DEADLINE}. */
    long deadlineNanos() {
      return deadline.endNanos();
    }

    /** True if nothing underneath okretry (OkHttp's own retries) may send this request twice. */
    boolean mustNotRepeatUnderneath() {
      return !idempotent;
    }

    /** How long the driver's {@link DeadlineWatch} bounds this attempt in flight, or 0 for none. */
    long watchNanos() {
      return deadline.watchNanos(policy.time.nanoTime());
    }

    /** The call timeout a separate OkHttp call for this attempt gets, or 0 for none. */
    long callTimeoutNanos() {
      return deadline.attemptCallTimeoutNanos(policy.time.nanoTime());
    }

    /** Watches {@code call} for this attempt's network requests, if anything needs to know. */
    void attachTo(Call call) {
      if (!needsTracker) return;
      if (trackedCall != call) { // the interceptor has one call; the async factory one per attempt
        tracker = SendTracker.attach(call, policy.events.hasListener() ? this : null);
        trackedCall = call;
      }
      tracker.reset();
    }

    boolean provenNotSent() {
      SendTracker t = tracker;
      return t != null && !t.requestSent();
    }

    @Override
    public void onNetworkRequest(int requestInAttempt) {
      policy.events.networkRequest(request, number, requestInAttempt);
    }
  }
}
