package io.github.okretry;

import io.github.okretry.internal.Admission;
import io.github.okretry.internal.CallTimeouts;
import io.github.okretry.internal.AttemptFacts;
import io.github.okretry.internal.Classifier;
import io.github.okretry.internal.Decision;
import io.github.okretry.internal.FailureHistory;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.PacedCall;
import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.RetryRules;
import io.github.okretry.internal.SendTracker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One logical call under a {@link RetryPolicy}: its state across attempts (the request with its
 * key, the attempt count, the deadline, the previous wait, earlier failures) and every decision
 * about it, returned as values: {@link Admission} before an attempt, {@link Decision} after one.
 * It reports each event to the policy's {@link Events} but does no I/O: it never sends, closes,
 * sleeps or throws; the drivers ({@link RetryInterceptor}, {@link RetryingCall}) do that, and
 * both turn a give-up into what the caller gets with {@link #failureFor}. Not thread-safe: one
 * logical call is driven by one thread at a time.
 */
final class LogicalCall {

  /** Idempotent by RFC 9110 §9.2.2: sending them twice has the effect of sending them once. */
  private static final Set<String> IDEMPOTENT_METHODS =
      Collections.unmodifiableSet(
          new HashSet<>(Arrays.asList("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE")));

  /** How much earlier than okretry's clock OkHttp's call timeout may fire; see deadlinePassed(). */
  static final long CALL_TIMEOUT_SLACK_NANOS = 10_000_000L;

  private final RetryPolicy policy;
  private final Request request;
  private final int maxRetries;
  private final long deadlineNanos; // on policy.time; NO_DEADLINE for none
  private final boolean deadlineIsCallTimeout; // OkHttp enforces that one itself
  private final boolean repeatableBody;
  private final boolean idempotent;
  private final boolean needsTracker;

  private int attempt;
  private long previousDelayNanos;
  private @Nullable FailureHistory earlier; // bounded: the first and the last few
  private @Nullable SendTracker tracker;
  private @Nullable Call trackedCall;
  private @Nullable String lastFailure;
  private final PacedCall paced; // this call's part in its origin's pacing
  private GiveUpReason pastLatest = GiveUpReason.RETRY_AFTER_TOO_LONG; // if its turn comes too late

  /**
   * @param request the request with its idempotency key ({@link IdempotencyKeys#stamp})
   * @param callTimeoutNanos OkHttp's timeout for the whole call, or 0 for none; it started a
   *     moment before this object is made
   * @param attemptsMade attempts already made without state, see {@link #canDeferState}
   */
  LogicalCall(RetryPolicy policy, Request request, long callTimeoutNanos, int attemptsMade) {
    this.policy = policy;
    this.request = request;
    this.attempt = attemptsMade;
    RetryOverrides overrides = RequestTags.overrides(request);
    this.maxRetries =
        overrides != null && overrides.maxRetries >= 0 ? overrides.maxRetries : policy.maxRetries();
    long own = overrides != null && overrides.deadlineNanos > 0 ? overrides.deadlineNanos : policy.deadlineNanos();
    long ownNanos = own > 0 ? own : RetryRules.NO_DEADLINE;
    this.deadlineIsCallTimeout = callTimeoutNanos > 0 && callTimeoutNanos <= ownNanos;
    this.deadlineNanos = endOf(deadlineIsCallTimeout ? callTimeoutNanos : ownNanos);
    RequestBody body = request.body();
    this.repeatableBody = body == null || !(body.isOneShot() || body.isDuplex());
    this.idempotent = isIdempotentOrKeyed(policy, request);
    this.needsTracker =
        (!idempotent && repeatableBody && maxRetries > 0) || policy.events.hasListener();
    this.previousDelayNanos = policy.baseDelayNanos();
    this.paced = new PacedCall(policy.originGate, policy.time);
  }

  /**
   * True if {@code request} needs nothing from okretry before its first attempt: no deadline to
   * start, no origin state to consult or report to (no gate closed, no crowd paced), no listener
   * to tell, no send to track and no OkHttp retry to turn off. The driver then makes its first
   * attempt with no state at all, and makes a LogicalCall only if that attempt fails, so the
   * common success allocates nothing here.
   */
  static boolean canDeferState(RetryPolicy policy, Request request, long callTimeoutNanos) {
    if (callTimeoutNanos != 0 || policy.deadlineNanos() != 0 || policy.originGate.size() != 0) return false;
    if (policy.events.hasListener() || !isIdempotentOrKeyed(policy, request)) return false;
    RetryOverrides overrides = RequestTags.overrides(request);
    return overrides == null || overrides.deadlineNanos == 0;
  }

  /**
   * For a first attempt made without state: true if {@code response} ends the call as it is, by
   * its status alone (no predicate to ask). Deposits into the budget, as any first success does.
   */
  static boolean succeededAtOnce(RetryPolicy policy, Response response) {
    if (policy.classifier.isRetryableStatus(response.code()) || policy.classifier.hasResponsePredicate()) {
      return false;
    }
    policy.budget.deposit();
    return true;
  }

  /** A blank key header counts as no key: it must never make a request safe to repeat. */
  private static boolean isIdempotentOrKeyed(RetryPolicy policy, Request request) {
    return IDEMPOTENT_METHODS.contains(request.method()) || policy.keys.hasKey(request);
  }

  /** The end of the call on the monotonic clock, {@code budgetNanos} from now. */
  private long endOf(long budgetNanos) {
    if (budgetNanos == RetryRules.NO_DEADLINE) return RetryRules.NO_DEADLINE;
    long now = policy.time.nanoTime();
    long end = now + budgetNanos;
    // Keep NO_DEADLINE meaning "none" even if a huge budget lands on it.
    return end < now || end == RetryRules.NO_DEADLINE ? RetryRules.NO_DEADLINE - 1 : end;
  }

  /** The request every attempt sends, with its idempotency key if it has one. */
  Request request() {
    return request;
  }

  /**
   * True if nothing underneath okretry may send this request twice: OkHttp's own {@code
   * retryOnConnectionFailure} must be off for its attempts.
   */
  boolean mustNotRepeatUnderneath() {
    return !idempotent;
  }

  boolean hasDeadline() {
    return deadlineNanos != RetryRules.NO_DEADLINE;
  }

  /** The deadline on the policy's monotonic clock, or {@link RetryRules#NO_DEADLINE}. */
  long deadlineNanos() {
    return deadlineNanos;
  }

  /**
   * True if the deadline is okretry's own (configured or per request) rather than OkHttp's call
   * timeout, so the driver must also cut short an attempt still in flight when it passes: shrunk
   * I/O timeouts bound each read and write, not a peer that trickles bytes.
   */
  boolean needsDeadlineWatch() {
    return hasDeadline() && !deadlineIsCallTimeout;
  }

  /**
   * True once the deadline has run out. OkHttp's own call timeout started a moment before this
   * call's clock did, so it may fire up to that moment early: a call-timeout deadline counts as
   * run out {@link #CALL_TIMEOUT_SLACK_NANOS} before its end here.
   */
  boolean deadlinePassed() {
    return hasDeadline() && remainingNanos() <= (deadlineIsCallTimeout ? CALL_TIMEOUT_SLACK_NANOS : 0);
  }

  /** Time left before the deadline, or {@link RetryRules#NO_DEADLINE}. */
  long remainingNanos() {
    return deadlineNanos == RetryRules.NO_DEADLINE
        ? RetryRules.NO_DEADLINE
        : deadlineNanos - policy.time.nanoTime();
  }

  /**
   * Consults the origin before an attempt: the origin-wide {@code Retry-After} gate (if on),
   * then, for a call waiting on the origin (a retry after a 429/503 {@code Retry-After}, or a
   * call the gate held), the origin's pacer ({@link PacedCall}).
   */
  Admission beforeAttempt() {
    if (policy.originWideRetryAfter()) {
      long now = policy.time.nanoTime();
      OriginGate.Closed closed = policy.originGate.check(request.url(), now);
      if (closed != null) {
        long wait = closed.notBeforeNanos() - now;
        long remaining = remainingNanos();
        if (wait > policy.maxRetryAfterNanos() || wait >= remaining) {
          policy.events.gaveUp(request, attempt, GiveUpReason.ORIGIN_THROTTLED, "HTTP " + closed.code() + " (origin)");
          paced.abandon(); // a turn it may hold is given back
          return Admission.throttled(closed.code(), wait);
        }
        // A call held at the gate joins the crowd waiting on the origin: paced like a retry.
        if (!paced.isPaced()) waitOn(OriginGate.origin(request.url()), closed.code(), wait, remaining);
        return Admission.waitFor(policy.rules.spreadUpward(wait, remaining, policy.random));
      }
    }
    Admission turn = paced.turn();
    if (turn.kind() == Admission.Kind.THROTTLED) {
      // Its turn would come after its latest time: it ends as a Retry-After that does not fit
      // ends, with a local response standing for the origin's; nothing more is sent.
      policy.events.gaveUp(request, attempt, pastLatest, "HTTP " + turn.code() + " (crowd)");
    }
    return turn;
  }

  /**
   * Joins the crowd waiting on {@code origin}, which asked for {@code waitNanos}: paced within
   * the same bounds as the spread (the ceiling, half the time left), and, if alone, no later
   * than the spread could have put it.
   */
  private void waitOn(String origin, int code, long waitNanos, long remainingNanos) {
    long now = policy.time.nanoTime();
    long latest = policy.rules.latestWaitNanos(waitNanos, remainingNanos);
    // A turn past its latest time ends the call for the reason that time stands for.
    pastLatest =
        latest >= policy.maxRetryAfterNanos() ? GiveUpReason.RETRY_AFTER_TOO_LONG : GiveUpReason.DEADLINE_EXCEEDED;
    paced.waitOn(origin, code, waitNanos, now + policy.rules.longestSpreadNanos(waitNanos, remainingNanos), now + latest);
  }

  /**
   * A local response standing for the server's, for a call that cannot wait out the origin's
   * {@code Retry-After} ({@link Admission#localResponse}). Nothing was sent.
   */
  Response throttledResponse(Admission throttled) {
    return throttled.localResponse(request, policy.clock.currentTimeMillis());
  }

  /** Records that an attempt is about to go out on {@code call}. */
  void attemptStarting(Call call) {
    attempt++;
    paced.sending(request.url());
    policy.events.attemptStarted(request, attempt);
    if (!needsTracker) return;
    if (trackedCall != call) { // the interceptor has one call; the async factory one per attempt
      if (policy.events.hasListener()) {
        ListeningTracker t = new ListeningTracker();
        call.addEventListener(t);
        tracker = t;
      } else {
        tracker = SendTracker.attach(call);
      }
      trackedCall = call;
    }
    tracker.reset();
  }

  /** Reports each network request of the current attempt to the listener. */
  private final class ListeningTracker extends SendTracker {
    @Override
    protected void onNetworkRequest(int requestInAttempt) {
      policy.events.networkRequest(request, attempt, requestInAttempt);
    }
  }

  /**
   * Decides after the current attempt ended with {@code response} or {@code error}.
   *
   * @param cutShort why the attempt was ended from outside ({@link GiveUpReason#CANCELED}, {@link
   *     GiveUpReason#INTERRUPTED}, or {@link GiveUpReason#DEADLINE_EXCEEDED} when okretry's own
   *     deadline cut it), or null if it ended by itself
   */
  Decision afterAttempt(
      @Nullable Response response, @Nullable IOException error, @Nullable GiveUpReason cutShort) {
    boolean retryable;
    boolean provenUnprocessed;
    boolean throttled = false; // a 429/503 with a Retry-After: the server said when to come back
    long retryAfterNanos = RetryAfter.ABSENT;
    if (response != null) {
      try {
        retryable = policy.classifier.isRetryable(response);
      } catch (RuntimeException e) {
        // An interceptor may throw only IOException; the response goes unread, so it is closed.
        return giveUp(GiveUpReason.NOT_RETRYABLE, "retryOnResponse predicate threw",
            new IOException("okretry: the retryOnResponse predicate threw", e));
      }
      if (!retryable) {
        paced.answered(response, Classifier.provesNotProcessed(response), RetryAfter.ABSENT);
        if (attempt == 1) policy.budget.deposit();
        policy.events.succeeded(request, response, attempt);
        return Decision.deliver();
      }
      provenUnprocessed = Classifier.provesNotProcessed(response);
      retryAfterNanos = RetryAfter.delayNanos(response, policy.clock);
      throttled = provenUnprocessed && retryAfterNanos != RetryAfter.ABSENT;
      paced.answered(response, provenUnprocessed, retryAfterNanos);
      if (throttled && policy.originWideRetryAfter()) {
        // Never close the origin for longer than any call would wait: a hostile "68 years" would
        // otherwise lock every call out long after the server recovered. The origin closed is
        // the one that answered: after a redirect, not the one first asked.
        long now = policy.time.nanoTime();
        long closedFor = Math.min(retryAfterNanos, policy.maxRetryAfterNanos());
        policy.originGate.close(response.request().url(), now, now + closedFor, response.code());
      }
    } else {
      paced.answered(null, false, RetryAfter.ABSENT); // an exception says nothing of the pace
      IOException e = error != null ? error : new IOException("no outcome");
      if (cutShort == GiveUpReason.DEADLINE_EXCEEDED) {
        return giveUp(GiveUpReason.DEADLINE_EXCEEDED, Events.describe(null, e), CallTimeouts.deadlineTimeout(e));
      }
      if (cutShort == null && hasDeadline() && remainingNanos() <= 0) {
        // The attempt ran into the deadline through its shrunk timeouts.
        return giveUp(GiveUpReason.DEADLINE_EXCEEDED, Events.describe(null, e), null);
      }
      try {
        retryable = cutShort == null && policy.classifier.isRetryable(e);
      } catch (RuntimeException thrown) {
        IOException wrapped = new IOException("okretry: the retryOnException predicate threw", thrown);
        wrapped.addSuppressed(e);
        return giveUp(GiveUpReason.NOT_RETRYABLE, "retryOnException predicate threw", wrapped);
      }
      // Never sent (no network request's headers were completely written: e.g. a connection shut
      // down by GOAWAY before the stream opened), or refused unprocessed. Without a tracker the
      // request is idempotent, or cannot be repeated anyway.
      provenUnprocessed =
          (tracker != null && !tracker.requestSent()) || Classifier.provesNotProcessed(e);
    }
    lastFailure = Events.describe(response, error);
    if (cutShort != null) {
      // Checked for responses too: a retry that cannot happen must not spend a budget token, and
      // the wait this response would lead to can no longer happen, so it ends as a wait would.
      IOException ended =
          response == null ? null
              : cutShort == GiveUpReason.INTERRUPTED ? new InterruptedIOException("interrupted")
              : new IOException("Canceled");
      return giveUp(cutShort, lastFailure, ended);
    }

    long remaining = remainingNanos();
    AttemptFacts facts =
        AttemptFacts.attempt(attempt, maxRetries)
            .retryable(retryable)
            .safeToRepeat(repeatableBody && (idempotent || provenUnprocessed))
            .retryAfterNanos(retryAfterNanos)
            .remainingNanos(remaining)
            .previousDelayNanos(previousDelayNanos)
            .build();
    Decision decision = policy.rules.decide(facts, policy.random);
    // A retry that waits out the server's own Retry-After costs the budget less (RetryBudget).
    if (decision.isRetry() && !policy.budget.tryWithdraw(throttled, policy.time.nanoTime())) {
      decision = Decision.giveUp(GiveUpReason.BUDGET_EXHAUSTED);
    }
    if (!decision.isRetry()) {
      policy.events.gaveUp(request, attempt, decision.reason(), lastFailure);
      return decision;
    }
    if (throttled && response != null) {
      // After its Retry-After this retry joins the crowd of the origin that answered.
      waitOn(OriginGate.origin(response.request().url()), response.code(), retryAfterNanos, remaining);
    }

    policy.events.retryScheduled(request, attempt, lastFailure, decision.delayNanos());
    if (error != null) {
      if (earlier == null) earlier = new FailureHistory();
      earlier.add(error);
    }
    // Decorrelated jitter grows from its own previous draw; a server's Retry-After is not one.
    if (retryAfterNanos == RetryAfter.ABSENT) previousDelayNanos = decision.delayNanos();
    return decision;
  }

  private Decision giveUp(GiveUpReason reason, String failure, @Nullable IOException replacement) {
    lastFailure = failure;
    policy.events.gaveUp(request, attempt, reason, failure);
    return replacement != null ? Decision.giveUp(reason, replacement) : Decision.giveUp(reason);
  }

  /**
   * The attempt ended in an unchecked exception or an error from below okretry (a bug in an
   * interceptor, a request body or OkHttp): the call ends with it, and the listener hears that it
   * gave up, with the same reason on both drivers.
   */
  void failedBelow(Throwable e) {
    lastFailure = Events.describe(null, e);
    policy.events.gaveUp(request, attempt, GiveUpReason.NOT_RETRYABLE, lastFailure);
  }

  /**
   * A wait before an attempt ended early: by a cancel or an interrupt (the exception the wait
   * threw), or because okretry's deadline passed during it. Returns what the caller gets.
   */
  IOException waitFailed(IOException e, boolean deadlinePassed) {
    paced.abandon(); // a turn it holds must not delay the calls after it
    GiveUpReason reason =
        deadlinePassed ? GiveUpReason.DEADLINE_EXCEEDED
            : e instanceof InterruptedIOException ? GiveUpReason.INTERRUPTED
            : GiveUpReason.CANCELED;
    String failure =
        lastFailure != null ? lastFailure : deadlinePassed ? "deadline" : Events.describe(null, e);
    policy.events.gaveUp(request, attempt, reason, failure);
    return withHistory(deadlinePassed ? CallTimeouts.deadlineTimeout(e) : e);
  }

  /**
   * What the caller gets when the call ends on {@code decision} ({@link Decision.Kind#DELIVER} or
   * {@link Decision.Kind#GIVE_UP}) after an attempt that threw {@code error} or returned a
   * response: null to hand over that response as it is, or else the exception to throw, with the
   * failures of earlier attempts attached as suppressed; the driver then closes the response.
   */
  @Nullable IOException failureFor(Decision decision, @Nullable IOException error) {
    IOException last = decision.failure() != null ? decision.failure() : error;
    return last != null ? withHistory(last) : null;
  }

  /**
   * {@code last} with the failures of earlier attempts attached as suppressed: at most the first
   * and the last few, with a marker counting those left out ({@link FailureHistory}).
   */
  private IOException withHistory(IOException last) {
    FailureHistory e = earlier;
    if (e != null) {
      e.attachTo(last);
      earlier = null;
    }
    return last;
  }
}
