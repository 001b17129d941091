package io.github.okretry.internal;

import okhttp3.HttpUrl;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One logical call's part in the pacing of its origin's crowd ({@link OriginPacer}, reached
 * through {@link OriginGate}): whether the call waits on an origin for a turn, the turn it got,
 * and when its current attempt was sent, so that the origin's pacer hears what the origin
 * answered. A call is paced after a 429/503 with {@code Retry-After} (once that wait is over) or
 * while the origin-wide gate holds it; any other call only reports its sends and admissions, and
 * only while some origin is paced.
 *
 * <p>Internal API: not covered by compatibility guarantees. Not thread-safe: one per logical call.
 */
public final class PacedCall {

  private static final int NOT_PACED = 0;
  private static final int WAITING = 1; // waits for a turn from its origin's pacer
  private static final int RELEASED = 2; // its turn came; the attempt it releases is out
  private static final long NOT_TIMED = Long.MIN_VALUE;

  private final OriginGate origins;
  private final TimeSource time;
  private int state = NOT_PACED;
  private @Nullable String origin; // the origin whose pacer this call waits on
  private long latestNanos; // the latest it may go, whatever the pacer says
  private long slotNanos; // its release time once RELEASED
  private long attemptSentNanos = NOT_TIMED; // set only while some origin is paced

  public PacedCall(OriginGate origins, TimeSource time) {
    this.origins = origins;
    this.time = time;
  }

  /** True from {@link #waitOn} until the attempt its turn released has been answered. */
  public boolean isPaced() {
    return state != NOT_PACED;
  }

  /**
   * The call now waits on {@code origin} (a key from {@link OriginGate#origin}) and must go no
   * later than {@code latestNanos}.
   */
  public void waitOn(String origin, long latestNanos) {
    this.state = WAITING;
    this.origin = origin;
    this.latestNanos = latestNanos;
  }

  /**
   * For a waiting call whose own wait is over: takes a release time from the origin's pacer and
   * returns the wait until it, 0 to go now. One turn per wait, then the call goes, however the
   * clock behaves. For any other call, 0.
   */
  public long turnNanos() {
    if (state != WAITING || origin == null) return 0;
    long now = time.nanoTime();
    slotNanos = origins.reserve(origin, now, latestNanos);
    state = RELEASED;
    return Math.max(0, slotNanos - now);
  }

  /**
   * An attempt of this call is being sent to {@code url}. Only while some origin is paced: its
   * pacer hears of the calls it does not pace, so it does not mistake their load for its own
   * spacing.
   */
  public void sending(HttpUrl url) {
    attemptSentNanos = NOT_TIMED;
    if (state != RELEASED && origins.size() > 0) {
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
    if (state == RELEASED) {
      state = NOT_PACED;
      if (response != null && origin != null) {
        origins.released(origin, slotNanos, !refused, retryAfterNanos, time.nanoTime());
      }
    } else if (response != null && !refused && attemptSentNanos != NOT_TIMED) {
      origins.admitted(response.request().url(), attemptSentNanos);
    }
  }
}
