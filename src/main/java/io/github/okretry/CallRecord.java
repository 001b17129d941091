package io.github.okretry;

import io.github.okretry.internal.Durations;
import io.github.okretry.internal.OriginStreaks;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * What one {@link LogicalCall}'s {@link RetryOutcome} is made of, recorded as the call goes: the
 * network requests its attempts sent, the time it waited, whether the server may have acted on it,
 * and, as the {@link RetryOutcome.Mark} its response carries, the outcome. Made only when a call
 * does more than succeed at its first attempt (such a response is read as it is: {@link
 * RetryOutcome#of(Response)}), so the success path pays nothing for it. Like its call, not
 * thread-safe.
 */
final class CallRecord extends RetryOutcome.Mark {

  private static final long NOT_WAITING = Long.MIN_VALUE;

  // The kinds of wait, as RetryOutcome splits the time waited: an int, so a wait allocates nothing
  /** A backoff between attempts. */
  static final int BACKOFF = 0;

  /** A wait the server asked for: a {@code Retry-After}, or a spent quota's reset. */
  static final int SERVER_WAIT = 1;

  /** A turn behind other calls: the origin's crowd, its gate, a published quota's pacer. */
  static final int PACING = 2;

  /** A retry the budget skipped, and the grace after the last one. */
  static final int BUDGET = 3;

  // The request with the mark, made once, sent from the second attempt on
  private @Nullable Request marked;
  private int requestsSent;
  private long backoffNanos; // the time waited, by kind
  private long serverWaitNanos;
  private long pacingNanos;
  private long budgetNanos;
  private long waitFromNanos = NOT_WAITING;
  private int waitKind; // of the wait started last
  // When the server asked the call to come back, in epoch millis, if it ended not waiting for it
  private long comeBackAtMillis = RetryOutcome.NO_COME_BACK;
  // When its origin last answered, in epoch millis, if the budget ended it and knows
  private long lastAnsweredAtMillis = RetryOutcome.NOT_ANSWERED;
  // None sent: nothing processed
  private RetryOutcome.Processing processing = RetryOutcome.Processing.NOT_PROCESSED;
  private int lastEnded; // the number of the attempt that ended last
  private int lastCode; // the status it got, 0 for none: what the call returns if it ends there
  private int ended; // attempts whose outcome the call heard: the others were canceled unheard
  // Set once the call ends (end()), before `over`, whose write publishes them to the thread that
  // reads the response or the exception.
  private int attempts;
  private @Nullable GiveUpReason reason;
  private @Nullable String key;
  private volatile boolean over;

  /**
   * {@code request} with the mark: what attempts send from the second on, so their responses carry
   * it.
   */
  Request marked(Request request) {
    Request m = marked;
    return m != null ? m : (marked = on(request));
  }

  /**
   * A wait of {@code kind} ({@link #BACKOFF}, {@link #SERVER_WAIT}, {@link #PACING} or {@link
   * #BUDGET}) starts at {@code nowNanos}.
   */
  void waitStarted(long nowNanos, int kind) {
    waitFromNanos = nowNanos;
    waitKind = kind;
  }

  /** The wait started last, if any, is over at {@code nowNanos}: its time goes to its kind. */
  void waitEnded(long nowNanos) {
    if (waitFromNanos == NOT_WAITING) return;
    long waited = Math.max(0, nowNanos - waitFromNanos);
    waitFromNanos = NOT_WAITING;
    switch (waitKind) {
      case SERVER_WAIT:
        serverWaitNanos += waited;
        break;
      case PACING:
        pacingNanos += waited;
        break;
      case BUDGET:
        budgetNanos += waited;
        break;
      default:
        backoffNanos += waited;
    }
  }

  /**
   * The call ends not waiting {@code waitNanos} the server asked for, at {@code nowMillis} on the
   * wall clock: its outcome says when to come back. The wait is measured as {@code Retry-After} is
   * (an HTTP-date against the response's {@code Date}, so the server's clock skew is not in it),
   * and clamped as it is, to 0 to 24 hours.
   */
  void comeBackAfter(long waitNanos, long nowMillis) {
    long nanos = Math.min(Math.max(0, waitNanos), Durations.LONGEST_NANOS);
    comeBackAtMillis = nowMillis + (nanos + 999_999L) / 1_000_000L; // never earlier than asked
  }

  /**
   * The budget ends the call at {@code nowMillis} on the wall clock, its origin last answered
   * {@code sinceNanos} before on the policy's clock ({@link OriginStreaks#NO_ANSWER}: not that the
   * budget knows): its outcome says when, to the millisecond, never earlier.
   */
  void lastAnswered(long sinceNanos, long nowMillis) {
    if (sinceNanos == OriginStreaks.NO_ANSWER) return;
    lastAnsweredAtMillis = nowMillis - sinceNanos / 1_000_000L;
  }

  /**
   * {@code attempt} ended, with {@code response}, or a failure if null; {@code provenUnprocessed}:
   * that end proves the server processed none of its requests, as the retry decision read it
   * ({@link Classifier#provesNotProcessed(Response)} and {@link
   * Classifier#provesNotProcessed(Throwable, int)}: one rule for both).
   */
  void attemptEnded(Attempt attempt, @Nullable Response response, boolean provenUnprocessed) {
    lastEnded = attempt.number;
    lastCode = response != null ? response.code() : 0;
    ended++;
    requestsSent += attempt.requestsSent(response);
    RetryOutcome.Processing p =
        provenUnprocessed
            ? RetryOutcome.Processing.NOT_PROCESSED
            : response != null ? RetryOutcome.Processing.PROCESSED : RetryOutcome.Processing.MAYBE;
    if (p.ordinal() > processing.ordinal()) processing = p;
  }

  /** True if the attempt that ended last sent the marked request: its response carries the mark. */
  boolean lastSentMarked() {
    return lastEnded >= 2;
  }

  /**
   * The call ends after {@code attempts} ({@code reason}: why it gave up, or null), its key {@code
   * key}. An attempt it never heard the end of (a hedge, or the attempt it hedged, canceled when
   * another answered for the call) counts as one request sent, which may have been processed.
   */
  void end(int attempts, @Nullable GiveUpReason reason, @Nullable String key) {
    int unheard = Math.max(0, attempts - ended);
    if (unheard > 0 && processing == RetryOutcome.Processing.NOT_PROCESSED) {
      processing = RetryOutcome.Processing.MAYBE;
    }
    requestsSent += unheard;
    this.attempts = attempts;
    this.reason = reason;
    this.key = key;
    over = true;
  }

  /**
   * The call's outcome once it ended ({@link #end}), made at each ask (a response's outcome is read
   * rarely, and a call that retried pays nothing for it until then); null before.
   */
  @Override
  @Nullable RetryOutcome outcome() {
    if (!over) return null;
    return new RetryOutcome(
        attempts,
        requestsSent,
        backoffNanos,
        serverWaitNanos,
        pacingNanos,
        budgetNanos,
        comeBackAtMillis,
        lastAnsweredAtMillis,
        reason,
        key,
        processing,
        lastCode);
  }
}
