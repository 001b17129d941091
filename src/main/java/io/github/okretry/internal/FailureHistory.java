package io.github.okretry.internal;

import java.io.IOException;

/**
 * The exceptions of a logical call's earlier attempts, to ride on its final exception as
 * suppressed, in bounded memory: a call allowed 50 000 retries must not hold 50 000 exceptions.
 * Keeps the first {@link #KEEP_FIRST} (how it started) and the last {@link #KEEP_LAST} (how it
 * ended); the ones between are counted and stand as one {@link Omitted} marker in their place. So a
 * final exception carries at most {@code KEEP_FIRST + 1 + KEEP_LAST} suppressed, oldest first.
 *
 * <p>Not thread-safe: one logical call is driven by one thread at a time.
 */
public final class FailureHistory {

  public static final int KEEP_FIRST = 3;
  public static final int KEEP_LAST = 5;

  private final IOException[] first = new IOException[KEEP_FIRST];
  // A ring, oldest at count % KEEP_LAST
  private final IOException[] last = new IOException[KEEP_LAST];
  private int count; // every failure added, kept or not

  /** Records the failure of an attempt that is about to be retried. */
  public void add(IOException e) {
    if (count < KEEP_FIRST) {
      first[count] = e;
    } else {
      last[(count - KEEP_FIRST) % KEEP_LAST] = e;
    }
    count++;
  }

  /**
   * Adds the kept failures to {@code finalFailure} as suppressed, oldest first, with an {@link
   * Omitted} marker where some were left out; skips {@code finalFailure} itself and its cause.
   *
   * @return {@code finalFailure}
   */
  public IOException attachTo(IOException finalFailure) {
    for (int i = 0; i < Math.min(count, KEEP_FIRST); i++) suppress(finalFailure, first[i]);
    int inRing = Math.max(0, Math.min(count - KEEP_FIRST, KEEP_LAST));
    int omitted = count - KEEP_FIRST - inRing;
    if (omitted > 0) finalFailure.addSuppressed(new Omitted(omitted, KEEP_FIRST + 1));
    // Index, among those after the first, of the oldest kept
    int oldest = count - KEEP_FIRST - inRing;
    for (int k = 0; k < inRing; k++) suppress(finalFailure, last[(oldest + k) % KEEP_LAST]);
    return finalFailure;
  }

  private static void suppress(IOException finalFailure, IOException earlier) {
    // Not itself, nor its cause (an instance shared below okretry, which its wrapper names)
    if (earlier != finalFailure && earlier != finalFailure.getCause()) {
      finalFailure.addSuppressed(earlier);
    }
  }

  /**
   * Stands for the earlier failures left out of a final exception's suppressed list. Carries no
   * stack trace: it would only show where okretry built it.
   */
  public static final class Omitted extends IOException {
    private static final long serialVersionUID = 1L;

    private final int omitted;

    Omitted(int omitted, int fromFailure) {
      super(
          "okretry: "
              + (omitted == 1
                  ? "1 earlier failure omitted (failure " + fromFailure + ")"
                  : omitted
                      + " earlier failures omitted (failures "
                      + fromFailure
                      + " to "
                      + (fromFailure + omitted - 1)
                      + ")")
              + "; the first "
              + KEEP_FIRST
              + " and the last "
              + KEEP_LAST
              + " are kept");
      this.omitted = omitted;
    }

    /** How many failures this marker stands for. */
    public int omitted() {
      return omitted;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
