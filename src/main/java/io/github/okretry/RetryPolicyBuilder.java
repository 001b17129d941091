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
   * The cap on any single computed wait. Default 10 s. A cap below the base delay is allowed and
   * makes every wait's cap equal to it.
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
    if (jitter == null) throw new NullPointerException("jitter == null");
    s.jitter = jitter;
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
   * it (never past the {@code maxRetryAfter} ceiling), so callers told the same instant do not
   * all return at once. The wait is never shorter than the server asked, and the extra is
   * trimmed so it never pushes a wait that fits past the deadline. Default 0.5, as Envoy does; 0
   * honors the value exactly.
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
    if (codes == null) throw new NullPointerException("codes == null");
    for (int code : codes) {
      if (code < 100 || code > 999) {
        throw new IllegalArgumentException("retryOnStatus code not in [100, 999]: " + code);
      }
    }
    for (int code : codes) s.retryStatuses.add(code);
    return self();
  }

  /**
   * Also retries responses that match {@code predicate}; several predicates add up (any one
   * matching is enough). To look at the body use {@link Response#peekBody}, which leaves it
   * readable.
   *
   * @param predicate returns true for what should also be retried
   * @return this builder
   * @throws NullPointerException if {@code predicate} is null
   */
  public B retryOnResponse(RetryPredicate<Response> predicate) {
    if (predicate == null) throw new NullPointerException("predicate == null");
    s.responsePredicate = or(s.responsePredicate, predicate);
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
    if (predicate == null) throw new NullPointerException("predicate == null");
    s.exceptionPredicate = or(s.exceptionPredicate, predicate);
    return self();
  }

  private static <T> RetryPredicate<T> or(@Nullable RetryPredicate<T> a, RetryPredicate<T> b) {
    return a == null ? b : value -> a.test(value) || b.test(value);
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
   * Whether POST and PATCH without an {@link IdempotencyKey} tag get a generated key (a UUID v4
   * from a {@code SecureRandom}, about 0.2 µs per POST). Default true. The key is unpredictable on
   * purpose: a server that de-duplicates by key across clients would otherwise let anyone who can
   * guess a key replay or poison another caller's request. When false, such requests are
   * repeated only after failures that prove the server did not process them.
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
    if (listener == null) throw new NullPointerException("listener == null");
    s.listener = listener;
    return self();
  }

  /**
   * The budget that bounds retries across calls. Default: a fresh {@link RetryBudget#create()}
   * for each policy built. Pass one instance to several policies to share it, or {@link
   * RetryBudget#unlimited()}.
   *
   * @param budget the budget to draw retries from
   * @return this builder
   * @throws NullPointerException if {@code budget} is null
   */
  public B retryBudget(RetryBudget budget) {
    if (budget == null) throw new NullPointerException("budget == null");
    s.budget = budget;
    return self();
  }

  /**
   * When a server answers 429 or 503 with a {@code Retry-After}, makes every call to that
   * origin (scheme, host, port) under this policy respect the same "not before" time: a new call
   * waits for it (spread upward like any {@code Retry-After}) if its deadline and the {@code
   * maxRetryAfter} ceiling allow, or else gets at once a local response with the stored status
   * and no request is sent. Default false, because many servers rate-limit per endpoint rather
   * than per origin.
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
    if (time == null) throw new NullPointerException("time == null");
    s.time = time;
    return self();
  }

  /** Test seam: the wall clock that HTTP-dates in Retry-After are compared with. */
  B clock(WallClock clock) {
    if (clock == null) throw new NullPointerException("clock == null");
    s.clock = clock;
    return self();
  }

  /** Test seam: the random source of the jitter; called from many threads unless a test's. */
  B random(RandomSource random) {
    if (random == null) throw new NullPointerException("random == null");
    s.random = random;
    return self();
  }

  /** Test seam: generates idempotency keys. */
  B keyGenerator(KeyGenerator keyGenerator) {
    if (keyGenerator == null) throw new NullPointerException("keyGenerator == null");
    s.keyGenerator = keyGenerator;
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
