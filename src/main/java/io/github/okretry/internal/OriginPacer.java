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
 *   <li>a release <em>refused</em> with a {@code Retry-After} a gap {@code g} after the last
 *       admitted release says the origin needs more than {@code g} between calls (a lower bound,
 *       {@code lo}), if {@code g} is shorter than that {@code Retry-After} (a longer gap says
 *       nothing about spacing);
 *   <li>a release <em>admitted</em> right after another admitted one, {@code g} later, says
 *       {@code g} is enough (an upper bound, {@code hi}).
 * </ul>
 *
 * <p>The interval is 0 until something was refused (the first retries go as they wake, spread by
 * {@code retryAfterSpread}), {@code lo × }{@link Tuning#PACING_GROWTH} while only refusals are
 * known, and {@code hi} once two retries were admitted back to back: the narrowest gap at which
 * the origin recently admitted this client's retries. It does not probe below {@code hi}, because
 * a refused retry costs its call another {@code Retry-After}: on a fake-time crowd of 40 against
 * a strict 20/s limiter, probing halfway between the bounds cost 13 % more makespan and 2 % more
 * attempts than staying at {@code hi} ({@code OriginPacerTest}). Bounds that contradict each
 * other (the origin sped up or slowed down) drop the older one. After {@link
 * Tuning#PACING_MEMORY_NANOS} without activity everything is forgotten.
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
  private final long memoryNanos;

  private boolean active; // a release was handed out since the last reset
  private long lastActivityNanos;
  private long lastReleaseNanos;
  private long loNanos; // 0: nothing refused yet
  private long hiNanos = UNKNOWN;
  private long lastAdmittedSlotNanos;
  private boolean anyAdmitted;
  private long previousSlotNanos;
  private boolean previousAdmitted;
  private boolean anyOutcome;

  /** A pacer with okretry's defaults from {@link Tuning}. */
  public OriginPacer() {
    this(Tuning.PACING_GROWTH, Tuning.PACING_MEMORY_NANOS);
  }

  /**
   * @param growth the interval as a multiple of {@code lo} while only refusals are known, ≥ 1
   * @param memoryNanos idle time after which everything learned is forgotten, positive
   */
  public OriginPacer(double growth, long memoryNanos) {
    if (!(growth >= 1) || Double.isInfinite(growth)) throw new IllegalArgumentException("growth < 1: " + growth);
    if (memoryNanos <= 0) throw new IllegalArgumentException("memoryNanos <= 0: " + memoryNanos);
    this.growth = growth;
    this.memoryNanos = memoryNanos;
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
    long slot = Math.max(nowNanos, lastReleaseNanos + intervalNanos());
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
        long gap = slotNanos - lastAdmittedSlotNanos;
        if (gap > 0 && gap < retryAfterNanos && gap > loNanos) {
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
  }

  /**
   * The gap between releases now: 0 until the origin refused one; never more than the memory
   * (a longer gap would outlast what it was learned from).
   */
  public long intervalNanos() {
    if (loNanos == 0) return 0; // nothing refused: pacing would only slow the crowd down
    if (hiNanos != UNKNOWN) return Math.min(memoryNanos, hiNanos);
    return (long) Math.min(memoryNanos, loNanos * growth);
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
      anyOutcome = false;
    }
  }

  @Override
  public String toString() {
    return "OriginPacer{intervalNanos=" + intervalNanos() + ", lo=" + loNanos + ", hi="
        + (hiNanos == UNKNOWN ? "?" : Long.toString(hiNanos)) + "}";
  }
}
