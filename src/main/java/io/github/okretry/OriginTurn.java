package io.github.okretry;

import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RetryAfter;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;

/**
 * One {@link LogicalCall}'s standing with the origins it calls, all through its policy's {@link
 * OriginGate}: the gate an origin-wide {@code Retry-After} closes, the crowd waiting on an origin
 * ({@code OriginPacer}) and the quota it published ({@code QuotaPacer}). Before each attempt {@link
 * #admit} answers go (null), a WAIT, or a RETURN of a local response when the call cannot wait as
 * the origin asks ({@link #refusedFor} says why); after it, {@link #answered} hears what the origin
 * said. Decides nothing else. Like its call, not thread-safe.
 *
 * <p>A call is paced after a 429/503 with {@code Retry-After} ({@link #waitOn}) or while the gate
 * holds it; it holds its turn until its attempt leaves ({@link #sending}) or the call ends unsent
 * ({@link #abandon}, which gives it back, so a canceled crowd delays no later call). Any other call
 * only reports its sends and admissions, and only while some origin is paced.
 */
final class OriginTurn {

  /** Where the call stands in its origin's crowd. */
  private enum Crowd {
    NOT_PACED,
    WAITING, // waits for a turn from its origin's pacer
    HOLDING, // holds a turn; its attempt has not left yet
    SENT // its turn's attempt is out, not answered yet
  }

  private final RetryPolicy policy;
  private final OriginGate gate;
  private final HttpUrl url; // the request's: the origin first asked
  private Crowd crowd = Crowd.NOT_PACED;
  private @Nullable Paced paced; // set by its first waitOn(): most calls are never paced

  /** What a paced call waits for: made at its first wait on an origin, reused by the next. */
  private static final class Paced {
    String origin = ""; // the origin whose pacer the call waits on
    int code; // the status that made it wait, for the local response if it cannot go
    long waitedNanos; // the Retry-After it waits out
    long ownLatestNanos; // the latest its own Retry-After and spread could put it
    long latestNanos; // the latest it may go, whatever the pacer says
    long slotNanos; // its turn once HOLDING or SENT
    GiveUpReason pastLatest = GiveUpReason.RETRY_AFTER_TOO_LONG; // if its turn comes too late
  }

  // Its unpaced attempt was reported to its origin's pacer, sent at sentNanos
  private boolean sendReported;
  private long sentNanos;
  // Its attempt in flight, as its origin's quota counts it
  private OriginGate.@Nullable QuotaTurn counted;
  private boolean uncounted; // its attempt in flight, one the gate counts for no quota pacer
  // A quota holds its attempt for at most this long (0: none), from quotaHeldSinceNanos.
  private long quotaHoldNanos;
  private long quotaHeldSinceNanos;
  // Set with a RETURN from admit(): one object made then, so a call never throttled carries none
  private @Nullable Refusal refused;

  /** Why a RETURN of {@link #admit} ends the call, for the call to hear. */
  private static final class Refusal {
    final GiveUpReason reason;
    final String failure; // "HTTP 503 (origin)": the status and who refused
    final long waitNanos; // the wait the origin still asked for

    Refusal(GiveUpReason reason, String failure, long waitNanos) {
      this.reason = reason;
      this.failure = failure;
      this.waitNanos = waitNanos;
    }
  }

  OriginTurn(RetryPolicy policy, HttpUrl url) {
    this.policy = policy;
    this.gate = policy.originGate;
    this.url = url;
  }

  /**
   * Before an attempt of {@code request} at {@code nowNanos}, {@code remainingNanos} before the
   * call's deadline: null if it may go now; else a WAIT (then ask again), or a RETURN of a local
   * response standing for the origin's, nothing sent ({@link #refusedFor}, {@link #refusal}).
   */
  @Nullable Step admit(long nowNanos, long remainingNanos, Request request) {
    if (policy.settings.originWideRetryAfter) {
      OriginGate.Closed closed = gate.check(url, nowNanos);
      if (closed != null) return heldAtGate(closed, nowNanos, remainingNanos, request);
    }
    Paced p = paced;
    if (crowd == Crowd.WAITING && p != null) {
      // Its own wait is over: a turn from the origin's pacer, one per wait. A turn past its latest
      // time is none (OriginPacer's third invariant): it ends as a Retry-After that does not fit.
      long slot = gate.reserve(p.origin, nowNanos, p.latestNanos, p.ownLatestNanos);
      if (slot - Math.max(nowNanos, p.latestNanos) > 0) {
        crowd = Crowd.NOT_PACED; // no turn was taken
        return throttled(p.pastLatest, "crowd", p.code, slot - nowNanos, request);
      }
      p.slotNanos = slot;
      crowd = Crowd.HOLDING;
      if (slot - nowNanos > 0) return Step.waitFor(slot - nowNanos);
    }
    // The origin's published quota may hold it, as long as it could wait for a Retry-After.
    return quotaTurn(nowNanos, policy.rules.latestWaitNanos(0, remainingNanos));
  }

  /** The wait the origin still asked for at the last RETURN of {@link #admit}, in nanoseconds. */
  long refusedNanos() {
    Refusal r = refused;
    return r != null ? r.waitNanos : 0;
  }

  /** Why the last RETURN of {@link #admit} ends the call. */
  GiveUpReason refusedFor() {
    Refusal r = refused;
    return r != null ? r.reason : GiveUpReason.RETRY_AFTER_TOO_LONG;
  }

  /**
   * The last RETURN of {@link #admit} as the call's failure: the status and who refused, "HTTP 503
   * (origin)".
   */
  String refusal() {
    Refusal r = refused;
    return r != null ? r.failure : "";
  }

  /** The origin asked every caller to wait: wait with it, or be throttled if this call cannot. */
  private Step heldAtGate(
      OriginGate.Closed closed, long nowNanos, long remainingNanos, Request request) {
    long wait = closed.notBeforeNanos - nowNanos;
    if (wait > policy.settings.maxRetryAfterNanos || wait >= remainingNanos) {
      abandon(); // a turn it may hold is given back
      return throttled(GiveUpReason.ORIGIN_THROTTLED, "origin", closed.code, wait, request);
    }
    // A call held at the gate joins the crowd waiting on the origin: paced like a retry.
    if (crowd == Crowd.NOT_PACED) waitOn(OriginGate.origin(url), closed.code, wait, remainingNanos);
    return Step.waitFor(policy.rules.spreadUpward(wait, remainingNanos, policy.random));
  }

  /**
   * The quota the call's origin published: wait while it is spent (or a probe is pending), past
   * that the call goes and the server decides. A hold is one wait however often the call asks again
   * (every 5 ms while a probe is pending): bounded from its first wait by the {@code maxWaitNanos}
   * the call had then, else short waits that each fit would add up past the deadline.
   */
  private @Nullable Step quotaTurn(long nowNanos, long maxWaitNanos) {
    if (counted != null || uncounted || !gate.readsQuotas()) return null;
    long heldNanos = quotaHoldNanos > 0 ? nowNanos - quotaHeldSinceNanos : 0;
    long left = Math.max(0, quotaHoldNanos > 0 ? quotaHoldNanos - heldNanos : maxWaitNanos);
    // null: no quota ever seen, or none for this origin
    OriginGate.QuotaTurn turn = gate.pacesQuotas() ? gate.admitQuota(url, nowNanos, left) : null;
    long wait = turn != null ? turn.waitNanos() : 0;
    if (wait > 0) {
      if (quotaHoldNanos == 0) { // a first wait fits in maxWaitNanos, so that is positive
        quotaHeldSinceNanos = nowNanos;
        quotaHoldNanos = maxWaitNanos;
      }
      return Step.waitFor(wait);
    }
    quotaHoldNanos = 0;
    counted = turn;
    if (turn == null) sentUncounted(); // without a quota it goes uncounted: the gate counts it
    return null;
  }

  /**
   * The call's attempt goes counted by no quota pacer: the gate counts it in flight (so a quota
   * first heard of while it is out counts it) until {@link #answered}.
   */
  void sentUncounted() {
    uncounted = true;
    sentWithoutTurn(policy, url);
  }

  /**
   * The first attempt its call sent without a turn ({@link #sentWithoutTurn}) is this turn's now:
   * in flight, counted by the gate alone, until {@link #answered}.
   */
  void tookOverFirstAttempt() {
    uncounted = true;
  }

  /**
   * A first attempt to {@code url} goes without a turn or any state of its call ({@link
   * LogicalCall#open}): as an attempt of a call that is not paced and no quota counts ({@link
   * #sentUncounted}). Its end is {@link #answeredWithoutTurn}, or, if the call goes on, {@link
   * #answered} of the turn the call then makes, told of it by {@link #tookOverFirstAttempt}.
   */
  static void sentWithoutTurn(RetryPolicy policy, HttpUrl url) {
    policy.originGate.uncountedSent(url);
  }

  /**
   * The call cannot wait as {@code who} asks: a local response stands for the origin's {@code
   * code}, with a {@code Retry-After} for the {@code askedNanos} still asked (whole seconds,
   * rounded up), an empty body, and a message that says okretry made it.
   */
  private Step throttled(
      GiveUpReason reason, String who, int code, long askedNanos, Request request) {
    refused = new Refusal(reason, "HTTP " + code + " (" + who + ")", askedNanos);
    long now = policy.clock.currentTimeMillis();
    return Step.returning(
        new Response.Builder()
            .request(request)
            .protocol(Protocol.HTTP_1_1)
            .code(code)
            .message("Throttled locally by okretry: origin asked to wait")
            .header("Retry-After", Long.toString((askedNanos + 999_999_999L) / 1_000_000_000L))
            .body(ResponseBody.create("", (MediaType) null))
            .sentRequestAtMillis(now)
            .receivedResponseAtMillis(now)
            .build());
  }

  /**
   * After its wait of {@code waitNanos} for {@code origin} (a key from {@link OriginGate#origin},
   * which answered {@code code}), the call joins the crowd waiting on it: paced within its spread's
   * bounds, never past them alone.
   */
  void waitOn(String origin, int code, long waitNanos, long remainingNanos) {
    long now = policy.time.nanoTime();
    long latest = policy.rules.latestWaitNanos(waitNanos, remainingNanos);
    // A turn past its latest time ends the call for the reason that time stands for.
    Paced p = paced;
    if (p == null) paced = p = new Paced();
    p.pastLatest =
        latest >= policy.settings.maxRetryAfterNanos
            ? GiveUpReason.RETRY_AFTER_TOO_LONG
            : GiveUpReason.DEADLINE_EXCEEDED;
    crowd = Crowd.WAITING;
    p.origin = origin;
    p.code = code;
    p.waitedNanos = waitNanos;
    p.ownLatestNanos = now + policy.rules.longestSpreadNanos(waitNanos, remainingNanos);
    p.latestNanos = now + latest;
  }

  /**
   * The attempt admitted is being sent: its turn, if it holds one, is used. Otherwise, and only
   * while some origin is paced, its origin's pacer hears of a call it does not pace, so it does not
   * mistake their load for its own spacing.
   */
  void sending() {
    sendReported = false;
    Paced p = paced;
    if (crowd == Crowd.HOLDING && p != null) {
      gate.used(p.origin, p.slotNanos, policy.time.nanoTime());
      crowd = Crowd.SENT;
    } else if (crowd != Crowd.SENT && gate.size() > 0) {
      sentNanos = policy.time.nanoTime();
      sendReported = true;
      gate.sent(url, sentNanos);
    }
  }

  /**
   * The call does not send the attempt it waits for (canceled, interrupted, factory closed,
   * deadline, gave up, or its budget skips it): a turn it holds is given back, its crowd's and the
   * quota's it was admitted on (which would otherwise count it in flight until an answer that never
   * comes, and hold the calls behind it).
   */
  void abandon() {
    quotaHoldNanos = 0;
    OriginGate.QuotaTurn c = counted;
    boolean u = uncounted;
    if (c != null || u) {
      counted = null;
      uncounted = false;
      heard(policy, url, c, u, null, false, RetryAfter.ABSENT); // as an attempt that said nothing
    }
    Paced p = paced;
    if (crowd == Crowd.HOLDING && p != null) {
      gate.givenBack(p.origin, p.slotNanos, policy.time.nanoTime());
    }
    if (crowd != Crowd.SENT) crowd = Crowd.NOT_PACED;
  }

  /**
   * True if the origin pushes back on this call or on every call: it is paced, or a gate or quota
   * holds.
   */
  boolean pushesBack(long nowNanos) {
    return crowd != Crowd.NOT_PACED || !gate.quiet(url, nowNanos);
  }

  /**
   * An attempt ended with {@code response} ({@code refused}: it proves the origin turned the call
   * away, with its {@code Retry-After} or {@link RetryAfter#ABSENT}), or with an exception ({@code
   * response} null, which says nothing of the origin's pace). The origin's quota pacer hears it; so
   * does the crowd's, of a paced attempt's answer or, for a call that was not paced, that its
   * origin admitted it.
   */
  void answered(@Nullable Response response, boolean refused, long retryAfterNanos) {
    OriginGate.QuotaTurn c = counted;
    boolean u = uncounted;
    counted = null;
    uncounted = false;
    heard(policy, url, c, u, response, refused, retryAfterNanos);
    if (crowd == Crowd.SENT) {
      crowd = Crowd.NOT_PACED;
      Paced p = paced;
      if (response != null && p != null) {
        gate.released(
            p.origin,
            p.slotNanos,
            !refused,
            retryAfterNanos,
            p.waitedNanos,
            policy.time.nanoTime());
      }
    } else if (response != null && !refused && sendReported) {
      gate.admitted(response.request().url(), sentNanos);
    }
  }

  /**
   * The end of a first attempt that went without a turn ({@link #sentWithoutTurn}) and ends its
   * call with {@code response} ({@code refused}: it proves the origin turned the call away): what
   * {@link #answered} does for a turn that is not paced and counted by no quota, from the one place
   * that says it.
   */
  static void answeredWithoutTurn(
      RetryPolicy policy, HttpUrl url, Response response, boolean refused) {
    heard(policy, url, null, true, response, refused, RetryAfter.ABSENT);
  }

  /**
   * What every attempt's end tells its origin, paced or not: the quota pacer hears it ({@code
   * counted}: the attempt's count, or null), the gate's count of uncounted sends ends ({@code
   * uncounted}), only now, once the quota the response may publish is learned, and a refusal with a
   * {@code Retry-After} closes the origin to every call, if the policy says so.
   */
  private static void heard(
      RetryPolicy policy,
      HttpUrl url,
      OriginGate.@Nullable QuotaTurn counted,
      boolean uncounted,
      @Nullable Response response,
      boolean refused,
      long retryAfterNanos) {
    OriginGate gate = policy.originGate;
    if (counted != null || (response != null && gate.readsQuotas())) {
      gate.quotaAnswered(counted, response, refused, retryAfterNanos, policy.time.nanoTime());
    }
    if (uncounted) gate.uncountedEnded(url);
    if (response != null
        && refused
        && retryAfterNanos != RetryAfter.ABSENT
        && policy.settings.originWideRetryAfter) {
      // Never close the origin for longer than any call would wait: a hostile "68 years" would
      // otherwise lock every call out long after the server recovered. The origin closed is
      // the one that answered: after a redirect, not the one first asked.
      long now = policy.time.nanoTime();
      long closedFor = Math.min(retryAfterNanos, policy.settings.maxRetryAfterNanos);
      gate.close(response.request().url(), now, now + closedFor, response.code());
    }
  }
}
