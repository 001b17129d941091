package io.github.okretry.internal;

/**
 * Paces the retries of one client that wait on one origin after it refused them with a 429/503
 * {@code Retry-After}, so a crowd arrives about as fast as the origin recently admitted them rather
 * than all in the same instant. Each retry, once its own {@code Retry-After} (spread upward) has
 * passed, asks for a turn: the later of now and the last turn handed out plus the interval, held
 * until its attempt leaves ({@link #used}) or its call ends unsent ({@link #givenBack}). The
 * invariants (docs/semantics.md, "Pacing a crowd"; property tests on fake time):
 *
 * <ol>
 *   <li><em>A lone call is not delayed</em> longer than its spread alone might have: a retry that
 *       asks while no other call holds a turn still ahead goes by {@code ownLatestNanos}.
 *   <li><em>A given-back turn delays no one</em>: once no turn is held, the next counts from the
 *       last turn used; a turn given back at the end of the line is handed out again.
 *   <li><em>A crowd beyond its ceiling gives up, never bunches</em>: a retry that is not alone and
 *       whose turn would come after its latest time takes none ({@link #reserve}); released at that
 *       time, such retries would reach the origin together.
 *   <li><em>Intervals come from evidence about spacing and are bounded by it</em>: a turn refused
 *       {@code g} after the origin last admitted one of this client's calls shows it needs more
 *       than {@code g} ({@code lo}), unless an unpaced call was sent since or {@code g} is not
 *       shorter than the refusal's and the waited-out {@code Retry-After} (then spacing could not
 *       fix it); two turns admitted back to back {@code g} apart show {@code g} is enough ({@code
 *       hi}).
 * </ol>
 *
 * <p>The interval is 0 until a turn was refused, then {@code lo × }{@link Tuning#PACING_GROWTH},
 * and {@code min(hi, lo × growth) × }{@link Tuning#PACING_MARGIN} once {@code hi} is known (never
 * probing below it: a refused retry costs its call another {@code Retry-After}). It is at most the
 * {@code Retry-After}s that taught {@code lo}, and at most {@link Tuning#PACING_RATE_SLACK} mean
 * gaps between the origin's admissions of this client's calls over the last {@link
 * Tuning#PACING_RATE_WINDOW_NANOS}. Of two bounds that contradict each other the newer stands; each
 * is forgotten {@code memoryNanos} after it was learned, so spacing the pacer caused never keeps
 * it.
 *
 * <p>Pure: every method takes the time. Not thread-safe ({@link OriginGate} guards it). O(1) per
 * call: turns are counted, not listed, so a turn given back mid-line leaves a hole that only the
 * calls already behind it wait through.
 */
public final class OriginPacer {

  private final double growth;
  private final double margin;
  private final long memoryNanos;
  private final long rateWindowNanos;
  private final double rateSlack;

  private boolean active; // something happened since the last reset
  private long lastActivityNanos;
  // Turns: counted, not listed (bounded memory).
  private boolean anyTurn; // tailNanos holds a turn
  private long tailNanos; // the latest turn handed out and not given back
  private int held; // turns handed out whose attempt has neither left nor been given back
  private boolean anyUsed;
  private long lastUsedNanos; // the latest turn whose attempt left
  // What was learned, each with when.
  private long loNanos; // 0: nothing refused yet
  private long loLearnedNanos;
  private long loCapNanos; // the shorter Retry-After of the refusal that taught lo
  private long hiNanos; // 0: nothing admitted back to back yet
  private long hiLearnedNanos;
  // The evidence the bounds are learned from.
  private long lastAdmittedSlotNanos; // of a paced release
  private boolean anyAdmitted;
  private long lastOtherAdmissionNanos; // when the last admitted unpaced call was sent
  private boolean anyOtherAdmission;
  private long lastOtherSentNanos; // when the last unpaced call was sent
  private boolean anyOtherSent;
  private long previousSlotNanos;
  private boolean previousAdmitted;
  private boolean anyOutcome;
  // Admissions of any of this client's calls, in a sliding window of two fixed ones.
  private long windowStartNanos;
  private boolean windowStarted;
  private int admittedInWindow;
  private int admittedInPreviousWindow;

  /** A pacer with okretry's defaults from {@link Tuning}. */
  public OriginPacer() {
    this(
        Tuning.PACING_GROWTH,
        Tuning.PACING_MARGIN,
        Tuning.PACING_MEMORY_NANOS,
        Tuning.PACING_RATE_WINDOW_NANOS,
        Tuning.PACING_RATE_SLACK);
  }

  /**
   * @param growth the interval as a multiple of {@code lo} while only refusals are known, ≥ 1
   * @param margin the interval as a multiple of {@code hi} once it is known, ≥ 1
   * @param memoryNanos how long a learned bound, and an idle origin, is remembered, positive
   * @param rateWindowNanos the window over which admissions are counted, positive
   * @param rateSlack the interval is at most this many mean gaps between admissions, ≥ 1
   */
  public OriginPacer(
      double growth, double margin, long memoryNanos, long rateWindowNanos, double rateSlack) {
    if (!(growth >= 1) || Double.isInfinite(growth)) {
      throw new IllegalArgumentException("growth < 1: " + growth);
    }
    if (!(margin >= 1) || Double.isInfinite(margin)) {
      throw new IllegalArgumentException("margin < 1: " + margin);
    }
    if (memoryNanos <= 0) throw new IllegalArgumentException("memoryNanos <= 0: " + memoryNanos);
    if (rateWindowNanos <= 0) {
      throw new IllegalArgumentException("rateWindowNanos <= 0: " + rateWindowNanos);
    }
    if (!(rateSlack >= 1) || Double.isInfinite(rateSlack)) {
      throw new IllegalArgumentException("rateSlack < 1: " + rateSlack);
    }
    this.growth = growth;
    this.margin = margin;
    this.memoryNanos = memoryNanos;
    this.rateWindowNanos = rateWindowNanos;
    this.rateSlack = rateSlack;
  }

  /**
   * A turn for a retry that has waited out its own {@code Retry-After}: {@code nowNanos} or later.
   * The turn is taken (and must be {@link #used} or {@link #givenBack}) if it is at most {@code
   * max(nowNanos, latestNanos)}; a later result is the time the call would have had to wait for, no
   * turn is taken, and the call cannot go (docs: "a crowd beyond its ceiling"). A call that asks
   * while no other holds a turn still ahead always gets one, no later than {@code ownLatestNanos}.
   *
   * @param latestNanos the latest the retry may go (its {@code maxRetryAfter}, half its time left)
   * @param ownLatestNanos the latest its own {@code Retry-After} and spread could have put it
   */
  public long reserve(long nowNanos, long latestNanos, long ownLatestNanos) {
    touch(nowNanos);
    long slot = anyTurn ? Math.max(nowNanos, tailNanos + intervalNanos(nowNanos)) : nowNanos;
    if (held == 0 || tailNanos - nowNanos <= 0) {
      // Alone: nobody is waiting ahead, so pacing may not hold it longer than its spread might.
      long cap = Math.max(nowNanos, Math.min(ownLatestNanos, latestNanos));
      if (slot - cap > 0) slot = cap;
    } else if (slot - Math.max(nowNanos, latestNanos) > 0) {
      return slot; // no turn: releasing it at its latest time would bunch it with the others
    }
    if (!anyTurn || slot - tailNanos > 0) tailNanos = slot;
    anyTurn = true;
    held++;
    return slot;
  }

  /** The attempt released by the turn at {@code slotNanos} left. */
  public void used(long slotNanos, long nowNanos) {
    touch(nowNanos);
    if (held > 0) held--;
    if (!anyUsed || slotNanos - lastUsedNanos > 0) lastUsedNanos = slotNanos;
    anyUsed = true;
    if (held == 0) tailNanos = lastUsedNanos; // every later turn was given back
  }

  /**
   * The call holding the turn at {@code slotNanos} ended without sending its attempt: the turn is
   * free again. If no turn is held any more, the next counts from the last one used; if it was the
   * last turn handed out, the next caller gets it.
   */
  public void givenBack(long slotNanos, long nowNanos) {
    touch(nowNanos);
    if (held > 0) held--;
    if (!anyTurn) return;
    if (held == 0) {
      if (anyUsed) tailNanos = lastUsedNanos;
      else anyTurn = false;
    } else if (slotNanos == tailNanos) {
      tailNanos -= intervalNanos(nowNanos);
      if (anyUsed && lastUsedNanos - tailNanos > 0) tailNanos = lastUsedNanos;
    }
  }

  /**
   * What the origin answered to the attempt released by the turn at {@code slotNanos}.
   *
   * @param admitted true unless it was refused (429 or 503)
   * @param retryAfterNanos the refusal's {@code Retry-After}, or {@link RetryAfter#ABSENT}
   * @param waitedNanos the {@code Retry-After} the call had waited out before this turn
   */
  public void released(
      long slotNanos, boolean admitted, long retryAfterNanos, long waitedNanos, long nowNanos) {
    touch(nowNanos);
    if (anyOutcome && slotNanos - previousSlotNanos > 0) {
      if (admitted && previousAdmitted) {
        long gap = slotNanos - previousSlotNanos;
        if (!hiKnown(nowNanos) || gap < hiNanos) {
          hiNanos = gap;
          hiLearnedNanos = nowNanos;
        }
        // The origin sped up: lo drops to where it no longer narrows the interval below hi.
        if (loKnown(nowNanos) && hiNanos <= loNanos) {
          loNanos = Math.max(1, Math.min(hiNanos - 1, (long) (hiNanos / growth)));
        }
      } else if (!admitted && anyAdmitted && retryAfterNanos != RetryAfter.ABSENT) {
        // From the origin's last admission of any of this client's calls: if it admitted an
        // unpaced call in between (or after this release left), the refusal is not about spacing.
        long lastAdmission = lastAdmittedSlotNanos;
        if (anyOtherAdmission && lastOtherAdmissionNanos - lastAdmission > 0) {
          lastAdmission = lastOtherAdmissionNanos;
        }
        long gap = slotNanos - lastAdmission;
        boolean othersSentSince = anyOtherSent && lastOtherSentNanos - lastAdmission > 0;
        long cap = Math.min(retryAfterNanos, waitedNanos);
        if (!othersSentSince && gap > 0 && gap < cap && (!loKnown(nowNanos) || gap > loNanos)) {
          loNanos = gap;
          loCapNanos = cap;
          loLearnedNanos = nowNanos;
          if (hiKnown(nowNanos) && loNanos >= hiNanos) hiNanos = 0; // the origin slowed down
        }
      }
    }
    if (!anyOutcome || slotNanos - previousSlotNanos >= 0) {
      previousSlotNanos = slotNanos;
      previousAdmitted = admitted;
      anyOutcome = true;
    }
    if (admitted && (!anyAdmitted || slotNanos - lastAdmittedSlotNanos > 0)) {
      lastAdmittedSlotNanos = slotNanos;
      anyAdmitted = true;
    }
    if (admitted) countAdmission(slotNanos);
  }

  /** Another of this client's calls, one that is not paced, was sent to the origin. */
  public void sent(long sentNanos) {
    if (!anyOtherSent || sentNanos - lastOtherSentNanos > 0) lastOtherSentNanos = sentNanos;
    anyOtherSent = true;
  }

  /**
   * The origin admitted another of this client's calls, one that was not paced, sent at {@code
   * sentNanos} (the time it left, as a release's slot is, so gaps compare like with like).
   */
  public void admitted(long sentNanos) {
    countAdmission(sentNanos);
    if (!anyOtherAdmission || sentNanos - lastOtherAdmissionNanos > 0) {
      lastOtherAdmissionNanos = sentNanos;
    }
    anyOtherAdmission = true;
  }

  /**
   * The gap between turns at {@code nowNanos}: 0 until the origin refused a turn for its spacing
   * (or once that was forgotten); else the learned gap, at most the {@code Retry-After}s that
   * taught it and at most {@link Tuning#PACING_RATE_SLACK} mean gaps between the origin's recent
   * admissions of this client's calls.
   */
  public long intervalNanos(long nowNanos) {
    long learned = learnedIntervalNanos(nowNanos);
    if (learned == 0) return 0;
    rollWindow(nowNanos);
    double elapsed = (double) (nowNanos - windowStartNanos) / rateWindowNanos;
    double admissions = admittedInPreviousWindow * Math.max(0, 1 - elapsed) + admittedInWindow;
    if (admissions < 1) return learned;
    return Math.min(learned, (long) (rateSlack * rateWindowNanos / admissions));
  }

  /** The interval from the bounds alone, without the cap by the rate of admissions. */
  long learnedIntervalNanos(long nowNanos) {
    if (!loKnown(nowNanos)) return 0; // nothing refused: pacing would only slow the crowd down
    double base = (double) loNanos * growth;
    if (hiKnown(nowNanos)) base = Math.min((double) hiNanos, base) * margin;
    return (long) Math.min((double) loCapNanos, base);
  }

  /** {@link #learnedIntervalNanos(long)} as of the last report. */
  long learnedIntervalNanos() {
    return learnedIntervalNanos(lastActivityNanos);
  }

  /** Turns handed out and neither used nor given back. */
  public int heldTurns() {
    return held;
  }

  private boolean loKnown(long nowNanos) {
    return loNanos != 0 && nowNanos - loLearnedNanos < memoryNanos;
  }

  private boolean hiKnown(long nowNanos) {
    return hiNanos != 0 && nowNanos - hiLearnedNanos < memoryNanos;
  }

  private void countAdmission(long nowNanos) {
    rollWindow(nowNanos);
    admittedInWindow++;
  }

  private void rollWindow(long nowNanos) {
    if (!windowStarted) {
      windowStarted = true;
      windowStartNanos = nowNanos;
      return;
    }
    long elapsed = nowNanos - windowStartNanos;
    if (elapsed >= 2 * rateWindowNanos) {
      admittedInPreviousWindow = 0;
      admittedInWindow = 0;
      windowStartNanos = nowNanos;
    } else if (elapsed >= rateWindowNanos) {
      admittedInPreviousWindow = admittedInWindow;
      admittedInWindow = 0;
      windowStartNanos += rateWindowNanos;
    }
  }

  /**
   * True if there is nothing to keep: nothing happened for {@link Tuning#PACING_MEMORY_NANOS} (so
   * everything learned has lapsed) and no turn is held that is still ahead.
   */
  public boolean isIdle(long nowNanos) {
    if (!active) return true;
    return nowNanos - lastActivityNanos >= memoryNanos && (held == 0 || tailNanos - nowNanos <= 0);
  }

  private void touch(long nowNanos) {
    if (active && isIdle(nowNanos)) reset();
    active = true;
    lastActivityNanos = nowNanos;
  }

  /** Forgets everything; a turn still counted as held by then was lost without a report. */
  private void reset() {
    anyTurn = false;
    held = 0;
    anyUsed = false;
    loNanos = 0;
    hiNanos = 0;
    anyAdmitted = false;
    anyOtherAdmission = false;
    anyOtherSent = false;
    anyOutcome = false;
    windowStarted = false;
    admittedInWindow = 0;
    admittedInPreviousWindow = 0;
  }
}
