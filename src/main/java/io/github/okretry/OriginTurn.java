package io.github.okretry;

import io.github.okretry.internal.Admission;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.PacedCall;
import io.github.okretry.internal.RetryAfter;
import okhttp3.HttpUrl;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One {@link LogicalCall}'s standing with the origins it calls, under its policy's settings: the
 * gate an origin-wide {@code Retry-After} closes, the crowd of calls waiting on an origin (each
 * paced within its own spread, {@link PacedCall}), and the quota an origin published. Before each
 * attempt it answers go, wait or throttled ({@link #admit}); after each it hears what the origin
 * answered ({@link #answered}). Decides nothing else: its call turns a throttled answer into a
 * local response, and gives up for {@link #refusedFor}. Like its call, not thread-safe.
 */
final class OriginTurn {

  private final RetryPolicy policy;
  private final HttpUrl url; // the request's: the origin first asked
  private final PacedCall paced;
  private GiveUpReason pastLatest = GiveUpReason.RETRY_AFTER_TOO_LONG; // if a paced turn comes too late
  private GiveUpReason refusedFor = GiveUpReason.RETRY_AFTER_TOO_LONG; // set by admit(): read only after a THROTTLED answer

  OriginTurn(RetryPolicy policy, HttpUrl url) {
    this.policy = policy;
    this.url = url;
    this.paced = new PacedCall(policy.originGate, policy.time);
  }

  /**
   * Before an attempt at {@code nowNanos}, {@code remainingNanos} before the call's deadline: GO,
   * WAIT that long and ask again, or THROTTLED (the call cannot wait as the origin asks; {@link
   * #refusedFor} says why).
   */
  Admission admit(long nowNanos, long remainingNanos) {
    if (policy.settings.originWideRetryAfter) {
      OriginGate.Closed closed = policy.originGate.check(url, nowNanos);
      if (closed != null) return heldAtGate(closed, nowNanos, remainingNanos);
    }
    // A turn past its latest time ends the call as a Retry-After that does not fit ends.
    refusedFor = pastLatest;
    // The origin's published quota may hold it, as long as it could wait for a Retry-After.
    return paced.turn(url, policy.rules.latestWaitNanos(0, remainingNanos));
  }

  /** Why the last THROTTLED answer of {@link #admit} cannot be waited out. */
  GiveUpReason refusedFor() {
    return refusedFor;
  }

  /** The origin asked every caller to wait: wait with it, or be throttled if this call cannot. */
  private Admission heldAtGate(OriginGate.Closed closed, long nowNanos, long remainingNanos) {
    long wait = closed.notBeforeNanos() - nowNanos;
    if (wait > policy.settings.maxRetryAfterNanos || wait >= remainingNanos) {
      paced.abandon(); // a turn it may hold is given back
      refusedFor = GiveUpReason.ORIGIN_THROTTLED;
      return Admission.throttled(closed.code(), wait);
    }
    // A call held at the gate joins the crowd waiting on the origin: paced like a retry.
    if (!paced.isPaced()) waitOn(OriginGate.origin(url), closed.code(), wait, remainingNanos);
    return Admission.waitFor(policy.rules.spreadUpward(wait, remainingNanos, policy.random));
  }

  /**
   * After its wait of {@code waitNanos} for {@code origin} (which answered {@code code}), the call
   * joins the crowd waiting on it: paced within its spread's bounds, never past them alone.
   */
  void waitOn(String origin, int code, long waitNanos, long remainingNanos) {
    long now = policy.time.nanoTime();
    long latest = policy.rules.latestWaitNanos(waitNanos, remainingNanos);
    // A turn past its latest time ends the call for the reason that time stands for.
    pastLatest =
        latest >= policy.settings.maxRetryAfterNanos ? GiveUpReason.RETRY_AFTER_TOO_LONG : GiveUpReason.DEADLINE_EXCEEDED;
    paced.waitOn(origin, code, waitNanos, now + policy.rules.longestSpreadNanos(waitNanos, remainingNanos), now + latest);
  }

  /** The attempt admitted is being sent ({@link PacedCall#sending}). */
  void sending() {
    paced.sending(url);
  }

  /** The call ends without sending the attempt it waits for: a turn it holds is given back. */
  void abandon() {
    paced.abandon();
  }

  /** True if the origin pushes back on this call or on every call: it is paced, or a gate or quota holds. */
  boolean pushesBack(long nowNanos) {
    return paced.isPaced() || !policy.originGate.quiet(url, nowNanos);
  }

  /**
   * An attempt ended with {@code response} ({@code refused}: it proves the origin turned the call
   * away, with its {@code Retry-After} or {@link RetryAfter#ABSENT}), or with an exception ({@code
   * response} null, which says nothing of the origin's pace).
   */
  void answered(@Nullable Response response, boolean refused, long retryAfterNanos) {
    paced.answered(response, refused, retryAfterNanos);
    if (response != null && refused && retryAfterNanos != RetryAfter.ABSENT && policy.settings.originWideRetryAfter) {
      // Never close the origin for longer than any call would wait: a hostile "68 years" would
      // otherwise lock every call out long after the server recovered. The origin closed is
      // the one that answered: after a redirect, not the one first asked.
      long now = policy.time.nanoTime();
      long closedFor = Math.min(retryAfterNanos, policy.settings.maxRetryAfterNanos);
      policy.originGate.close(response.request().url(), now, now + closedFor, response.code());
    }
  }
}
