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
 * per-request deadline replaces the policy's deadline (it sets one: it cannot remove the
 * policy's); OkHttp's {@code callTimeout}, when it ends sooner, still wins. Instances are
 * immutable, with {@code equals} by value.
 */
public final class RetryOverrides {

  // Read through the two statics below, the one place overrides are applied.
  private final int maxRetries; // -1: not set
  private final long deadlineNanos; // 0: not set

  private RetryOverrides(Builder builder) {
    this.maxRetries = builder.maxRetries;
    this.deadlineNanos = builder.deadlineNanos;
  }

  /** The retries {@code overrides} allow, or {@code policy}'s if they set none (or are null). */
  static int maxRetries(@Nullable RetryOverrides overrides, RetryPolicy policy) {
    return overrides != null && overrides.maxRetries >= 0 ? overrides.maxRetries : policy.settings.maxRetries;
  }

  /** okretry's own deadline: {@code overrides}' if set, else {@code policy}'s; 0 for none. */
  static long deadlineNanos(@Nullable RetryOverrides overrides, RetryPolicy policy) {
    return overrides != null && overrides.deadlineNanos > 0 ? overrides.deadlineNanos : policy.settings.deadlineNanos;
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
    return "RetryOverrides{maxRetries=" + (maxRetries < 0 ? null : maxRetries)
        + ", deadlineNanos=" + (deadlineNanos == 0 ? null : deadlineNanos) + "}";
  }

  /** Builds {@link RetryOverrides}. Not thread-safe; {@link #build()} takes a snapshot. */
  public static final class Builder {
    private int maxRetries = -1;
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
     * Deadline for this logical call, as a {@link Duration}; see {@link #deadline(long,
     * TimeUnit)}.
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
