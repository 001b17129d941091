package io.github.okretry;

import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.Classifier;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.RetryRules;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.WallClock;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * What okretry does with a call: which failures it retries, how long it waits, how it keeps a
 * repeated request safe, and how it protects the server. One immutable value, built once and
 * shared by the two ways of running calls, {@link RetryInterceptor} (blocking) and {@link
 * RetryingCallFactory} (waits without a thread):
 *
 * <pre>{@code
 * RetryPolicy policy = RetryPolicy.builder()
 *     .maxRetries(3)
 *     .deadline(10, TimeUnit.SECONDS)
 *     .build();
 * OkHttpClient client = RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
 * }</pre>
 *
 * <p>The settings are fixed at {@link Builder#build()}; every setting's default is on its setter
 * in {@link RetryPolicyBuilder}. A policy also holds the state that its calls share by design: the
 * {@link RetryBudget}, and a bounded per-origin table that paces retries waiting on an origin's
 * {@code Retry-After} and, when enabled, holds the origin-wide gate. Both are thread-safe. So one
 * policy should serve one client (or several that call the same servers), and {@link
 * #toBuilder()} variations share the budget but not the origin table. Per request, {@link
 * RetryOverrides} and {@link IdempotencyKey} tags change what a policy allows.
 */
public final class RetryPolicy {

  final Settings settings; // a private snapshot, never changed
  final Set<Integer> retryStatuses;

  // Shared by every call under this policy, with the state the calls share by design.
  final TimeSource time;
  final WallClock clock;
  final RandomSource random;
  final RetryBudget budget;
  final RetryRules rules;
  final Classifier classifier;
  final IdempotencyKeys keys;
  final Events events;
  final OriginGate originGate; // per-origin state: the opt-in gate, and the pacing of crowds

  RetryPolicy(Settings settings) {
    this.settings = settings;
    this.retryStatuses = Collections.unmodifiableSet(new TreeSet<>(settings.retryStatuses));
    this.time = settings.time;
    this.clock = settings.clock;
    this.random = settings.random;
    this.budget = settings.budget != null ? settings.budget : RetryBudget.create();
    this.rules =
        new RetryRules(
            new Backoff(settings.baseDelayNanos, settings.maxDelayNanos, settings.multiplier, settings.jitter),
            settings.maxRetryAfterNanos,
            settings.retryAfterSpread);
    this.classifier =
        new Classifier(retryStatuses, settings.responsePredicate, settings.exceptionPredicate);
    this.keys =
        new IdempotencyKeys(
            settings.idempotencyKeyHeader,
            settings.quoteIdempotencyKey,
            settings.generateIdempotencyKeys,
            settings.keyGenerator);
    this.events = new Events(settings.listener);
    this.originGate = new OriginGate();
  }

  /**
   * A builder with the defaults listed on each of its setters.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A policy with every default: 3 retries, 200 ms base delay, 10 s cap, Full Jitter, its own
   * budget.
   *
   * @return a new policy
   */
  public static RetryPolicy create() {
    return builder().build();
  }

  /**
   * A builder holding this policy's settings, for making a variation of it. The variation shares
   * this policy's {@link RetryBudget} unless given another.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * Retries after the first attempt; a call makes at most {@code maxRetries() + 1} attempts.
   *
   * @return retries after the first attempt, 0 or more
   */
  public int maxRetries() {
    return settings.maxRetries;
  }

  /**
   * The wait before retry 1 (its upper bound when jittered).
   *
   * @return the base delay in nanoseconds
   */
  public long baseDelayNanos() {
    return settings.baseDelayNanos;
  }

  /**
   * The cap on any single computed wait.
   *
   * @return the cap in nanoseconds
   */
  public long maxDelayNanos() {
    return settings.maxDelayNanos;
  }

  /**
   * Growth of the wait cap per retry.
   *
   * @return the multiplier, above 1
   */
  public double multiplier() {
    return settings.multiplier;
  }

  /**
   * How each wait is drawn from its cap.
   *
   * @return the jitter
   */
  public Jitter jitter() {
    return settings.jitter;
  }

  /**
   * The deadline of each whole logical call, or 0 for none (as OkHttp's timeouts use 0).
   *
   * @return the deadline in nanoseconds, or 0 for none
   */
  public long deadlineNanos() {
    return settings.deadlineNanos;
  }

  /**
   * The longest {@code Retry-After} honored.
   *
   * @return the ceiling in nanoseconds
   */
  public long maxRetryAfterNanos() {
    return settings.maxRetryAfterNanos;
  }

  /**
   * The largest random upward spread of a {@code Retry-After}, as a fraction of it.
   *
   * @return the fraction, in [0, 1]
   */
  public double retryAfterSpread() {
    return settings.retryAfterSpread;
  }

  /**
   * The HTTP status codes retried, sorted.
   *
   * @return an unmodifiable set of status codes
   */
  public Set<Integer> retryStatuses() {
    return retryStatuses;
  }

  /**
   * The name of the idempotency key header.
   *
   * @return the header name
   */
  public String idempotencyKeyHeader() {
    return settings.idempotencyKeyHeader;
  }

  /**
   * The budget this policy's calls draw their retries from.
   *
   * @return the budget, shared by every call under this policy
   */
  public RetryBudget retryBudget() {
    return budget;
  }

  /**
   * The listener told about every call.
   *
   * @return the listener, {@link RetryListener#NONE} by default
   */
  public RetryListener listener() {
    return settings.listener;
  }

  /**
   * Whether a 429/503 {@code Retry-After} holds back every call to its origin.
   *
   * @return true if origin-wide Retry-After is on
   */
  public boolean originWideRetryAfter() {
    return settings.originWideRetryAfter;
  }

  @Override
  public String toString() {
    Settings s = settings;
    return "RetryPolicy{maxRetries=" + s.maxRetries + ", baseDelayNanos=" + s.baseDelayNanos
        + ", maxDelayNanos=" + s.maxDelayNanos + ", multiplier=" + s.multiplier + ", jitter="
        + s.jitter + ", deadlineNanos=" + s.deadlineNanos + ", maxRetryAfterNanos="
        + s.maxRetryAfterNanos + ", retryAfterSpread=" + s.retryAfterSpread + ", retryStatuses="
        + retryStatuses + ", idempotencyKeyHeader=" + s.idempotencyKeyHeader + ", budget=" + budget
        + ", originWideRetryAfter=" + s.originWideRetryAfter + "}";
  }

  /** Builds a {@link RetryPolicy}; the setters and their defaults are in {@link RetryPolicyBuilder}. */
  public static final class Builder extends RetryPolicyBuilder<Builder> {
    Builder() {}

    Builder(RetryPolicy policy) {
      super(policy);
    }

    /**
     * An immutable policy with this builder's settings.
     *
     * @return a new policy
     * @throws IllegalStateException if the OkHttp on the classpath is older than 5.4.0, which
     *     okretry needs
     */
    public RetryPolicy build() {
      return buildPolicy();
    }
  }
}
