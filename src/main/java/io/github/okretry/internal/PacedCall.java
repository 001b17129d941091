package io.github.okretry.internal;

import okhttp3.HttpUrl;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One logical call's part in the pacing of its origin's crowd ({@link OriginPacer}, reached
 * through {@link OriginGate}): whether the call waits on an origin for a turn, the turn it holds,
 * and when its current attempt was sent, so that the origin's pacer hears what the origin
 * answered. A call is paced after a 429/503 with {@code Retry-After} (once that wait is over) or
 * while the origin-wide gate holds it; any other call only reports its sends and admissions, and
 * only while some origin is paced.
 *
 * <p>A turn is held from {@link #turn} until its attempt leaves ({@link #sending}) or the call
 * ends without sending it ({@link #abandon}), which gives it back, so a canceled crowd leaves no
 * turns behind to delay later calls. It also asks the origin's {@link QuotaPacer} before each
 * attempt (only while some origin published a quota) and reports what each answer published.
 *
 * <p>Internal API: not covered by compatibility guarantees. Not thread-safe: one per logical call.
 */
public final class PacedCall {

  private static final int NOT_PACED = 0;
  private static final int WAITING = 1; // waits for a turn from its origin's pacer
  private static final int HOLDING = 2; // holds a turn; its attempt has not left yet
  private static final int SENT = 3; // its turn's attempt is out, not answered yet
  private static final long NOT_TIMED = Long.MIN_VALUE;

  private final OriginGate origins;
  private final TimeSource time;
  private int state = NOT_PACED;
  private @Nullable String origin; // the origin whose pacer this call waits on
  private int code; // the status that made it wait, for the local response if it cannot go
  private long waitedNanos; // the Retry-After it waits out
  private long ownLatestNanos; // the latest its own Retry-After and spread could put it
  private long latestNanos; // the latest it may go, whatever the pacer says
  private long slotNanos; // its turn once HOLDING or SENT
  private long attemptSentNanos = NOT_TIMED; // set only while some origin is paced
  private @Nullable String quotaOrigin; // the origin whose quota pacer counts the attempt in flight
  private long quotaSeq = -1; // its number there; -1: not counted
  private long quotaHeldSinceNanos = NOT_TIMED; // when its quota began to hold the attempt; NOT_TIMED: not held
  private long quotaHoldNanos; // the longest it could wait then

  public PacedCall(OriginGate origins, TimeSource time) {
    this.origins = origins;
    this.time = time;
  }

  /** True from {@link #waitOn} until the attempt its turn released has been answered. */
  public boolean isPaced() {
    return state != NOT_PACED;
  }

  /**
   * The call now waits on {@code origin} (a key from {@link OriginGate#origin}), which answered
   * {@code code} with a wait of {@code waitedNanos}.
   *
   * @param ownLatestNanos the wait's end plus the most the spread could add to it: a call alone on
   *     its origin goes no later
   * @param latestNanos the latest it may go at all (its {@code maxRetryAfter}, half the time left)
   */
  public void waitOn(String origin, int code, long waitedNanos, long ownLatestNanos, long latestNanos) {
    this.state = WAITING;
    this.origin = origin;
    this.code = code;
    this.waitedNanos = waitedNanos;
    this.ownLatestNanos = ownLatestNanos;
    this.latestNanos = latestNanos;
  }

  /**
   * For a waiting call whose own wait is over: takes a turn from the origin's pacer and says to
   * wait for it or to go now. If others wait ahead of it and its turn would come after its latest
   * time, it takes none and cannot go ({@link Admission#throttled} with the status it waited on
   * and the wait its turn would have needed): held to its latest time it would bunch with the
   * rest of the crowd there, and sent at once it would only add to the crowd the origin is
   * turning away. One turn per wait. Then, for any call, the quota its origin published ({@link
   * QuotaPacer}): wait while it is spent (or a probe is pending), as long as the whole hold, from
   * its first wait for this attempt however often the call asks again, fits in the {@code
   * quotaMaxWaitNanos} it was given then; past that the call goes and the server decides. Asked
   * only while some origin publishes one (or probing is on).
   *
   * @param url the request's URL, whose origin's quota is asked
   * @param quotaMaxWaitNanos the longest this call could wait for a quota now, were it not held yet
   */
  public Admission turn(HttpUrl url, long quotaMaxWaitNanos) {
    if (state == WAITING && origin != null) {
      long now = time.nanoTime();
      long slot = origins.reserve(origin, now, latestNanos, ownLatestNanos);
      if (slot - Math.max(now, latestNanos) > 0) {
        state = NOT_PACED; // no turn was taken
        return Admission.throttled(code, slot - now);
      }
      slotNanos = slot;
      state = HOLDING;
      if (slot - now > 0) return Admission.waitFor(slot - now);
    }
    return quotaTurn(url, quotaMaxWaitNanos);
  }

  private Admission quotaTurn(HttpUrl url, long maxWaitNanos) {
    if (quotaSeq >= 0 || !origins.pacesQuotas()) return Admission.go(); // the common case: no quota ever seen
    long now = time.nanoTime();
    // A hold is one wait however often the call asks again (a probe pending, slow start: every
    // 5 ms): bounded from its first wait by what the call could wait then, else short waits
    // that each fit would add up to any length, past the deadline.
    long left = quotaHeldSinceNanos == NOT_TIMED ? maxWaitNanos : quotaHoldNanos - (now - quotaHeldSinceNanos);
    long result = origins.admitQuota(url, now, Math.max(0, left));
    if (result < 0 && result != OriginGate.GO_UNCOUNTED) {
      if (quotaHeldSinceNanos == NOT_TIMED) {
        quotaHeldSinceNanos = now;
        quotaHoldNanos = maxWaitNanos;
      }
      return Admission.waitFor(-result);
    }
    quotaHeldSinceNanos = NOT_TIMED;
    if (result == OriginGate.GO_UNCOUNTED) return Admission.go();
    quotaSeq = result;
    quotaOrigin = OriginGate.origin(url);
    return Admission.go();
  }

  /**
   * The call ended without sending the attempt it waits for (canceled, interrupted, factory
   * closed, deadline, gave up): a turn it holds is given back.
   */
  public void abandon() {
    quotaHeldSinceNanos = NOT_TIMED;
    if (state == HOLDING && origin != null) origins.givenBack(origin, slotNanos, time.nanoTime());
    if (state != SENT) state = NOT_PACED;
  }

  /**
   * An attempt of this call is being sent to {@code url}: its turn, if it holds one, is used.
   * Otherwise, and only while some origin is paced, its origin's pacer hears of a call it does
   * not pace, so it does not mistake their load for its own spacing.
   */
  public void sending(HttpUrl url) {
    attemptSentNanos = NOT_TIMED;
    if (state == HOLDING && origin != null) {
      origins.used(origin, slotNanos, time.nanoTime());
      state = SENT;
    } else if (state != SENT && origins.size() > 0) {
      attemptSentNanos = time.nanoTime();
      origins.sent(url, attemptSentNanos);
    }
  }

  /**
   * The attempt ended: with {@code response} ({@code refused} if it proves the origin turned the
   * call away, with its {@code Retry-After} or {@link RetryAfter#ABSENT}), or with an exception
   * ({@code response} null), which says nothing about the origin's pace. Tells the pacer of a
   * paced attempt's origin what it answered, or, for a call that was not paced, that its origin
   * admitted it.
   */
  public void answered(@Nullable Response response, boolean refused, long retryAfterNanos) {
    if (quotaSeq >= 0 || (response != null && origins.readsQuotas())) {
      origins.quotaAnswered(quotaOrigin, quotaSeq, response, refused, retryAfterNanos, time.nanoTime());
      quotaSeq = -1;
      quotaOrigin = null;
    }
    if (state == SENT) {
      state = NOT_PACED;
      if (response != null && origin != null) {
        origins.released(origin, slotNanos, !refused, retryAfterNanos, waitedNanos, time.nanoTime());
      }
    } else if (response != null && !refused && attemptSentNanos != NOT_TIMED) {
      origins.admitted(response.request().url(), attemptSentNanos);
    }
  }
}
