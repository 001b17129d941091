package io.github.okretry.internal;

/**
 * Everything the decision after a failed attempt depends on, as one value: which attempt it was,
 * what its outcome showed, and how much time is left.
 */
public final class AttemptFacts {

  /** The attempt that just failed, 1 for the first. */
  public final int attempt;

  /** Retries allowed after the first attempt. */
  public final int maxRetries;

  /** Whether the outcome is a transient failure worth another attempt. */
  public final boolean retryable;

  /** Whether sending the request again cannot repeat a side effect. */
  public final boolean safeToRepeat;

  /** The server's {@code Retry-After}, or {@link RetryAfter#ABSENT}. */
  public final long retryAfterNanos;

  /** Time left before the deadline, or {@link CallDeadline#NO_DEADLINE}. */
  public final long remainingNanos;

  /** The previous wait (the base delay before the first retry); decorrelated jitter grows it. */
  public final long previousDelayNanos;

  /**
   * The facts of attempt {@code attempt} (1 for the first) of a call that may retry {@code
   * maxRetries} times, in the order of the fields. One constructor, no builder: built once per
   * failed attempt, and a builder on that path kept the JIT from removing this value and others
   * around it (a retried call allocated 110–150 B more, issue 37; the figure moves with the JIT).
   * Its tests tell the two booleans apart (NOT_RETRYABLE against NOT_SAFE_TO_REPEAT).
   *
   * @throws IllegalArgumentException if {@code attempt < 1} or {@code maxRetries < 0}
   */
  public AttemptFacts(
      int attempt,
      int maxRetries,
      boolean retryable,
      boolean safeToRepeat,
      long retryAfterNanos,
      long remainingNanos,
      long previousDelayNanos) {
    if (attempt < 1 || maxRetries < 0) throw invalid(attempt, maxRetries);
    this.attempt = attempt;
    this.maxRetries = maxRetries;
    this.retryable = retryable;
    this.safeToRepeat = safeToRepeat;
    this.retryAfterNanos = retryAfterNanos;
    this.remainingNanos = remainingNanos;
    this.previousDelayNanos = previousDelayNanos;
  }

  // Out of line, to keep the constructor small for the JIT to inline (not measured apart).
  private static IllegalArgumentException invalid(int attempt, int maxRetries) {
    return new IllegalArgumentException(
        attempt < 1 ? "attempt < 1: " + attempt : "maxRetries < 0: " + maxRetries);
  }
}
