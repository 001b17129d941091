package io.github.okretry;

import io.github.okretry.internal.OriginLatencies;
import io.github.okretry.internal.RepeatSafety;
import io.github.okretry.internal.Tuning;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The hedging part of one {@link LogicalCall}: which attempts of the current round are in flight,
 * when the next hedge is due, and whether this call may hedge at all. A round is an attempt sent by
 * {@link LogicalCall#next} and the hedges sent beside it; it ends when one of them ends the call,
 * or when the last of them failed (then the call retries or gives up as without hedges).
 *
 * <p>A hedge goes in two steps, because a driver may have to queue it ({@code RetryingCallFactory}
 * hands it to OkHttp's dispatcher, which runs only so many calls per host, so in a burst a hedge
 * waits behind the very attempts it hedges): when it is due ({@link #due}) it is handed to the
 * driver, pending; only when it leaves the driver's queue for the network ({@link #departs}) is it
 * checked again, paid for and counted as an attempt. A hedge still pending when its round ends
 * never goes, costs nothing and was never reported. At most one is pending: the next is due a delay
 * after this one went.
 *
 * <p>Made only for a call of a factory that hedges and whose request is safe to send twice, so a
 * call without hedging pays nothing for it. It is given what it needs of its call (the request, the
 * policy's budget and events), not the call. No I/O; its side effects are the budget a hedge
 * withdraws from ({@link #departs}) and the factory's per-origin latencies and refusals it records
 * ({@link Shared}). Like its call, not thread-safe.
 */
final class Hedging {

  private final Request request; // the call's, as each attempt sends it
  private final RetryBudget budget; // the policy's: a hedge pays as a retry after an error does
  private final Events events;
  private final int maxHedges;
  private final long fixedDelayNanos; // 0: adaptive
  private final long floorNanos;
  private final OriginLatencies origins; // the factory's: refusals, answers and their latencies

  private int inFlight; // attempts of this round not ended yet
  private int sent; // hedges sent this round
  private long lastSentNanos; // when this round's latest attempt was sent
  private long armedNanos; // the delay the driver was told for the next hedge; 0: none
  private boolean refused; // the origin refused or paced this call: no more hedges, ever
  private @Nullable Attempt round; // this round's first attempt, whose call each hedge is of
  // The hedge handed to the driver and not gone yet. Each hedge is its own Attempt, never reused:
  // one left behind in a queue by an earlier round can never pass for this round's.
  private @Nullable Attempt pending;

  /**
   * What the calls of one {@link RetryingCallFactory} share for hedging: its {@link HedgingPolicy},
   * and what it learns of each origin (refusals, and the latencies of answers). Thread-safe.
   */
  static final class Shared {
    final HedgingPolicy policy;
    final OriginLatencies origins;

    Shared(HedgingPolicy policy) {
      this.policy = policy;
      // A fixed delay learns no percentile, but the table's refusals and answers serve it too.
      this.origins =
          new OriginLatencies(
              policy.percentile() > 0 ? policy.percentile() : Tuning.HEDGE_PERCENTILE);
    }
  }

  private Hedging(Shared shared, Request request, RetryBudget budget, Events events) {
    this.request = request;
    this.budget = budget;
    this.events = events;
    this.maxHedges = shared.policy.maxHedges();
    this.fixedDelayNanos = shared.policy.delayNanos();
    this.floorNanos = shared.policy.floorNanos();
    this.origins = shared.origins;
  }

  /**
   * The hedging state of a call of {@code request} under a policy of {@code budget} and {@code
   * events}, or null if it is never hedged: its factory does not hedge ({@code shared} null), or
   * its request is not safe to have twice in flight (not idempotent and keyless, or a body that
   * cannot be written twice), or it may make only one attempt.
   */
  static @Nullable Hedging of(
      @Nullable Shared shared,
      Request request,
      RepeatSafety repeat,
      int maxRetries,
      RetryBudget budget,
      Events events) {
    // Twice in flight is safe only if sending it twice is (idempotent, body repeatable) with no
    // proof needed.
    if (shared == null || !repeat.safeToRepeat(false) || maxRetries < 1) return null;
    return new Hedging(shared, request, budget, events);
  }

  /**
   * {@code primary} was sent at {@code nowNanos}: a new round, nothing else in flight; the first
   * hedge armed on it.
   */
  void roundStarted(Attempt primary, long nowNanos) {
    primary.sentNanos = nowNanos;
    round = primary;
    inFlight = 1;
    sent = 0;
    lastSentNanos = nowNanos;
    pending = null;
    primary.hedgeAfterNanos = delayNanos();
  }

  /**
   * True while an attempt of the round is in flight: a wait ending then is a hedge's ({@link
   * #due}).
   */
  boolean inRound() {
    return inFlight > 0;
  }

  /** The round is over (the call ends, waits or retries): a hedge still pending never goes. */
  void roundEnded() {
    pending = null;
    armedNanos = 0;
    inFlight = 0; // any still in flight are canceled by the driver, their outcomes unread
  }

  /**
   * How long after the latest send of this round the next hedge is due, or 0 for none (no more
   * hedges this round, one is pending, the origin refused or has not answered yet, or the adaptive
   * delay is still warming up). What it answers is what {@link #due} holds the driver's timer to.
   */
  private long delayNanos() {
    armedNanos = nextDelayNanos();
    return armedNanos;
  }

  private long nextDelayNanos() {
    if (refused || pending != null || sent >= maxHedges || inFlight == 0) return 0;
    // An origin that never answered may be one that refuses everything: no hedge to it yet.
    if (fixedDelayNanos > 0) return origins.hasAnswered(request.url()) ? fixedDelayNanos : 0;
    long percentile = origins.percentileNanos(request.url());
    if (percentile == 0) return 0; // warming up: nothing learned to hedge by
    long margin = (long) Math.min(Long.MAX_VALUE / 2.0, percentile * Tuning.HEDGE_MARGIN);
    return Math.max(floorNanos, margin);
  }

  /**
   * The hedge to hand to the driver at {@code nowNanos} (a SEND), numbered {@code number} if it
   * goes, or a DROP, checked in this order: one is armed and its delay is over; {@code origin} does
   * not push back (is not refusing or pacing calls, and has not refused a call of this factory
   * lately: else this call never hedges again); the call {@code mayAttempt} again (within its
   * attempts and its deadline). Nothing is paid or counted yet: it is pending until it {@link
   * #departs}.
   */
  Step due(long nowNanos, OriginTurn origin, boolean mayAttempt, int number) {
    Attempt first = round;
    if (first == null || !isDue(nowNanos) || pushesBack(nowNanos, origin) || !mayAttempt) {
      return Step.DROP;
    }
    armedNanos = 0; // the next is armed once this one went
    Attempt hedge = first.newHedge();
    pending = hedge;
    hedge.number = number; // attempts start one at a time, and none while a hedge is pending
    return hedge;
  }

  /**
   * True if {@code hedge}, pending, may leave the driver's queue at {@code nowNanos}: it is still
   * this round's, the round still has an attempt in flight, {@code origin} does not push back, the
   * call {@code mayAttempt}, and the budget lets it go ({@link RetryBudget#payForHedge}: the origin
   * has not failed since it last answered, and it pays as for a retry after an error). Either way
   * it is pending no more; if true, the caller counts it and then {@link #sent} it.
   */
  boolean departs(Attempt hedge, long nowNanos, OriginTurn origin, boolean mayAttempt) {
    if (hedge != pending) return false; // its round ended while it waited in the queue
    pending = null;
    if (inFlight == 0 || refused || pushesBack(nowNanos, origin) || !mayAttempt) return false;
    return budget.payForHedge(request.url(), nowNanos);
  }

  private boolean isDue(long nowNanos) {
    return armedNanos > 0
        && inFlight > 0
        && !refused
        && pending == null
        && sent < maxHedges
        && nowNanos - lastSentNanos >= armedNanos;
  }

  private boolean pushesBack(long nowNanos, OriginTurn origin) {
    // Hedging is for a healthy service with a tail, never for one that pushes back.
    if (!origin.pushesBack(nowNanos) && !origins.refusedRecently(request.url(), nowNanos)) {
      return false;
    }
    refused();
    return true;
  }

  /** How long the latest attempt of this round has gone unanswered. */
  long silentNanos(long nowNanos) {
    return nowNanos - lastSentNanos;
  }

  private void refused() { // the call will not hedge again: its origin refused it or paces it
    refused = true;
    armedNanos = 0;
  }

  /**
   * {@code hedge}, which {@link #departs}, goes now beside the attempts in flight; the next hedge
   * armed on it.
   */
  void sent(Attempt hedge, long nowNanos) {
    hedge.sentNanos = nowNanos;
    sent++;
    inFlight++;
    lastSentNanos = nowNanos;
    hedge.hedgeAfterNanos = delayNanos();
  }

  /** {@code attempt} of this round ended; true if others of the round are still in flight. */
  boolean ended() {
    if (inFlight > 0) inFlight--;
    if (inFlight == 0) armedNanos = 0;
    return inFlight > 0;
  }

  /**
   * {@code attempt} answered {@code response} at {@code nowNanos}: if it is {@code refusing} (a
   * 429/503 proven unprocessed or with a {@code Retry-After}), this call hedges no more and no call
   * hedges to the origin that answered for a while; if it {@code ends} the call, its latency
   * teaches the adaptive delay, and if others are still in flight it won (logged).
   */
  void answered(
      Attempt attempt,
      @Nullable Response response,
      boolean refusing,
      boolean ends,
      boolean othersInFlight,
      long nowNanos) {
    if (response == null) return;
    if (refusing) {
      refused();
      origins.refused(response.request().url(), nowNanos);
    }
    if (!ends) return;
    origins.record(response.request().url(), nowNanos - attempt.sentNanos);
    if (othersInFlight) events.hedgeWon(request, attempt.number, attempt.hedge, inFlight);
  }
}
