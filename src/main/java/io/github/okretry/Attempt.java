package io.github.okretry;

import io.github.okretry.internal.CallDeadline;
import io.github.okretry.internal.SendTracker;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a {@link LogicalCall}, as a driver sends it: the attempt is the SEND {@link Step}
 * itself (so a send allocates nothing), with the delay of a hedge beside it ({@link
 * #hedgeAfterNanos}), and the driver hands it back to {@link LogicalCall#ended}. Attempts of one
 * call follow one another, so one is reused; each hedge (two in flight) takes its own ({@link
 * Hedging}). The factory's attempts carry it as a tag of the OkHttp call that sends it ({@link
 * OnCall}), for {@link AttemptSettings}, which also asks a hedge's {@link Departure} whether it may
 * still go when OkHttp's dispatcher runs it.
 */
final class Attempt extends Step implements SendTracker.OnNetworkRequest {
  private final LogicalCall call;
  int number; // 1 for the first
  long sentNanos; // on the policy's clock; read only when hedging

  /**
   * How long after this attempt goes (a hedge: leaves its queue) the driver asks {@link
   * LogicalCall#next} again, with attempts in flight, for a hedge; 0 for none. Set by {@link
   * Hedging}.
   */
  long hedgeAfterNanos;

  final boolean hedge; // sent beside an attempt in flight
  private @Nullable SendTracker tracker;
  private @Nullable Call trackedCall;

  /**
   * Its gate in a driver that queues it, set before OkHttp has it (asked for a hedge only); else
   * null.
   */
  @Nullable Departure departure;

  private static final KClass<OnCall> ON_CALL = JvmClassMappingKt.getKotlinClass(OnCall.class);

  /**
   * How the factory's attempt rides on the OkHttp call that sends it, for {@link AttemptSettings}
   * and for a {@link RetryInterceptor} in the factory's client. A tag of that call, not of its
   * request: the request of the response the caller gets carries nothing of okretry's, so a
   * follow-up built from it is a call like any other. The driver empties it once the attempt's
   * outcome is in hand: the response reaches its call, and must not keep the attempt, its logical
   * call and its failures alive.
   */
  static final class OnCall implements Function0<OnCall> {
    volatile @Nullable Attempt attempt;

    /** Tags {@code sent}, the OkHttp call of {@code attempt}, with it. */
    static OnCall tag(Call sent, Attempt attempt) {
      OnCall on = new OnCall();
      on.attempt = attempt;
      return sent.tag(ON_CALL, on);
    }

    @Override
    public OnCall invoke() {
      return this;
    }
  }

  /** The factory's attempt that {@code call} sends, until its outcome is in hand; else null. */
  static @Nullable Attempt ofCall(Call call) {
    OnCall on = call.tag(ON_CALL);
    return on != null ? on.attempt : null;
  }

  /** Asked when a queued attempt (a hedge) leaves the driver's queue, before anything is sent. */
  interface Departure {
    /**
     * The attempt's {@code response}, in the chain of the OkHttp call that sent it: its driver
     * decides now, while that call still holds the response's connection, which the decision may
     * close ({@link ConnectionCheck}), and ignores the call's callback after.
     */
    void answeredInChain(Response response);

    /**
     * True if the attempt goes now (then it is paid for and counted); false to drop it unsent.
     * Asked again, it answers the same: true once it went.
     */
    boolean departs();
  }

  Attempt(LogicalCall call) {
    this(call, false);
  }

  Attempt(LogicalCall call, boolean hedge) {
    this.call = call;
    this.hedge = hedge;
  }

  /**
   * {@code step}, a {@link Step.Kind#SEND} of a call with state, as the attempt to send.
   *
   * @throws IllegalStateException if it is any other step
   */
  static Attempt of(Step step) {
    if (!(step instanceof Attempt)) throw new IllegalStateException("not an attempt: " + step);
    return (Attempt) step;
  }

  /** A hedge to send beside this attempt: an attempt of the same call, its own (never reused). */
  Attempt newHedge() {
    return new Attempt(call, true);
  }

  /**
   * The request to send, with its idempotency key if it has one; from the second attempt on, with
   * the mark that carries the call's outcome to the response ({@link CallRecord#marked}); with its
   * number ({@code attempt=N; max=M}) if the policy names an {@code attemptHeader}.
   */
  Request request() {
    Request r = number >= 2 ? call.markedRequest() : call.request;
    String header = call.policy.settings.attemptHeader;
    if (header == null) return r;
    return r.newBuilder()
        .header(header, "attempt=" + number + "; max=" + (call.maxRetries + 1))
        .build();
  }

  /** The policy of its call. */
  RetryPolicy policy() {
    return call.policy;
  }

  /** The URL its call's requests go to. */
  HttpUrl url() {
    return call.request.url();
  }

  /** What watches its network requests, once it was attached to a call; else null. */
  @Nullable SendTracker tracker() {
    return tracker;
  }

  /** The end of the logical call on the policy's clock, or {@link CallDeadline#NO_DEADLINE}. */
  long deadlineNanos() {
    return call.deadline.endNanos();
  }

  /** True if nothing underneath okretry (OkHttp's own retries) may send this request twice. */
  boolean mustNotRepeatUnderneath() {
    return !call.repeat.isIdempotent();
  }

  /** How long the driver's {@link DeadlineWatch} bounds this attempt in flight, or 0 for none. */
  long watchNanos() {
    return call.deadline.watchNanos(call.policy.time.nanoTime());
  }

  /** The call timeout a separate OkHttp call for this attempt gets, or 0 for none. */
  long callTimeoutNanos() {
    return call.deadline.attemptCallTimeoutNanos(call.policy.time.nanoTime());
  }

  /**
   * Watches {@code okhttpCall} for this attempt's network requests: every attempt is watched, so
   * that its outcome counts OkHttp's own resends (a POST resent on a fresh connection after a
   * pooled one dropped it) on either driver, with or without a listener.
   */
  void attachTo(Call okhttpCall) {
    SendTracker t = tracker;
    if (t == null
        || trackedCall != okhttpCall) { // the interceptor has one call; the factory one per attempt
      tracker =
          t =
              SendTracker.attach(
                  okhttpCall, call.policy.events.watchesNetworkRequests() ? this : null);
      trackedCall = okhttpCall;
    }
    t.reset();
  }

  /**
   * This attempt, sent without state, was watched by {@code t} on {@code okhttpCall}: the call's
   * state, made after it ({@link LogicalCall#firstEnded}), goes on with the same tracker.
   */
  void watchedBy(SendTracker t, Call okhttpCall) {
    tracker = t;
    trackedCall = okhttpCall;
  }

  /** Stops this attempt's watch, if any: its call's later requests are another call's. */
  void stopWatching() {
    SendTracker t = tracker;
    if (t != null) t.stop();
  }

  /** True unless this is a queued hedge that its {@link Departure} says must not go after all. */
  boolean departs() {
    Departure d = departure;
    return d == null || d.departs();
  }

  /**
   * Network requests this attempt sent, as its tracker counted them (if none watched it, the ones
   * its {@code response} shows, {@link RetryOutcome#requestsIn}, or 1 for a failure). One that
   * wrote none counts as none for a response from OkHttp's cache, which sent nothing; else as one
   * unless the call uses that as proof that it was not sent ({@link LogicalCall#needsTracker}): a
   * response an interceptor below okretry made, and a failure the call's processing reads as
   * "maybe", count as the one request they may stand for.
   */
  int requestsSent(@Nullable Response response) {
    SendTracker t = tracker;
    int n =
        t != null
            ? t.requestsThisAttempt()
            : response != null ? RetryOutcome.requestsIn(response) : 1;
    if (n > 0 || call.needsTracker) return n;
    return response != null && RetryOutcome.requestsIn(response) == 0 ? 0 : 1;
  }

  /**
   * Network requests whose headers this attempt wrote whole, as its tracker counted them, or {@link
   * Classifier#UNWATCHED} where the call does not take that count as proof (only a non-idempotent
   * request that may be retried, or a listener that hears network requests, does: {@link
   * LogicalCall#needsTracker}): what {@link Classifier#provesNotProcessed(Throwable, int)} needs of
   * it.
   */
  int requestsWritten() {
    SendTracker t = tracker;
    return t != null && call.needsTracker ? t.requestsThisAttempt() : Classifier.UNWATCHED;
  }

  /**
   * True if OkHttp sent more requests for this attempt than {@code response} shows ({@link
   * RetryOutcome#requestsIn}: itself and its prior responses): a silent resend, which only a mark
   * on the response can count.
   */
  boolean resentUnseen(Response response) {
    return resentUnseen(tracker, response);
  }

  /** {@link #resentUnseen(Response)} of an attempt that {@code t} watched (null: none did). */
  static boolean resentUnseen(@Nullable SendTracker t, Response response) {
    return t != null && t.requestsThisAttempt() > RetryOutcome.requestsIn(response);
  }

  @Override
  public void onNetworkRequest(int requestInAttempt) {
    call.policy.events.networkRequest(call.request, number, requestInAttempt);
  }
}
