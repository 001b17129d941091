package io.github.okretry.internal;

/**
 * Everything the decision after a failed attempt depends on, as one value: which attempt it was,
 * what its outcome showed, and how much time is left. Built with named steps ({@link #attempt},
 * then the {@link Builder}'s), so no two booleans can be swapped by accident.
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

  private AttemptFacts(Builder b) {
    this.attempt = b.attempt;
    this.maxRetries = b.maxRetries;
    this.retryable = b.retryable;
    this.safeToRepeat = b.safeToRepeat;
    this.retryAfterNanos = b.retryAfterNanos;
    this.remainingNanos = b.remainingNanos;
    this.previousDelayNanos = b.previousDelayNanos;
  }

  /** Facts about attempt {@code attempt} (1 = the first) of a call allowed {@code maxRetries}. */
  public static Builder attempt(int attempt, int maxRetries) {
    if (attempt < 1) throw new IllegalArgumentException("attempt < 1: " + attempt);
    if (maxRetries < 0) throw new IllegalArgumentException("maxRetries < 0: " + maxRetries);
    Builder b = new Builder();
    b.attempt = attempt;
    b.maxRetries = maxRetries;
    return b;
  }

  /** Names each fact; unset facts are false, absent, no deadline and 0. */
  public static final class Builder {
    private int attempt;
    private int maxRetries;
    private boolean retryable;
    private boolean safeToRepeat;
    private long retryAfterNanos = RetryAfter.ABSENT;
    private long remainingNanos = CallDeadline.NO_DEADLINE;
    private long previousDelayNanos;

    private Builder() {}

    public Builder retryable(boolean retryable) {
      this.retryable = retryable;
      return this;
    }

    public Builder safeToRepeat(boolean safeToRepeat) {
      this.safeToRepeat = safeToRepeat;
      return this;
    }

    public Builder retryAfterNanos(long retryAfterNanos) {
      this.retryAfterNanos = retryAfterNanos;
      return this;
    }

    public Builder remainingNanos(long remainingNanos) {
      this.remainingNanos = remainingNanos;
      return this;
    }

    public Builder previousDelayNanos(long previousDelayNanos) {
      this.previousDelayNanos = previousDelayNanos;
      return this;
    }

    public AttemptFacts build() {
      return new AttemptFacts(this);
    }
  }
}
