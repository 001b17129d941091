package io.github.okretry.internal;

/**
 * Paces the retries of one client that wait on one origin after it refused them with a 429/503
 * {@code Retry-After}, so they arrive about as fast as the origin recently admitted them rather
 * than all in the same instant.
 *
 * <p>Each waiting retry, once its own {@code Retry-After} (spread upward as usual) has passed,
 * asks for a release time: the later of now and the previous release plus the current interval.
 * Releases are handed out in turn, so a crowd leaves one interval apart. The interval is learned
 * from the origin's answers to the releases themselves:
 *
 * <ul>
 *   <li>a release <em>refused</em> with a {@code Retry-After} a gap {@code g} after the origin
 *       last admitted one of this client's calls says the origin needs more than {@code g}
 *       between calls (a lower bound, {@code lo}), but only if no other call of the client
 *       (a first attempt, which is not paced) was sent to the origin since that admission, and
 *       {@code g} is shorter than that {@code Retry-After}: otherwise the refusal may be about
 *       the other calls' load, or about nothing spacing could fix;
 *   <li>a release <em>admitted</em> right after another admitted one, {@code g} later, says
 *       {@code g} is enough (an upper bound, {@code hi}).
 * </ul>
 *
 * <p>The interval is 0 until something was refused (the first retries go as they wake, spread by
 * {@code retryAfterSpread}), {@code lo × }{@link Tuning#PACING_GROWTH} while only refusals are
 * known, and {@code hi × }{@link Tuning#PACING_MARGIN} once two retries were admitted back to
 * back: the narrowest gap at which the origin recently admitted this client's retries, with a
 * little room for scheduling jitter. It does not probe below {@code hi}, because a refused retry
 * costs its call another {@code Retry-After}: on a fake-time crowd of 40 against a strict 20/s
 * limiter, probing halfway between the bounds cost 13 % more makespan and 2 % more attempts than
 * staying at {@code hi}, and the margin cut the runs over 4 s from 11 % to 2 % (26 % to 6 % with
 * 5 ms of jitter; {@code OriginPacerTest#printTuningTable}). Bounds that contradict each other
 * (the origin sped up or slowed down) drop the older one. After {@link
 * Tuning#PACING_MEMORY_NANOS} without activity everything is forgotten.
 *
 * <p>As a safety net, the interval is also capped by the origin's recent admission rate of all
 * this client's calls: never more than {@link Tuning#PACING_RATE_SLACK} times the mean gap
 * between admissions over the last {@link Tuning#PACING_RATE_WINDOW_NANOS} (a sliding window), so
 * a crowd is never paced much slower than the origin is demonstrably admitting this client.
 *
 * <p>A release never comes before the retry's own {@code Retry-After} (the caller asks only
 * after waiting it) and never after the {@code latestNanos} the caller passes (its {@code
 * maxRetryAfter} and deadline): a retry that would have to wait longer goes at its latest time
 * without taking a turn. Pacing decides when, never whether; the retry budget decides whether.
 *
 * <p>Pure: every method takes the time, nothing reads a clock. Not thread-safe; {@link
 * OriginGate} guards each origin's pacer with its lock. Costs O(1) per call and a fixed few
 * fields per origin.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class OriginPacer {

  private static final long UNKNOWN = Long.MAX_VALUE;

  private final double growth;
  private final double margin;
  private final long memoryNanos;
  private final long rateWindowNanos;
  private final double rateSlack;

  private boolean active; // a release was handed out since the last reset
  private long lastActivityNanos;
  private long lastReleaseNanos;
  private long loNanos; // 0: nothing refused yet
  private long hiNanos = UNKNOWN;
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
    this(Tuning.PACING_GROWTH, Tuning.PACING_MARGIN, Tuning.PACING_MEMORY_NANOS, Tuning.PACING_RATE_WINDOW_NANOS, Tuning.PACING_RATE_SLACK);
  }

  /**
   * @param growth the interval as a multiple of {@code lo} while only refusals are known, ≥ 1
   * @param margin the interval as a multiple of {@code hi} once it is known, ≥ 1
   * @param memoryNanos idle time after which everything learned is forgotten, positive
   * @param rateWindowNanos the window over which admissions are counted, positive
   * @param rateSlack the interval is at most this many mean gaps between admissions, ≥ 1
   */
  public OriginPacer(double growth, double margin, long memoryNanos, long rateWindowNanos, double rateSlack) {
    if (!(growth >= 1) || Double.isInfinite(growth)) throw new IllegalArgumentException("growth < 1: " + growth);
    if (!(margin >= 1) || Double.isInfinite(margin)) throw new IllegalArgumentException("margin < 1: " + margin);
    if (memoryNanos <= 0) throw new IllegalArgumentException("memoryNanos <= 0: " + memoryNanos);
    if (rateWindowNanos <= 0) throw new IllegalArgumentException("rateWindowNanos <= 0: " + rateWindowNanos);
    if (!(rateSlack >= 1) || Double.isInfinite(rateSlack)) throw new IllegalArgumentException("rateSlack < 1: " + rateSlack);
    this.growth = growth;
    this.margin = margin;
    this.memoryNanos = memoryNanos;
    this.rateWindowNanos = rateWindowNanos;
    this.rateSlack = rateSlack;
  }

  /**
   * The time a retry that has waited out its own {@code Retry-After} is released at: {@code
   * nowNanos} or later, at most {@code latestNanos}.
   *
   * @param latestNanos the latest the retry may go (its {@code maxRetryAfter}, its deadline)
   */
  public long reserve(long nowNanos, long latestNanos) {
    forgetIfIdle(nowNanos);
    lastActivityNanos = nowNanos;
    if (!active) {
      active = true;
      lastReleaseNanos = nowNanos;
      return nowNanos;
    }
    long slot = Math.max(nowNanos, lastReleaseNanos + intervalNanos(nowNanos));
    if (slot - latestNanos > 0) return Math.max(nowNanos, latestNanos); // no turn taken
    lastReleaseNanos = slot;
    return slot;
  }

  /**
   * What the origin answered to the retry released at {@code slotNanos}.
   *
   * @param admitted true unless it was refused (429 or 503)
   * @param retryAfterNanos the refusal's {@code Retry-After}, or {@link RetryAfter#ABSENT}
   */
  public void released(long slotNanos, boolean admitted, long retryAfterNanos, long nowNanos) {
    forgetIfIdle(nowNanos);
    lastActivityNanos = nowNanos;
    if (anyOutcome && slotNanos - previousSlotNanos > 0) {
      if (admitted && previousAdmitted) {
        long gap = slotNanos - previousSlotNanos;
        if (gap < hiNanos) hiNanos = gap;
        if (hiNanos <= loNanos) loNanos = hiNanos - hiNanos / 4; // the origin sped up
      } else if (!admitted && anyAdmitted && retryAfterNanos != RetryAfter.ABSENT) {
        // From the origin's last admission of any of this client's calls: if it admitted an
        // unpaced call in between (or after this release left), the refusal is not about spacing.
        long lastAdmission = lastAdmittedSlotNanos;
        if (anyOtherAdmission && lastOtherAdmissionNanos - lastAdmission > 0) lastAdmission = lastOtherAdmissionNanos;
        long gap = slotNanos - lastAdmission;
        boolean othersSentSince = anyOtherSent && lastOtherSentNanos - lastAdmission > 0;
        if (!othersSentSince && gap > 0 && gap < retryAfterNanos && gap > loNanos) {
          loNanos = gap;
          if (loNanos >= hiNanos) hiNanos = UNKNOWN; // the origin slowed down
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
    if (!anyOtherAdmission || sentNanos - lastOtherAdmissionNanos > 0) lastOtherAdmissionNanos = sentNanos;
    anyOtherAdmission = true;
  }

  /**
   * The gap learned from the paced retries alone: 0 until the origin refused one; never more
   * than the memory (a longer gap would outlast what it was learned from).
   */
  public long intervalNanos() {
    if (loNanos == 0) return 0; // nothing refused: pacing would only slow the crowd down
    if (hiNanos != UNKNOWN) return (long) Math.min(memoryNanos, hiNanos * margin);
    return (long) Math.min(memoryNanos, loNanos * growth);
  }

  /**
   * The gap between releases at {@code nowNanos}: the learned one ({@link #intervalNanos()}),
   * capped by the origin's recent admission rate of this client's calls.
   */
  public long intervalNanos(long nowNanos) {
    long learned = intervalNanos();
    if (learned == 0) return 0;
    rollWindow(nowNanos);
    double elapsed = (double) (nowNanos - windowStartNanos) / rateWindowNanos;
    double admissions = admittedInPreviousWindow * Math.max(0, 1 - elapsed) + admittedInWindow;
    if (admissions < 1) return learned;
    return Math.min(learned, (long) (rateSlack * rateWindowNanos / admissions));
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

  /** True if nothing happened for {@link Tuning#PACING_MEMORY_NANOS}: there is nothing to keep. */
  public boolean isIdle(long nowNanos) {
    return nowNanos - lastActivityNanos >= memoryNanos || (!active && !anyOutcome);
  }

  private void forgetIfIdle(long nowNanos) {
    if ((active || anyOutcome) && nowNanos - lastActivityNanos >= memoryNanos) {
      active = false;
      loNanos = 0;
      hiNanos = UNKNOWN;
      anyAdmitted = false;
      anyOtherAdmission = false;
      anyOtherSent = false;
      anyOutcome = false;
      windowStarted = false;
      admittedInWindow = 0;
      admittedInPreviousWindow = 0;
    }
  }

  @Override
  public String toString() {
    return "OriginPacer{intervalNanos=" + intervalNanos() + ", lo=" + loNanos + ", hi="
        + (hiNanos == UNKNOWN ? "?" : Long.toString(hiNanos)) + "}";
  }
}
