package io.github.okretry;

import io.github.okretry.internal.AttemptFacts;
import io.github.okretry.internal.CallDeadline;
import io.github.okretry.internal.CallTimeouts;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.QuotaHeaders;
import io.github.okretry.internal.RepeatSafety;
import io.github.okretry.internal.ReplayBody;
import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.RetryKind;
import io.github.okretry.internal.SendTracker;
import io.github.okretry.internal.Tuning;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One logical call under a {@link RetryPolicy}: its state across attempts and every decision about
 * it. A driver asks {@link #next} before an attempt and after a wait, and hands each attempt's
 * outcome to {@link #ended} with what it saw ({@link Seen}); both answer with a {@link Step}, never
 * a reason. The blocking driver asks only these two. The async one, after {@link #start}, asks them
 * and one more: {@link #next} also when a hedge's delay is over with attempts in flight, and {@link
 * #departs} when a hedge leaves its queue. A THROW says whether the call ran out of time ({@link
 * Step#timedOut}), which both drivers report as OkHttp does, as canceled. It reports each event to
 * the policy's {@link Events} but does no I/O: it never sends, closes, sleeps or throws. Not
 * thread-safe: one logical call is driven by one thread at a time.
 */
final class LogicalCall {

  final RetryPolicy policy;
  final Request request;
  final int maxRetries; // read by Attempt for its attempt header
  final CallDeadline deadline;
  final RepeatSafety repeat;
  final boolean needsTracker; // uses its attempts' trackers as proof that one was not sent
  private final OriginTurn origin; // its standing with the origins it calls: gate, crowd, quota
  // Null unless its factory hedges and the request may be twice in flight
  private final @Nullable Hedging hedging;

  private int attempts;
  private long previousDelayNanos;
  private final CallFailures failures = new CallFailures();
  private @Nullable Attempt attempt; // one reused: attempts follow one another
  private @Nullable Step decided; // on an attempt made without state, for the first next()
  private boolean over; // a RETURN or THROW was answered: next() answers DROP from then on
  private boolean retryable; // these three: what classify() found out about the last attempt
  private boolean provenUnprocessed;
  private long retryAfterNanos;
  // What a retry of the last attempt would follow, for the budget
  private RetryKind retryKind = RetryKind.ERROR;
  // A retry is scheduled and not yet sent: the budget is asked when it is about to leave. Its
  // attempt's failure rides on the final exception once it goes, or is the call's if it never
  // does: an exception, or a response (closed at the wait; HeldResponse makes the caller's copy).
  private boolean retrying;
  private boolean lastChance;
  private @Nullable IOException pendingError;
  private @Nullable Response pendingResponse;
  private @Nullable RetryKind paidKind; // the retry in flight, as the budget priced it; or null
  private int skipped; // attempts the budget skipped, each counted as failed as the last one sent
  private long sentAtNanos; // when the latest attempt was sent, and how long it took to end:
  private long lastAttemptNanos; // a skipped attempt is taken to fail as slowly
  // Its outcome so far; made unless it succeeds at its first attempt
  private @Nullable CallRecord record;

  private LogicalCall(
      RetryPolicy policy,
      Request request,
      @Nullable RetryOverrides overrides,
      CallDeadline deadline,
      Hedging.@Nullable Shared hedges) {
    this.policy = policy;
    this.maxRetries = maxRetries(overrides, policy);
    // A one-shot body is kept as it is written, if the call may retry: only such a call wraps it,
    // and the wrapper is the body of its request (no field: a call with any other body is no
    // larger for it).
    ReplayBody replay = maxRetries > 0 ? policy.replay.wrap(request.body()) : null;
    this.request =
        replay != null ? request.newBuilder().method(request.method(), replay).build() : request;
    this.deadline = deadline;
    boolean hasKey = policy.keys.hasKey(request);
    this.repeat =
        RepeatSafety.of(
            request.method(),
            hasKey,
            replay != null || RepeatSafety.repeatableBody(request.body()));
    this.needsTracker = repeat.needsSendProof(maxRetries) || policy.events.watchesNetworkRequests();
    this.previousDelayNanos = policy.settings.baseDelayNanos;
    this.origin = new OriginTurn(policy, request.url());
    // A one-shot body is not hedged: two attempts would write it at once, before it is all kept.
    this.hedging =
        Hedging.of(
            replay == null ? hedges : null,
            this.request,
            repeat,
            maxRetries,
            policy.budget,
            policy.events);
  }

  /** A logical call for {@code request} that is never hedged, always with its state. */
  static LogicalCall start(RetryPolicy policy, Request request, long callTimeoutNanos) {
    return start(policy, request, callTimeoutNanos, null);
  }

  /**
   * A logical call for {@code request}, always with its state (the async driver's, a simulator's),
   * hedged as its factory's {@code hedges} say (null: never).
   */
  static LogicalCall start(
      RetryPolicy policy, Request request, long callTimeoutNanos, Hedging.@Nullable Shared hedges) {
    RetryOverrides o = RequestTags.overrides(request);
    long ownNanos = deadlineNanos(o, policy);
    return new LogicalCall(
        policy,
        request,
        o,
        CallDeadline.of(policy.time.nanoTime(), ownNanos, callTimeoutNanos),
        hedges);
  }

  /**
   * The state of a call for {@code request} (stamped; {@code callTimeoutNanos} OkHttp's, 0 for
   * none), or null if its first attempt needs none: no call timeout, origin state, network request
   * to watch, nor OkHttp retry to turn off, nor attempt number to send. Most calls succeed at once,
   * and such a call then makes no state at all. The blocking driver sends that attempt (reported
   * here) within okretry's own deadline alone ({@link #deadlineNanos}) and hands its outcome to
   * {@link #firstEnded}; with state, it asks {@link #next}.
   */
  static @Nullable LogicalCall open(RetryPolicy policy, Request request, long callTimeoutNanos) {
    if (callTimeoutNanos == 0
        && policy.originGate.size() == 0
        && !policy.originGate.probes()
        && !policy.events.watchesNetworkRequests()
        && policy.settings.attemptHeader == null
        && RepeatSafety.idempotent(request.method(), policy.keys.hasKey(request))
        && !policy.replay.keeps(request.body())) { // a body to keep is wrapped by the state
      OriginTurn.sentWithoutTurn(policy, request.url());
      policy.events.attemptStarted(request, 1);
      return null;
    }
    return start(policy, request, callTimeoutNanos);
  }

  /**
   * After a first attempt that {@link #open} made no state for ({@code startNanos}: the policy's
   * clock when it started, which its deadline runs from; {@code tracker} watched its network
   * requests on {@code okhttpCall}): null if {@code response} ends the call by its status alone
   * (heard as {@link #ended} hears it: origin, budget, listener) and shows every request OkHttp
   * sent for it; else the call's state, made now, whose first {@link #next} answers for that
   * attempt.
   */
  static @Nullable LogicalCall firstEnded(
      RetryPolicy policy,
      Request request,
      long startNanos,
      @Nullable Response response,
      @Nullable Throwable error,
      int seen,
      @Nullable SendTracker tracker,
      @Nullable Call okhttpCall) {
    if (response != null
        && policy.classifier.endsByStatus(response)
        && !Attempt.resentUnseen(tracker, response)) {
      OriginTurn.answeredWithoutTurn(policy, request.url(), response, Classifier.refuses(response));
      returned(policy, request, response, 1, null);
      return null;
    }
    // open() saw no call timeout: okretry's own deadline only.
    RetryOverrides o = RequestTags.overrides(request);
    LogicalCall call =
        new LogicalCall(
            policy, request, o, CallDeadline.of(startNanos, deadlineNanos(o, policy), 0), null);
    call.origin.tookOverFirstAttempt(); // open() sent it uncounted: its answer ends the count
    call.attempts = 1;
    call.sentAtNanos = startNanos;
    Attempt first = call.attemptHandle();
    if (tracker != null && okhttpCall != null) first.watchedBy(tracker, okhttpCall);
    call.decided = call.ended(first, response, error, seen);
    return call;
  }

  /** {@link #firstEnded} of an attempt with no OkHttp call to watch (a simulator's, a test's). */
  static @Nullable LogicalCall firstEnded(
      RetryPolicy policy,
      Request request,
      long startNanos,
      @Nullable Response response,
      @Nullable Throwable error,
      int seen) {
    return firstEnded(policy, request, startNanos, response, error, seen, null, null);
  }

  /** The retries a call of {@code policy} may make: {@code overrides}' if set, else its own. */
  static int maxRetries(@Nullable RetryOverrides overrides, RetryPolicy policy) {
    int policyMaxRetries = policy.settings.maxRetries;
    return overrides != null ? overrides.maxRetriesOr(policyMaxRetries) : policyMaxRetries;
  }

  /**
   * okretry's own deadline for a call of {@code policy}: {@code overrides}' if set, else the
   * policy's; 0 for none.
   */
  static long deadlineNanos(@Nullable RetryOverrides overrides, RetryPolicy policy) {
    long policyDeadlineNanos = policy.settings.deadlineNanos;
    return overrides != null ? overrides.deadlineNanosOr(policyDeadlineNanos) : policyDeadlineNanos;
  }

  /** True if the first attempt, made without state ({@link #firstEnded}), is to be retried. */
  boolean decidedToRetry() {
    Step d = decided;
    return d != null && !d.ends(); // no DROP without hedges in flight
  }

  /**
   * What to do when no attempt is in hand: at the start, after each wait ({@code waitEndedBy}: what
   * cut it short), or, with attempts in flight, when the hedge delay of the latest SEND ({@link
   * Attempt#hedgeAfterNanos}) is over: then a SEND of a hedge (the same request and key, numbered
   * as it will be if it goes; nothing paid, counted or reported until it {@link #departs}) or a
   * DROP for none now ({@link Hedging#due}). Once the call has ended (a RETURN or THROW), a DROP.
   */
  Step next(@Nullable IOException waitEndedBy) {
    Step d = decided;
    decided = null;
    if (d != null) return d;
    if (over) return Step.DROP; // a late question (a stale hedge timer): the call has its answer
    if (record != null) record.waitEnded(policy.time.nanoTime());
    return settled(nextStep(waitEndedBy));
  }

  private Step nextStep(@Nullable IOException waitEndedBy) {
    long now = policy.time.nanoTime();
    Hedging h = hedging;
    if (h != null && h.inRound()) return h.due(now, origin, mayAttempt(now), attempts + 1);
    if (waitEndedBy != null) return waitEnded(waitEndedBy, now);
    Step paced = origin.admit(now, deadline.remainingNanos(now), request);
    if (paced != null) {
      return paced.kind() == Step.Kind.WAIT ? waiting(CallRecord.PACING, paced) : throttled(paced);
    }
    paidKind = null;
    if (retrying) { // the budget's one question, now that the retry is about to leave
      RetryBudget.Verdict v =
          policy.budget.admit(request.url(), retryKind, maxRetries, scheduleNanos(), now, true);
      if (v != RetryBudget.Verdict.SEND) {
        origin.abandon(); // a crowd's turn is not taken by an attempt not sent
        return notSent(v, now);
      }
      retrying = false;
      paidKind = retryKind;
      failures.add(pendingError); // it rides on the final exception, if any
      pendingError = null;
      pendingResponse = null;
    }
    sentAtNanos = now;
    attempts++;
    origin.sending();
    policy.events.attemptStarted(request, attempts);
    Attempt a = attemptHandle();
    if (h != null) h.roundStarted(a, now);
    return a;
  }

  /**
   * {@code hedge}, a SEND of {@link #next} with attempts in flight, leaves the driver's queue for
   * the network: itself if it goes (now paid for, counted and reported: {@code onHedgeStarted},
   * {@code onAttemptStarted}; the next hedge armed on it), or a DROP if it must not be sent ({@link
   * Hedging#departs}: its round is over, the origin pushes back, the call is out of attempts or
   * time, or the budget does not pay).
   */
  Step departs(Attempt hedge) {
    Hedging h = hedging;
    long now = policy.time.nanoTime();
    if (h == null || !h.departs(hedge, now, origin, mayAttempt(now))) return Step.DROP;
    attempts++;
    policy.events.hedgeStarted(request, attempts, h.silentNanos(now));
    policy.events.attemptStarted(request, attempts);
    h.sent(hedge, now);
    return hedge;
  }

  private boolean mayAttempt(long nowNanos) {
    // An attempt the budget skipped counts as one made (a review: a hedge went past maxRetries).
    return attempts + skipped <= maxRetries && deadline.remainingNanos(nowNanos) > 0;
  }

  // Why the call ended, if it gave up: read by tests and SimulatedDriver, never a decision.
  @Nullable GiveUpReason gaveUpFor() {
    return failures.gaveUpFor();
  }

  /** The request with the mark that carries the call's outcome to its response, made once. */
  Request markedRequest() {
    return record().marked(request);
  }

  private CallRecord record() {
    CallRecord r = record;
    return r != null ? r : (record = new CallRecord());
  }

  @SuppressWarnings("AssignmentExpression") // made at the first attempt, then reused
  private Attempt attemptHandle() {
    Attempt a = attempt != null ? attempt : (attempt = new Attempt(this));
    a.number = attempts;
    return a;
  }

  /**
   * The call cannot wait as its origin asks: {@code local}, a response standing for the origin's,
   * ends it; nothing sent.
   */
  private Step throttled(Step local) {
    forgetPending();
    record().comeBackAfter(origin.refusedNanos(), policy.clock.currentTimeMillis());
    giveUp(origin.refusedFor(), origin.refusal(), null);
    return local;
  }

  /**
   * The budget did not send the retry about to leave ({@code verdict}): a SKIP counts its attempt
   * as failed as the last one sent and waits for the next, as long as the call would have waited
   * without a budget; a call out of attempts or time, or told to stop, ends with the failure its
   * retry was for. A skipped call so sends nothing until its origin is seen to work: what a blip
   * saves, and what an outage is not sent.
   */
  private Step notSent(RetryBudget.Verdict verdict, long now) {
    GiveUpReason reason = verdict.reason;
    if (reason != null) return endUnsent(reason);
    long remaining = deadline.remainingNanos(now);
    Decision next = policy.rules.decide(facts(attempts + skipped + 1, remaining), policy.random);
    if (!next.isRetry()) {
      // Out of attempts: a moment more for its origin to answer (a blip's end comes a moment
      // before an answer says so), then it goes if one did, or ends.
      long graceNanos = (long) (policy.settings.baseDelayNanos * Tuning.LAST_SKIP_GRACE);
      if (next.reason() == GiveUpReason.RETRIES_EXHAUSTED
          && !lastChance
          && graceNanos > 0
          && graceNanos < remaining) {
        lastChance = true;
        return waiting(CallRecord.BUDGET, Step.waitFor(graceNanos));
      }
      // Out of attempts, its origin never seen to work; or out of time, which it says.
      GiveUpReason why = next.reason();
      return endUnsent(
          why == null || why == GiveUpReason.RETRIES_EXHAUSTED
              ? GiveUpReason.NO_RECENT_SUCCESS
              : why);
    }
    skipped++;
    long delay = next.delayNanos();
    if (retryAfterNanos == RetryAfter.ABSENT) previousDelayNanos = delay;
    Response refused = pendingResponse;
    if (refused != null && provenUnprocessed && retryAfterNanos != RetryAfter.ABSENT) {
      // The turn it gave back is taken again: its next attempt waits with the crowd on the origin
      // that answered, not past it (a review: skipped retries of a 503 crowd went unpaced).
      origin.waitOn(
          OriginGate.origin(refused.request().url()), refused.code(), retryAfterNanos, remaining);
    }
    // The attempt not sent is taken to fail as the last one did, in time too (up to one base
    // delay, so an outage of timeouts does not hold a call for theirs): the call's next check
    // comes when it would have without a budget, not earlier, where a blip may still be on; and
    // never past the deadline.
    long asIfSent = Math.min(lastAttemptNanos, policy.settings.baseDelayNanos);
    return waiting(
        CallRecord.BUDGET,
        Step.waitFor(delay + Math.max(0, Math.min(asIfSent, remaining - delay - 1))));
  }

  /** The longest the call's backoff takes, all its retries together ({@link Backoff}'s caps). */
  private long scheduleNanos() {
    return policy.rules.scheduleNanos(maxRetries);
  }

  /**
   * The call ends for {@code reason} without sending the retry it waited for: with the failure that
   * retry was for, a response as the server sent it but for its body, not kept ({@link
   * HeldResponse}).
   */
  // decide() described the failure (failures.last) before scheduling its retry
  @SuppressWarnings("NullAway")
  private Step endUnsent(GiveUpReason reason) {
    IOException e = pendingError;
    Response closed = pendingResponse;
    retrying = false;
    pendingError = null;
    pendingResponse = null;
    Step end = giveUp(reason, failures.last(), e);
    return e == null && closed != null ? Step.returning(HeldResponse.of(closed)) : end;
  }

  /**
   * A retry scheduled will not be sent, and the call ends otherwise: the failure it was for rides
   * on the final exception, if any.
   */
  private void forgetPending() {
    retrying = false;
    failures.add(pendingError);
    pendingError = null;
    pendingResponse = null;
  }

  /** A wait ended early: by a cancel, an interrupt or a close, or past the deadline. */
  private Step waitEnded(IOException e, long now) {
    origin.abandon(); // a turn it holds must not delay the calls after it
    forgetPending();
    boolean late = deadline.passed(now);
    String failure =
        failures.last() != null ? failures.last() : late ? "deadline" : Events.describe(null, e);
    GiveUpReason reason =
        late
            ? GiveUpReason.DEADLINE_EXCEEDED
            : e instanceof InterruptedIOException
                ? GiveUpReason.INTERRUPTED
                : GiveUpReason.CANCELED;
    return giveUp(reason, failure, late ? CallTimeouts.deadlineTimeout(e) : e);
  }

  /**
   * What to do after {@code attempt} ended ({@code error}: an IOException or a throw from below;
   * {@code seen}: the driver's {@link Seen} flags, 0 for none).
   */
  Step ended(Attempt attempt, @Nullable Response response, @Nullable Throwable error, int seen) {
    lastAttemptNanos = policy.time.nanoTime() - sentAtNanos;
    // Read before the decision, which may end the call and add earlier failures to `error`
    provenUnprocessed = provesNotProcessed(attempt, response, error);
    Step step;
    try {
      step = decide(attempt, response, error, seen);
    } catch (RuntimeException e) { // a bug: never a silent hang, nor a throw into OkHttp's thread
      origin.answered(null, false, RetryAfter.ABSENT); // no longer in flight, if it still was
      step = failedBelow(e, new IOException("okretry: retry decision failed", e));
    }
    // A hedge still queued never goes.
    if (hedging != null && step.kind() != Step.Kind.DROP) hedging.roundEnded();
    // A first attempt's plain success records nothing: its response is read as it is
    // (RetryOutcome.of), unless OkHttp resent it unseen.
    if (record != null
        || step != Step.RETURN
        || attempts != 1
        || failures.gaveUpFor() != null
        || (response != null && attempt.resentUnseen(response))) {
      record().attemptEnded(attempt, response, provenUnprocessed);
    }
    return settled(step);
  }

  /**
   * {@code step}, remembered as the call's end if it is one (a RETURN or THROW); the call's kept
   * body is then given back.
   */
  private Step settled(Step step) {
    if (step.ends()) {
      over = true;
      close();
      return finished(step);
    }
    return step;
  }

  /**
   * Gives back what the call holds across attempts (its kept one-shot body) to the policy's total.
   * Done when the call ends; a driver also calls it when it stops driving the call by any other way
   * (a throw), so nothing stays counted. Again: nothing more.
   */
  void close() {
    ReplayBody r = replay();
    if (r != null) r.release();
  }

  /** Its one-shot body, kept for a retry (wrapped in the constructor); null for any other body. */
  private @Nullable ReplayBody replay() {
    RequestBody body = request.body();
    return body instanceof ReplayBody ? (ReplayBody) body : null;
  }

  /**
   * {@code end}, a RETURN or THROW, with the call's {@link RetryOutcome}: on the response's request
   * (sent with it from the second attempt; else the step marks it), or as the exception's last
   * suppressed. A first attempt's plain success carries none.
   */
  private Step finished(Step end) {
    CallRecord r = record;
    if (r == null && end == Step.RETURN && failures.gaveUpFor() == null) return end;
    if (r == null) r = record();
    r.end(attempts, failures.gaveUpFor(), request.header(policy.settings.idempotencyKeyHeader));
    if (end.kind() == Step.Kind.THROW) {
      RetryOutcome outcome = r.outcome();
      return outcome != null ? failures.delivered(end, outcome) : end;
    }
    return end == Step.RETURN && r.lastSentMarked() ? end : Step.returningMarked(end, r);
  }

  // An attempt ends with a response or an error, so e is there when the response is not; a
  // decision that is not a retry has its reason.
  @SuppressWarnings("NullAway")
  private Step decide(
      Attempt attempt, @Nullable Response response, @Nullable Throwable error, int seen) {
    Hedging h = hedging;
    boolean others = h != null && h.ended(); // other attempts of this round still in flight
    Throwable below = Seen.thrownBelow(error, seen);
    if (below != null) {
      origin.answered(null, false, RetryAfter.ABSENT); // no longer in flight for its origin's quota
      return failedBelow(below, error);
    }
    GiveUpReason cut =
        response != null
            ? Seen.cutShortWithResponse(seen)
            : Seen.cutShort(seen, deadline.passed(policy.time.nanoTime()));
    IOException e = (IOException) error;
    // A 409 to a keyed request while another with its key is in flight is the server's answer
    // to the hedge itself (the IETF draft's "request in progress"), not to the request.
    if (others
        && cut == null
        && response != null
        && response.code() == 409
        && policy.keys.hasKey(request)) {
      return dropped(null);
    }
    Step early = response != null ? classify(response) : classify(attempt, e, cut);
    // The origin that answered turned the work away, whatever it proves of the request sent
    boolean refused = response != null && Classifier.refuses(response);
    if (h != null) { // a response that pushes back refuses the origin to hedges
      boolean refusing =
          response != null && retryable && (refused || retryAfterNanos != RetryAfter.ABSENT);
      h.answered(attempt, response, refusing, early == Step.RETURN, others, policy.time.nanoTime());
    }
    if (early != null) return early;
    policy.budget.failed(request.url(), policy.time.nanoTime());
    String failure = Events.describe(response, e);
    failures.last(failure);
    // For responses too: a retry that cannot happen ends as a wait would.
    if (cut != null) return giveUp(cut, failure, response == null ? e : Seen.failureFor(cut));
    // Another attempt of this round is in flight: its outcome answers for the call, not this one.
    if (others) return dropped(e);
    long remaining = deadline.remainingNanos(policy.time.nanoTime());
    boolean throttled = refused && retryAfterNanos != RetryAfter.ABSENT;
    Decision decision = policy.rules.decide(facts(attempts + skipped, remaining), policy.random);
    if (!decision.isRetry()) {
      if (bodyNotKept(decision.reason())) {
        return giveUp(GiveUpReason.BODY_NOT_KEPT, failure + "; " + bodyNotKept(), e);
      }
      return giveUp(comeBack(decision.reason()), failure, e);
    }
    // Asked now too, taking nothing: a retry the budget would stop ends the call at once, with
    // the response in hand, rather than after a wait that could not end in a retry. It pays,
    // and may skip, when it leaves (nextStep).
    RetryBudget.Verdict v =
        policy.budget.admit(
            request.url(), retryKind, maxRetries, scheduleNanos(), policy.time.nanoTime(), false);
    if (v.reason != null) return giveUp(v.reason, failure, e);
    return retryScheduled(response, e, decision.delayNanos(), throttled, remaining);
  }

  /**
   * {@code reason}, why the call gives up; if that is a wait the server asked for ({@link
   * #retryAfterNanos}: a {@code Retry-After}, a spent quota's reset) longer than {@code
   * maxRetryAfter} or past the deadline, its outcome says when the server asked it to come back.
   */
  private @Nullable GiveUpReason comeBack(@Nullable GiveUpReason reason) {
    if (retryAfterNanos != RetryAfter.ABSENT
        && (reason == GiveUpReason.RETRY_AFTER_TOO_LONG
            || reason == GiveUpReason.DEADLINE_EXCEEDED)) {
      record().comeBackAfter(retryAfterNanos, policy.clock.currentTimeMillis());
    }
    return reason;
  }

  /**
   * True if {@code attempt}'s end ({@code response}, else {@code error}) proves the server
   * processed none of its requests: what makes a request that is not idempotent safe to repeat, and
   * what its outcome says ({@link CallRecord}), by one rule. An exception proves it if no request
   * was written whole (a connection shut down by GOAWAY before the stream opened) or by what it is;
   * an attempt without a tracker is idempotent or not repeatable, so the count it lacks decides no
   * retry.
   */
  private static boolean provesNotProcessed(
      Attempt attempt, @Nullable Response response, @Nullable Throwable error) {
    if (response != null) return Classifier.provesNotProcessed(response);
    return error != null && Classifier.provesNotProcessed(error, attempt.requestsWritten());
  }

  /**
   * True if the rules' {@code reason} not to repeat the request is only that its one-shot body was
   * not kept: the request is otherwise safe to repeat.
   */
  private boolean bodyNotKept(@Nullable GiveUpReason reason) {
    return reason == GiveUpReason.NOT_SAFE_TO_REPEAT
        && replay() != null
        && repeat.safeToRepeat(provenUnprocessed);
  }

  @SuppressWarnings("NullAway") // called after bodyNotKept(reason) found it
  private String bodyNotKept() {
    return replay().whyNotKept();
  }

  /** True unless its one-shot body was kept in part or not at all: then no attempt can write it. */
  private boolean replayable() {
    ReplayBody r = replay();
    return r == null || r.replayable();
  }

  /**
   * The last attempt's facts, as the rules read them, for attempt {@code attempt}: attempts the
   * budget skipped count as failed ones.
   */
  private AttemptFacts facts(int attempt, long remainingNanos) {
    return new AttemptFacts(
        attempt,
        maxRetries,
        retryable,
        repeat.safeToRepeat(provenUnprocessed) && replayable(),
        retryAfterNanos,
        remainingNanos,
        previousDelayNanos);
  }

  /** Classifies a response; returns the step if that alone ends the call, else null. */
  private @Nullable Step classify(Response response) {
    int verdict;
    try {
      verdict = policy.classifier.verdict(response);
    } catch (RuntimeException e) {
      origin.answered(response, false, RetryAfter.ABSENT); // no longer in flight for its quota
      // An interceptor may throw only IOException; the response goes unread, so it is closed.
      return giveUp(
          GiveUpReason.NOT_RETRYABLE,
          "retryOnResponse predicate threw",
          new IOException("okretry: the retryOnResponse predicate threw", e));
    }
    // What the origin that answered said, whatever it proves of the request sent
    boolean refused = Classifier.refuses(response);
    retryable = verdict == Classifier.RETRY;
    if (!retryable) {
      origin.answered(response, refused, RetryAfter.ABSENT);
      if (verdict != Classifier.SERVER_SAID_NO) {
        return returned(policy, request, response, attempts, paidKind);
      }
      // A failure its server said not to retry: it ends as a retry that cannot happen does.
      policy.budget.failed(request.url(), policy.time.nanoTime());
      return giveUp(GiveUpReason.SERVER_SAID_NO_RETRY, Events.describe(response, null), null);
    }
    long asked = RetryAfter.delayNanos(response, policy.clock);
    // The pacer and the origin gate hear the server's Retry-After alone: a quota's reset reaches
    // the pacer with its quota, and holds that quota's bucket, not the whole origin.
    origin.answered(response, refused, asked);
    // Without one, a spent quota's reset is when a retry can be admitted (GitHub's 403 and 429
    // say so; octokit waits for it too): it is waited for as a Retry-After would be. A reset
    // under a second is none: a whole number of seconds floored to 0 (IETF t=0, X-RateLimit-Reset
    // 0, GitHub's reset equal to its Date, Discord's 0.000) says "within the second", not "now",
    // so the backoff applies and the retry counts, as for the same refusal without a quota.
    long reset =
        asked == RetryAfter.ABSENT && policy.originGate.readsQuotas()
            ? QuotaHeaders.spentResetNanos(response, policy.time.nanoTime(), policy.clock)
            : RetryAfter.ABSENT;
    retryAfterNanos =
        asked != RetryAfter.ABSENT
            ? asked
            : reset < Tuning.MIN_QUOTA_RESET_NANOS ? RetryAfter.ABSENT : reset;
    // Its price (RetryBudget): a client paced by a working server (a 4xx that says when, by a
    // Retry-After or a spent quota's reset) is throttled; a 503 that says when, unavailable;
    // anything else, an error (a dead server's 5xx count, whatever quota they claim is spent).
    int code = response.code();
    retryKind =
        retryAfterNanos == RetryAfter.ABSENT
            ? RetryKind.ERROR
            : code < 500
                ? RetryKind.THROTTLED
                : code == 503 ? RetryKind.UNAVAILABLE_SAYS_WHEN : RetryKind.ERROR;
    return null;
  }

  /**
   * {@code response} ends the call after {@code attempts} by its status alone, the last of them a
   * retry the budget priced as {@code paidKind} (null: none): the budget and the listener hear it.
   * Also for a first attempt made without state ({@link #firstEnded}).
   */
  static Step returned(
      RetryPolicy policy,
      Request request,
      Response response,
      int attempts,
      @Nullable RetryKind paidKind) {
    policy.budget.returned(request.url(), response, attempts, paidKind, policy.time);
    policy.events.succeeded(request, response, attempts);
    return Step.RETURN;
  }

  /** Classifies an exception; returns the step if that alone ends the call, else null. */
  private @Nullable Step classify(Attempt attempt, IOException e, @Nullable GiveUpReason cut) {
    origin.answered(null, false, RetryAfter.ABSENT); // an exception says nothing of the pace
    retryAfterNanos = RetryAfter.ABSENT;
    retryKind =
        e instanceof SocketTimeoutException
            ? RetryKind.TIMEOUT
            : Classifier.isRefusal(e) ? RetryKind.REFUSED : RetryKind.ERROR;
    if (cut == GiveUpReason.DEADLINE_EXCEEDED) {
      return giveUp(
          GiveUpReason.DEADLINE_EXCEEDED,
          Events.describe(null, e),
          CallTimeouts.deadlineTimeout(e));
    }
    if (cut == null && deadline.remainingNanos(policy.time.nanoTime()) <= 0) {
      // The attempt ran into the deadline through its shrunk timeouts.
      return giveUp(GiveUpReason.DEADLINE_EXCEEDED, Events.describe(null, e), e);
    }
    try {
      retryable = cut == null && policy.classifier.isRetryable(e);
    } catch (RuntimeException thrown) {
      IOException wrapped =
          new IOException("okretry: the retryOnException predicate threw", thrown);
      wrapped.addSuppressed(e);
      return giveUp(GiveUpReason.NOT_RETRYABLE, "retryOnException predicate threw", wrapped);
    }
    return null;
  }

  /**
   * Reports a retry and remembers what the next decision needs, and the failure it is for until it
   * leaves; the driver then closes the response in hand and waits.
   */
  @SuppressWarnings("NullAway") // decide() described this attempt's failure (failures.last) first
  private Step retryScheduled(
      @Nullable Response response,
      @Nullable IOException error,
      long delayNanos,
      boolean throttled,
      long remaining) {
    if (throttled && response != null) {
      // After its Retry-After this retry joins the crowd of the origin that answered.
      origin.waitOn(
          OriginGate.origin(response.request().url()), response.code(), retryAfterNanos, remaining);
    }
    policy.events.retryScheduled(request, attempts, failures.last(), delayNanos);
    // Decorrelated jitter grows from its own previous draw; a server's Retry-After is not one.
    if (retryAfterNanos == RetryAfter.ABSENT) previousDelayNanos = delayNanos;
    retrying = true;
    pendingError = error;
    pendingResponse = response;
    // A wait a server asked for is its, whole, spread included; else the backoff's
    int kind = retryAfterNanos != RetryAfter.ABSENT ? CallRecord.SERVER_WAIT : CallRecord.BACKOFF;
    return waiting(kind, Step.waitFor(delayNanos));
  }

  /**
   * {@code wait}, a WAIT, starting now: the call's outcome counts its time as {@code kind} ({@link
   * CallRecord#BACKOFF}, ...). Each WAIT is made through here.
   */
  private Step waiting(int kind, Step wait) {
    record().waitStarted(policy.time.nanoTime(), kind);
    return wait;
  }

  /**
   * An attempt of a round with others in flight failed: remembered for the final exception, then
   * dropped.
   */
  private Step dropped(@Nullable IOException error) {
    failures.add(error);
    return Step.DROP;
  }

  private Step failedBelow(Throwable below, @Nullable Throwable failure) { // a bug, here or below
    return giveUp(
        GiveUpReason.NOT_RETRYABLE,
        Events.describe(null, below),
        failure instanceof IOException ? failure : below);
  }

  /**
   * The call ends for {@code reason}, its last failure {@code failure}: {@link
   * CallFailures#giveUp}. If the budget ended it, its outcome says when the origin last answered,
   * as far as the budget knows.
   */
  private Step giveUp(GiveUpReason reason, String failure, @Nullable Throwable thrown) {
    if (reason == GiveUpReason.NO_RECENT_SUCCESS || reason == GiveUpReason.BUDGET_EXHAUSTED) {
      long since = policy.budget.sinceAnsweredNanos(request.url(), policy.time.nanoTime());
      record().lastAnswered(since, policy.clock.currentTimeMillis());
    }
    policy.events.gaveUp(request, attempts, reason, failure);
    return failures.giveUp(reason, failure, thrown);
  }
}
