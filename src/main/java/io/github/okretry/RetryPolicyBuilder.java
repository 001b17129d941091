package io.github.okretry;

import io.github.okretry.internal.Durations;
import io.github.okretry.internal.KeyGenerator;
import io.github.okretry.internal.OkHttpVersion;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.SuppressSignatureCheck;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.WallClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The settings of a {@link RetryPolicy}, shared by {@link RetryPolicy.Builder} and {@link
 * RetryInterceptor.Builder}, which differ only in what {@code build()} makes. Each setter rejects
 * a bad value at once, naming the setting and the value ({@link NullPointerException} for null,
 * {@link IllegalArgumentException} for a value out of range); {@code build()} takes an immutable
 * snapshot, so a builder can be reused and changed afterwards. Not thread-safe.
 *
 * <p>Durations are set as {@code (amount, TimeUnit)}, as OkHttp's own builders do, or as a {@link
 * Duration} where {@code java.time} exists (Java 8+, Android API 26+).
 *
 * @param <B> the concrete builder, returned by every setter for chaining
 */
public abstract class RetryPolicyBuilder<B extends RetryPolicyBuilder<B>> {

  final Settings s;

  RetryPolicyBuilder() {
    s = new Settings();
  }

  RetryPolicyBuilder(RetryPolicy policy) {
    s = new Settings(policy.settings);
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }

  /**
   * Retries after the first attempt: at most {@code maxRetries + 1} attempts in all; 0 means a
   * single attempt. Default 3.
   *
   * @param maxRetries retries after the first attempt, 0 or more
   * @return this builder
   * @throws IllegalArgumentException if {@code maxRetries} is negative
   */
  public B maxRetries(int maxRetries) {
    if (maxRetries < 0) throw new IllegalArgumentException("maxRetries must be >= 0: " + maxRetries);
    s.maxRetries = maxRetries;
    return self();
  }

  /**
   * The wait before retry 1, which is its upper bound when jittered. Default 200 ms.
   *
   * @param amount the wait cap before retry 1, positive, at most 24 hours
   * @param unit the unit of {@code amount}
   * @return this builder
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  public B baseDelay(long amount, TimeUnit unit) {
    s.baseDelayNanos = Durations.checkedNanos("baseDelay", amount, unit);
    return self();
  }

  /**
   * The wait before retry 1, as a {@link Duration}; see {@link #baseDelay(long, TimeUnit)}.
   *
   * @param baseDelay the wait cap before retry 1, positive, at most 24 hours
   * @return this builder
   * @throws NullPointerException if {@code baseDelay} is null
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  @SuppressSignatureCheck
  public B baseDelay(Duration baseDelay) {
    s.baseDelayNanos = Durations.checkedNanos("baseDelay", baseDelay);
    return self();
  }

  /**
   * The cap on any single computed wait. Default 10 s. It may be below the base delay.
   *
   * @param amount the cap on any single wait, positive, at most 24 hours
   * @param unit the unit of {@code amount}
   * @return this builder
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  public B maxDelay(long amount, TimeUnit unit) {
    s.maxDelayNanos = Durations.checkedNanos("maxDelay", amount, unit);
    return self();
  }

  /**
   * The cap on any single computed wait, as a {@link Duration}; see {@link #maxDelay(long,
   * TimeUnit)}.
   *
   * @param maxDelay the cap on any single wait, positive, at most 24 hours
   * @return this builder
   * @throws NullPointerException if {@code maxDelay} is null
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  @SuppressSignatureCheck
  public B maxDelay(Duration maxDelay) {
    s.maxDelayNanos = Durations.checkedNanos("maxDelay", maxDelay);
    return self();
  }

  /**
   * Growth of the wait cap per retry: cap(n) = {@code baseDelay × multiplier^(n-1)}. Default 2.
   *
   * @param multiplier growth of the wait cap per retry, finite and above 1
   * @return this builder
   * @throws IllegalArgumentException if {@code multiplier} is NaN, infinite, or not above 1
   */
  public B multiplier(double multiplier) {
    if (!(multiplier > 1.0) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException("multiplier must be finite and > 1: " + multiplier);
    }
    s.multiplier = multiplier;
    return self();
  }

  /**
   * How each wait is drawn from its cap. Default {@link Jitter#FULL}.
   *
   * @param jitter how each wait is drawn from its cap
   * @return this builder
   * @throws NullPointerException if {@code jitter} is null
   */
  public B jitter(Jitter jitter) {
    s.jitter = notNull(jitter, "jitter");
    return self();
  }

  /**
   * A deadline for each whole logical call (all attempts and waits), measured on a monotonic
   * clock from when okretry first sees the call. Default: none, though OkHttp's {@code
   * callTimeout} always bounds the call. Per request, {@link RetryOverrides} replaces it.
   *
   * @param amount the time allowed for all attempts and waits, positive, at most 24 hours
   * @param unit the unit of {@code amount}
   * @return this builder
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  public B deadline(long amount, TimeUnit unit) {
    s.deadlineNanos = Durations.checkedNanos("deadline", amount, unit);
    return self();
  }

  /**
   * A deadline for each whole logical call, as a {@link Duration}; see {@link #deadline(long,
   * TimeUnit)}.
   *
   * @param deadline the time allowed for all attempts and waits, positive, at most 24 hours
   * @return this builder
   * @throws NullPointerException if {@code deadline} is null
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  @SuppressSignatureCheck
  public B deadline(Duration deadline) {
    s.deadlineNanos = Durations.checkedNanos("deadline", deadline);
    return self();
  }

  /**
   * Removes the deadline. The default.
   *
   * @return this builder
   */
  public B noDeadline() {
    s.deadlineNanos = 0;
    return self();
  }

  /**
   * The longest {@code Retry-After} honored; a longer one ends the call at once with that
   * response. Default 60 s.
   *
   * @param amount the longest Retry-After to wait for, positive, at most 24 hours
   * @param unit the unit of {@code amount}
   * @return this builder
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  public B maxRetryAfter(long amount, TimeUnit unit) {
    s.maxRetryAfterNanos = Durations.checkedNanos("maxRetryAfter", amount, unit);
    return self();
  }

  /**
   * The longest {@code Retry-After} honored, as a {@link Duration}; see {@link
   * #maxRetryAfter(long, TimeUnit)}.
   *
   * @param maxRetryAfter the longest Retry-After to wait for, positive, at most 24 hours
   * @return this builder
   * @throws NullPointerException if {@code maxRetryAfter} is null
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  @SuppressSignatureCheck
  public B maxRetryAfter(Duration maxRetryAfter) {
    s.maxRetryAfterNanos = Durations.checkedNanos("maxRetryAfter", maxRetryAfter);
    return self();
  }

  /**
   * Spreads a server's {@code Retry-After} upward by a random extra of up to {@code fraction} of
   * it, so callers told the same instant do not all return at once: never shorter than asked,
   * never past {@code maxRetryAfter} or the deadline. Default 0.5, as Envoy does; 0 is exact.
   *
   * @param fraction the largest extra, as a fraction of the Retry-After, in [0, 1]
   * @return this builder
   * @throws IllegalArgumentException if {@code fraction} is not in {@code [0, 1]}
   */
  public B retryAfterSpread(double fraction) {
    if (!(fraction >= 0 && fraction <= 1)) {
      throw new IllegalArgumentException("retryAfterSpread must be in [0, 1]: " + fraction);
    }
    s.retryAfterSpread = fraction;
    return self();
  }

  /**
   * Also retries responses with these status codes, on top of the default 429 and 503. A POST
   * without an idempotency key is still repeated only on 429 and 503, which prove it was not
   * processed.
   *
   * @param codes HTTP status codes in [100, 999]
   * @return this builder
   * @throws NullPointerException if {@code codes} is null
   * @throws IllegalArgumentException if a code is outside {@code [100, 999]}
   */
  public B retryOnStatus(int... codes) {
    for (int code : notNull(codes, "codes")) {
      if (code < 100 || code > 999) {
        throw new IllegalArgumentException("retryOnStatus code not in [100, 999]: " + code);
      }
    }
    for (int code : codes) s.retryStatuses.add(code);
    return self();
  }

  /**
   * Also retries responses that match {@code predicate}; several add up (any one matching is
   * enough). {@link Response#peekBody} reads the body and leaves it readable.
   *
   * @param predicate returns true for what should also be retried
   * @return this builder
   * @throws NullPointerException if {@code predicate} is null
   */
  public B retryOnResponse(RetryPredicate<Response> predicate) {
    s.responsePredicate = or(s.responsePredicate, notNull(predicate, "predicate"));
    return self();
  }

  /**
   * Also retries exceptions that match {@code predicate}; several add up. A canceled call or an
   * interrupted thread is never retried, whatever the predicate says.
   *
   * @param predicate returns true for what should also be retried
   * @return this builder
   * @throws NullPointerException if {@code predicate} is null
   */
  public B retryOnException(RetryPredicate<IOException> predicate) {
    s.exceptionPredicate = or(s.exceptionPredicate, notNull(predicate, "predicate"));
    return self();
  }

  private static <T> RetryPredicate<T> or(@Nullable RetryPredicate<T> a, RetryPredicate<T> b) {
    return a == null ? b : value -> a.test(value) || b.test(value);
  }

  private static <T> T notNull(@Nullable T value, String name) {
    if (value == null) throw new NullPointerException(name + " == null");
    return value;
  }

  /**
   * The header that carries the idempotency key. Default {@code Idempotency-Key}.
   *
   * @param name an HTTP header name (a token)
   * @return this builder
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid header name
   */
  public B idempotencyKeyHeader(String name) {
    if (name == null) throw new NullPointerException("idempotencyKeyHeader == null");
    if (name.isEmpty()) throw new IllegalArgumentException("idempotencyKeyHeader is empty");
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c <= 0x20 || c >= 0x7f || "\"(),/:;<=>?@[\\]{}".indexOf(c) >= 0) {
        throw new IllegalArgumentException("idempotencyKeyHeader is not a token: " + name);
      }
    }
    s.idempotencyKeyHeader = name;
    return self();
  }

  /**
   * Sends the key as a Structured-Field string ({@code "…"}), as the IETF {@code
   * Idempotency-Key} draft specifies, instead of the bare value Stripe-style APIs expect.
   * Default false (bare).
   *
   * @param quote true to send the key as a quoted sf-string
   * @return this builder
   */
  public B quoteIdempotencyKey(boolean quote) {
    s.quoteIdempotencyKey = quote;
    return self();
  }

  /**
   * Whether POST and PATCH without an {@link IdempotencyKey} tag get a generated key (a random
   * UUID v4, about 0.2 µs per POST). Default true. When false, such requests are repeated only
   * after failures that prove the server did not process them.
   *
   * @param generate true to generate keys for POST and PATCH
   * @return this builder
   */
  public B generateIdempotencyKeys(boolean generate) {
    s.generateIdempotencyKeys = generate;
    return self();
  }

  /**
   * Receives events for every call. Default {@link RetryListener#NONE}.
   *
   * @param listener receives every call's events
   * @return this builder
   * @throws NullPointerException if {@code listener} is null
   */
  public B listener(RetryListener listener) {
    s.listener = notNull(listener, "listener");
    return self();
  }

  /**
   * The budget that bounds retries across calls. Default: a fresh {@link RetryBudget#create()}
   * per policy built; share one instance between policies, or {@link RetryBudget#unlimited()}.
   *
   * @param budget the budget to draw retries from
   * @return this builder
   * @throws NullPointerException if {@code budget} is null
   */
  public B retryBudget(RetryBudget budget) {
    s.budget = notNull(budget, "budget");
    return self();
  }

  /**
   * When a server answers 429 or 503 with a {@code Retry-After}, every call to that origin
   * (scheme, host, port) under this policy waits for the same "not before" time if its deadline
   * and {@code maxRetryAfter} allow, or else gets at once a local response with that status and
   * sends nothing. Default false: many servers rate-limit per endpoint, not per origin.
   *
   * @param enabled true to share Retry-After across calls to an origin
   * @return this builder
   */
  public B originWideRetryAfter(boolean enabled) {
    s.originWideRetryAfter = enabled;
    return self();
  }

  /** Test seam: monotonic time and sleeping. */
  B timeSource(TimeSource time) {
    s.time = notNull(time, "time");
    return self();
  }

  /** Test seam: the wall clock that HTTP-dates in Retry-After are compared with. */
  B clock(WallClock clock) {
    s.clock = notNull(clock, "clock");
    return self();
  }

  /** Test seam: the random source of the jitter; called from many threads unless a test's. */
  B random(RandomSource random) {
    s.random = notNull(random, "random");
    return self();
  }

  /** Test seam: generates idempotency keys. */
  B keyGenerator(KeyGenerator keyGenerator) {
    s.keyGenerator = notNull(keyGenerator, "keyGenerator");
    return self();
  }

  /** The immutable policy these settings describe. */
  final RetryPolicy buildPolicy() {
    OkHttpVersion.check(); // here, with a clear message, not NoSuchMethodError on a retry
    Settings snapshot = new Settings(s);
    if (snapshot.budget == null) snapshot.budget = RetryBudget.create();
    return new RetryPolicy(snapshot);
  }
}
