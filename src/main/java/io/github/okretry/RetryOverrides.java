package io.github.okretry;

import io.github.okretry.internal.Durations;
import io.github.okretry.internal.SuppressSignatureCheck;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Per-request changes to the {@link RetryPolicy}, attached as a request tag:
 *
 * <pre>{@code
 * new Request.Builder().url(url)
 *     .tag(RetryOverrides.class, RetryOverrides.builder().maxRetries(1).deadline(2, TimeUnit.SECONDS).build())
 *     .build();
 * }</pre>
 *
 * <p>Anything not set keeps the policy's value; {@code maxRetries(0)} makes exactly one attempt. A
 * per-request deadline replaces the policy's deadline (it sets one: it cannot remove the policy's);
 * OkHttp's {@code callTimeout}, when it ends sooner, still wins. Instances are immutable, with
 * {@code equals} by value.
 */
public final class RetryOverrides {

  /** A {@code maxRetries} not overridden (a count of retries is never negative). */
  private static final int NOT_SET = -1;

  // Read through the two methods below, which LogicalCall applies to its policy's settings.
  private final int maxRetries; // NOT_SET: the policy's
  private final long deadlineNanos; // 0, as every duration that is none: the policy's

  private RetryOverrides(Builder builder) {
    this.maxRetries = builder.maxRetries;
    this.deadlineNanos = builder.deadlineNanos;
  }

  /** The retries these overrides allow, or {@code policyMaxRetries} if they set none. */
  int maxRetriesOr(int policyMaxRetries) {
    return maxRetries != NOT_SET ? maxRetries : policyMaxRetries;
  }

  /** The deadline these overrides set, else {@code policyDeadlineNanos} (0: none). */
  long deadlineNanosOr(long policyDeadlineNanos) {
    return deadlineNanos != 0 ? deadlineNanos : policyDeadlineNanos;
  }

  /**
   * A new builder with nothing overridden.
   *
   * @return a new builder with nothing overridden
   */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof RetryOverrides)) return false;
    RetryOverrides other = (RetryOverrides) o;
    return maxRetries == other.maxRetries && deadlineNanos == other.deadlineNanos;
  }

  @Override
  public int hashCode() {
    return 31 * maxRetries + (int) (deadlineNanos ^ (deadlineNanos >>> 32));
  }

  /** What is overridden, with null for what is not. */
  @Override
  public String toString() {
    return "RetryOverrides{maxRetries="
        + (maxRetries == NOT_SET ? null : maxRetries)
        + ", deadlineNanos="
        + (deadlineNanos == 0 ? null : deadlineNanos)
        + "}";
  }

  /** Builds {@link RetryOverrides}. Not thread-safe; {@link #build()} takes a snapshot. */
  public static final class Builder {
    private int maxRetries = NOT_SET;
    private long deadlineNanos;

    private Builder() {}

    /**
     * Retries after the first attempt for this request; 0 means a single attempt.
     *
     * @param maxRetries retries after the first attempt, 0 or more
     * @return this builder
     * @throws IllegalArgumentException if {@code maxRetries} is negative
     */
    public Builder maxRetries(int maxRetries) {
      if (maxRetries < 0) throw new IllegalArgumentException("maxRetries < 0: " + maxRetries);
      this.maxRetries = maxRetries;
      return this;
    }

    /**
     * Deadline for this logical call: all attempts and waits, from the moment okretry sees the
     * call.
     *
     * @param amount the time allowed for all attempts and waits, positive, at most 24 hours
     * @param unit the unit of {@code amount}
     * @return this builder
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder deadline(long amount, TimeUnit unit) {
      this.deadlineNanos = Durations.checkedNanos("deadline", amount, unit);
      return this;
    }

    /**
     * Deadline for this logical call, as a {@link Duration}; see {@link #deadline(long, TimeUnit)}.
     *
     * @param deadline the time allowed for all attempts and waits, positive, at most 24 hours
     * @return this builder
     * @throws NullPointerException if {@code deadline} is null
     * @throws IllegalArgumentException if {@code deadline} is zero, negative or over 24 hours
     */
    @SuppressSignatureCheck
    public Builder deadline(Duration deadline) {
      this.deadlineNanos = Durations.checkedNanos("deadline", deadline);
      return this;
    }

    /**
     * An immutable snapshot of this builder.
     *
     * @return an immutable snapshot of this builder
     */
    public RetryOverrides build() {
      return new RetryOverrides(this);
    }
  }
}
