package io.github.okretry;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Per-request changes to the interceptor's configuration, attached as a request tag:
 *
 * <pre>{@code
 * new Request.Builder().url(url)
 *     .tag(RetryOverrides.class, RetryOverrides.builder().maxRetries(1).deadline(Duration.ofSeconds(2)).build())
 *     .build();
 * }</pre>
 *
 * <p>Anything not set keeps the interceptor's value. A per-request deadline replaces the
 * interceptor's deadline; OkHttp's {@code callTimeout}, when it ends sooner, still wins.
 * Instances are immutable.
 */
public final class RetryOverrides {

  private static final RetryOverrides NO_RETRIES = builder().maxRetries(0).build();

  private final int maxRetries; // -1: not set; never exposed
  private final Duration deadline; // null: not set; never exposed

  private RetryOverrides(Builder builder) {
    this.maxRetries = builder.maxRetries;
    this.deadline = builder.deadline;
  }

  /**
   * A new builder with nothing overridden.
   *
   * @return a new builder with nothing overridden
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Overrides that make exactly one attempt.
   *
   * @return overrides that make exactly one attempt
   */
  public static RetryOverrides noRetries() {
    return NO_RETRIES;
  }

  /**
   * The overridden retry count (not counting the first attempt), if set.
   *
   * @return the overridden retry count (not counting the first attempt), if set
   */
  public OptionalInt maxRetries() {
    return maxRetries < 0 ? OptionalInt.empty() : OptionalInt.of(maxRetries);
  }

  /**
   * The overridden deadline for the whole logical call, if set.
   *
   * @return the overridden deadline for the whole logical call, if set
   */
  public Optional<Duration> deadline() {
    return Optional.ofNullable(deadline);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RetryOverrides other
        && maxRetries == other.maxRetries
        && Objects.equals(deadline, other.deadline);
  }

  @Override
  public int hashCode() {
    return Objects.hash(maxRetries, deadline);
  }

  @Override
  public String toString() {
    return "RetryOverrides{maxRetries=" + maxRetries() + ", deadline=" + deadline() + "}";
  }

  /** Builds {@link RetryOverrides}. Not thread-safe; {@link #build()} takes a snapshot. */
  public static final class Builder {
    private int maxRetries = -1;
    private Duration deadline;

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
     * Deadline for this logical call: all attempts and waits, from the moment the interceptor
     * sees the call.
     *
     * @param deadline the time allowed for all attempts and waits, positive, at most 24 hours
     * @return this builder
     * @throws NullPointerException if {@code deadline} is null
     * @throws IllegalArgumentException if {@code deadline} is zero, negative or over 24 hours
     */
    public Builder deadline(Duration deadline) {
      this.deadline = RetryInterceptor.checkDuration("deadline", deadline);
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
