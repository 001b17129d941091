package io.github.okretry;

import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RetryTokenBucket;
import io.github.okretry.internal.RetryTokenBucket.Kind;
import io.github.okretry.internal.RetryTokenBucket.Payment;
import io.github.okretry.internal.RetryTokenBucket.Streak;
import io.github.okretry.internal.Tuning;
import java.io.IOException;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One {@link LogicalCall}'s standing with its policy's {@link RetryBudget}: the retry it paid for
 * and has not sent (given back if it never is), the price of the retry in flight (paid back if it
 * succeeds), the attempt it numbered on its origin's streak, and, while the budget holds its retry,
 * the failure the call ends with if the retry is never sent and how long its last attempt waits for
 * an answer. Decides nothing: {@link LogicalCall} asks ({@link #pay}) and acts. Like its call, not
 * thread-safe.
 */
final class BudgetTurn {

  private final RetryBudget budget;
  private final Request request;
  private @Nullable String origin; // OriginGate.origin of the request, once needed

  private @Nullable Streak paidOn; // the streak a retry paid for and not sent yet is counted on,
  private long paidMilli; // at this price
  private long sentPaidMilli; // the price of the paid retry the latest attempt is (0: none)
  // The streak the attempt in flight is numbered on, as countedSend
  private @Nullable Streak countedOn;
  private long countedSend;

  private @Nullable Streak held; // the streak the retry now waiting is held on, or null
  // A held retry's failure: the call's if it is never sent
  private @Nullable IOException heldFailure;
  private @Nullable HeldResponse heldResponse; // made at the call's first held retry of a response
  // A held last attempt waits for a send past heldUntilSend to answer, asking heldPolls times so
  // far.
  private boolean awaitingAnswer;
  private long heldUntilSend;
  private int heldPolls;

  BudgetTurn(RetryBudget budget, Request request) {
    this.budget = budget;
    this.request = request;
  }

  /**
   * The request's origin key ({@link OriginGate#origin}), made once; null until a failure needs it.
   */
  @Nullable String origin() {
    return origin;
  }

  private String originKey() {
    String key = origin;
    return key != null ? key : (origin = OriginGate.origin(request.url()));
  }

  /**
   * Pays for a retry of {@code kind} on its origin's streak ({@link RetryBudget#payForRetry}): a
   * PAID retry is given back if it is not sent ({@link #refund}); a HELD one is remembered ({@link
   * #isHeld}) until it is paid or the call ends ({@link #endHold}).
   */
  Payment pay(Kind kind, int maxRetries, long nowNanos) {
    Streak streak = budget.streak(originKey());
    long price = budget.price(kind);
    Payment paid = budget.payForRetry(streak, kind, price, maxRetries, nowNanos);
    if (paid == Payment.HELD && streak != null) {
      if (streak != held) awaitingAnswer = false; // a new streak: its sends are numbered afresh
      held = streak;
    } else if (paid == Payment.PAID || streak == null) { // null: no budget, which never holds
      held = null;
      paidOn = streak;
      paidMilli = price;
      return Payment.PAID;
    }
    return paid;
  }

  /** Whether the retry now waiting is held ({@link #pay} answered HELD and nothing since). */
  boolean isHeld() {
    return held != null;
  }

  /**
   * The retry held is waited for: {@code failure} (null for a response) is the call's if it is
   * never sent; a response is kept by the returned keeper, which the WAIT hands the response to.
   */
  @Nullable HeldResponse hold(@Nullable IOException failure, boolean response, long readNanos) {
    heldFailure = failure;
    if (!response) return null;
    HeldResponse keeper = heldResponse != null ? heldResponse : (heldResponse = new HeldResponse());
    keeper.readWithin(readNanos);
    return keeper;
  }

  /**
   * The failure held, to ride on the final exception now that the retry goes; the response kept is
   * let go.
   */
  @Nullable IOException released() {
    IOException e = heldFailure;
    heldFailure = null;
    awaitingAnswer = false;
    if (heldResponse != null) heldResponse.take();
    return e;
  }

  /**
   * The call ends without sending the retry it held: its failure, to throw; else (null) the
   * response kept is in {@link HeldResponse#take} of {@link #keptResponse}.
   */
  @Nullable IOException endHold() {
    held = null;
    IOException e = heldFailure;
    heldFailure = null;
    return e;
  }

  /** The response kept for a held retry, taken; null if none. */
  @Nullable Response keptResponse() {
    return heldResponse != null ? heldResponse.take() : null;
  }

  /**
   * Whether a held call's last attempt, about to end unsent, waits a little for its origin to
   * answer a call: a blip is over a moment before anything says so, and the next attempt any call
   * sends may. It waits until a success, a failure of an attempt sent after this moment, or {@link
   * Tuning#HELD_ANSWER_WAIT_NANOS}, counted in asks every {@link Tuning#HELD_ANSWER_POLL_NANOS}
   * (not read off the clock: bounded whatever the clock does).
   */
  boolean awaitsAnswer(long remainingNanos) {
    RetryTokenBucket b = budget.bucket;
    Streak hold = held;
    if (b == null || hold == null || remainingNanos <= Tuning.HELD_ANSWER_POLL_NANOS) return false;
    if (!awaitingAnswer) {
      awaitingAnswer = true;
      heldUntilSend = b.lastSend(hold);
      heldPolls = 0;
    }
    return heldPolls++ < Tuning.HELD_ANSWER_WAIT_NANOS / Tuning.HELD_ANSWER_POLL_NANOS
        && b.mayYetAnswer(hold, heldUntilSend);
  }

  /**
   * The attempt admitted is being sent: the retry paid for (if it is one) keeps its price unless it
   * succeeds, and, while its origin has a failing streak, the attempt is numbered on it.
   */
  void sending(boolean numbered) {
    sentPaidMilli = paidMilli;
    paidMilli = 0;
    paidOn = null;
    RetryTokenBucket b = budget.bucket;
    if (!numbered || b == null || !b.hasOpenStreaks()) return;
    Streak s = b.openStreak(originKey());
    if (s == null) return;
    countedOn = s;
    countedSend = b.sent(s);
  }

  /** The numbered attempt in flight was answered: {@code response}, or a failure if null. */
  void answered(@Nullable Response response) {
    Streak s = countedOn;
    RetryTokenBucket b = budget.bucket;
    if (s == null || b == null) return;
    countedOn = null;
    b.answered(s, countedSend, response == null || !RetryBudget.showsServerWorking(response));
  }

  /**
   * The price of the paid retry the latest attempt is, 0 if it is none: what its success pays back.
   */
  long sentPaidMilli() {
    return sentPaidMilli;
  }

  /**
   * The retry paid for, of {@code kind}, will not be sent: the budget gets its price back. A hold
   * ends.
   */
  void refund(Kind kind) {
    held = null;
    heldFailure = null;
    if (heldResponse != null) heldResponse.take();
    Streak paid = paidOn;
    if (paid == null) return;
    paidOn = null;
    budget.refund(kind, paidMilli, paid);
    paidMilli = 0;
  }
}
