package io.github.okretry;

import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.Classifier;
import io.github.okretry.internal.Decision;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RetryPolicy;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An OkHttp application interceptor that retries transient failures with exponential backoff and
 * jitter, honors {@code Retry-After}, sends an idempotency key so a repeated POST is safe, and
 * keeps the whole logical call within a deadline.
 *
 * <pre>{@code
 * RetryInterceptor retry = RetryInterceptor.builder()
 *     .maxRetries(3)
 *     .deadline(Duration.ofSeconds(10))
 *     .build();
 * OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
 * }</pre>
 *
 * <p><b>What is retried.</b> Timeouts and connection failures (refused, reset, unexpected end of
 * stream) and HTTP 429 and 503, plus whatever {@link Builder#retryOnStatus}, {@link
 * Builder#retryOnResponse} and {@link Builder#retryOnException} add. Never: a canceled call, an
 * interrupted thread, TLS failures, {@link java.net.ProtocolException}.
 *
 * <p><b>When it is safe.</b> A request is repeated only if its method is idempotent (GET, HEAD,
 * OPTIONS, TRACE, PUT, DELETE), it carries an idempotency key, or the failure proves the server
 * did not process it (429, 503, or a connection that failed before the request was written).
 * One-shot and duplex bodies are never repeated. For a request that must not be repeated,
 * OkHttp's own {@code retryOnConnectionFailure} is turned off too, so nothing underneath sends
 * it twice.
 *
 * <p><b>Waits.</b> Before retry {@code n} the wait is drawn by the {@link Jitter} from {@code
 * min(baseDelay × multiplier^(n-1), maxDelay)}. A valid {@code Retry-After} replaces it; if that
 * exceeds {@link Builder#maxRetryAfter} or would end past the deadline, the response is returned
 * at once. No wait is started that would end past the deadline, and each attempt's connect,
 * read and write timeouts are shrunk to the time left.
 *
 * <p><b>Outcome.</b> The caller gets the last real outcome: the last response, body unread, or
 * the last exception with earlier ones attached as {@linkplain Throwable#getSuppressed()
 * suppressed}. Retried responses are closed before waiting.
 *
 * <p>The configuration is immutable; the {@link RetryBudget} and the origin-wide Retry-After
 * state it holds are shared by every call through it, by design, and thread-safe. Share one
 * instance per client. Add it with {@link
 * OkHttpClient.Builder#addInterceptor}: as a network interceptor it throws {@link
 * IllegalStateException}.
 */
public final class RetryInterceptor implements Interceptor {

  private static final Logger log = LoggerFactory.getLogger(RetryInterceptor.class);

  static final Duration LONGEST_DURATION = Duration.ofHours(24);


  // Package-private where LogicalCall, which applies them to one call, reads them.
  final int maxRetries;
  private final Duration baseDelay;
  private final Duration maxDelay;
  private final double multiplier;
  private final Jitter jitter;
  final Duration deadline; // null: none
  private final Duration maxRetryAfter;
  private final double retryAfterSpread;
  private final Set<Integer> retryStatuses;
  private final Predicate<Response> responsePredicate;
  private final Predicate<IOException> exceptionPredicate;
  private final String idempotencyKeyHeader;
  private final boolean quoteIdempotencyKey;
  private final boolean generateIdempotencyKeys;
  final RetryListener listener;
  final RetryBudget budget;
  final boolean originWideRetryAfter;
  final TimeSource time;
  final Clock clock;
  final RandomGenerator random;
  private final Supplier<String> keyGenerator;

  final RetryPolicy policy;
  final Classifier classifier;
  final IdempotencyKeys keys;
  final OriginGate originGate; // per-origin state: the gate (if originWideRetryAfter) and pacing

  private RetryInterceptor(Builder b) {
    this.maxRetries = b.maxRetries;
    this.baseDelay = b.baseDelay;
    this.maxDelay = b.maxDelay;
    this.multiplier = b.multiplier;
    this.jitter = b.jitter;
    this.deadline = b.deadline;
    this.maxRetryAfter = b.maxRetryAfter;
    this.retryAfterSpread = b.retryAfterSpread;
    this.retryStatuses = Collections.unmodifiableSet(new TreeSet<>(b.retryStatuses));
    this.responsePredicate = b.responsePredicate;
    this.exceptionPredicate = b.exceptionPredicate;
    this.idempotencyKeyHeader = b.idempotencyKeyHeader;
    this.quoteIdempotencyKey = b.quoteIdempotencyKey;
    this.generateIdempotencyKeys = b.generateIdempotencyKeys;
    this.listener = b.listener;
    this.budget = b.budget != null ? b.budget : RetryBudget.create();
    this.originWideRetryAfter = b.originWideRetryAfter;
    this.time = b.time;
    this.clock = b.clock;
    this.random = b.random;
    this.keyGenerator = b.keyGenerator;

    this.policy =
        new RetryPolicy(
            new Backoff(baseDelay.toNanos(), maxDelay.toNanos(), multiplier, jitter),
            maxRetryAfter.toNanos(),
            retryAfterSpread);
    this.classifier = new Classifier(retryStatuses, responsePredicate, exceptionPredicate);
    this.keys =
        new IdempotencyKeys(
            idempotencyKeyHeader, quoteIdempotencyKey, generateIdempotencyKeys, keyGenerator);
    this.originGate = new OriginGate();
  }

  /**
   * A builder with the defaults listed on each of its methods.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * An interceptor with every default: 3 retries, 200 ms base, 10 s cap, Full Jitter.
   *
   * @return a new interceptor with its own budget
   */
  public static RetryInterceptor create() {
    return builder().build();
  }

  /**
   * A builder holding this interceptor's configuration, for making a variation of it. The
   * variation shares this interceptor's {@link RetryBudget} unless given another.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * Retries after the first attempt; the call makes at most {@code maxRetries() + 1} attempts.
   *
   * @return retries after the first attempt; the call makes at most {@code maxRetries() + 1} attempts
   */
  public int maxRetries() {
    return maxRetries;
  }

  /**
   * The wait before retry 1 (its upper bound when jittered).
   *
   * @return the wait before retry 1 (its upper bound when jittered)
   */
  public Duration baseDelay() {
    return baseDelay;
  }

  /**
   * The cap on any single computed wait.
   *
   * @return the cap on any single computed wait
   */
  public Duration maxDelay() {
    return maxDelay;
  }

  /**
   * Growth of the wait cap per retry.
   *
   * @return growth of the wait cap per retry
   */
  public double multiplier() {
    return multiplier;
  }

  /**
   * How each wait is drawn from its cap.
   *
   * @return how each wait is drawn from its cap
   */
  public Jitter jitter() {
    return jitter;
  }

  /**
   * The deadline for each whole logical call, or empty for none.
   *
   * @return the deadline for each whole logical call, or empty for none
   */
  public Optional<Duration> deadline() {
    return Optional.ofNullable(deadline);
  }

  /**
   * The longest {@code Retry-After} honored.
   *
   * @return the longest {@code Retry-After} honored
   */
  public Duration maxRetryAfter() {
    return maxRetryAfter;
  }

  /**
   * The HTTP status codes retried, sorted.
   *
   * @return the HTTP status codes retried, sorted
   */
  public Set<Integer> retryStatuses() {
    return retryStatuses;
  }

  /**
   * The name of the idempotency key header.
   *
   * @return the name of the idempotency key header
   */
  public String idempotencyKeyHeader() {
    return idempotencyKeyHeader;
  }

  /**
   * The interceptor that okretry's features which must see every network request need: it
   * protects OkHttp from a hostile {@code Retry-After} (OkHttp 5 throws {@link
   * NumberFormatException} on a 503 whose numeric {@code Retry-After} exceeds an int) by
   * saturating such values, which keeps their meaning. Add it with {@link
   * OkHttpClient.Builder#addNetworkInterceptor}, or use {@link #install}.
   *
   * @return the network interceptor, stateless and shareable
   */
  public Interceptor networkInterceptor() {
    return RetryAfterGuard.INSTANCE;
  }

  /**
   * Adds this interceptor as an application interceptor and {@link #networkInterceptor()} as a
   * network interceptor to {@code builder}: the recommended setup.
   *
   * @param builder the client builder to add both interceptors to
   * @return {@code builder}, for chaining
   */
  public OkHttpClient.Builder install(OkHttpClient.Builder builder) {
    return builder.addInterceptor(this).addNetworkInterceptor(networkInterceptor());
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    if (chain.connection() != null) {
      throw new IllegalStateException(
          "RetryInterceptor must be added with addInterceptor(), not addNetworkInterceptor()");
    }
    Call call = chain.call();
    LogicalCall logical = new LogicalCall(this, chain.request(), call.timeout().timeoutNanos());
    Request request = logical.request();
    // OkHttp would silently resend an unsafe request if a pooled connection dropped after it was
    // written; only this interceptor, which knows it is unsafe, may decide about repeats.
    Chain base = logical.mustNotRepeatUnderneath() ? chain.withRetryOnConnectionFailure(false) : chain;

    DeadlineWatch watch = logical.needsDeadlineWatch() ? DeadlineWatch.start(call, logical.remainingNanos()) : null;
    try {
      while (true) {
        for (Decision gate; (gate = logical.beforeAttempt()) != null; ) {
          if (!gate.isRetry()) return logical.throttledResponse();
          sleep(logical, gate.delayNanos(), call, watch);
        }
        Chain attemptChain = logical.hasDeadline() ? withTimeoutsWithin(base, logical.remainingNanos()) : base;
        logical.attemptStarting(call);

        Response response = null;
        IOException error = null;
        try {
          response = attemptChain.proceed(request);
        } catch (IOException e) {
          error = e;
        } catch (Exception e) {
          // OkHttp 5 can throw a raw, undeclared InterruptedException while connecting, and it
          // clears the interrupt flag: restore the flag and report it as Java I/O does.
          if (!(e instanceof InterruptedException)) throw e;
          Thread.currentThread().interrupt();
          error = (IOException) new InterruptedIOException("interrupted").initCause(e);
        }

        // A cancel by our own deadline is not the caller's cancel: report it as the timeout it is.
        boolean cutByDeadline = watch != null && watch.fired() && error != null;
        Decision decision =
            logical.afterAttempt(
                response, error, call.isCanceled() && !cutByDeadline, Thread.currentThread().isInterrupted());
        if (decision == null) return response;
        if (!decision.isRetry()) {
          if (response != null) return response;
          throw logical.failure(cutByDeadline ? LogicalCall.deadlineTimeout(error) : error);
        }
        sleep(logical, decision.delayNanos(), call, watch);
      }
    } finally {
      if (watch != null) watch.exit();
    }
  }

  private void sleep(LogicalCall logical, long delayNanos, Call call, DeadlineWatch watch)
      throws IOException {
    try {
      time.sleep(delayNanos, call);
    } catch (IOException e) {
      if (watch != null && watch.fired()) {
        throw logical.failure(logical.deadlinePassedWhileWaiting(e));
      }
      logical.waitFailed(e, e instanceof InterruptedIOException);
      throw logical.failure(e);
    }
  }

  /**
   * Shrinks each of the attempt's timeouts to the time left. OkHttp's 0 means "no timeout", so it
   * becomes the time left rather than staying unbounded; nothing goes below OkHttp's 1 ms.
   */
  static Chain withTimeoutsWithin(Chain chain, long remainingNanos) {
    long millis = Math.max(1, (remainingNanos + 999_999) / 1_000_000);
    int left = (int) Math.min(Integer.MAX_VALUE, millis);
    // Each with…() copies the chain, so only change what the deadline actually shortens.
    int connect = chain.connectTimeoutMillis();
    int read = chain.readTimeoutMillis();
    int write = chain.writeTimeoutMillis();
    Chain shrunk = chain;
    if (shrink(connect, left) != connect) {
      shrunk = shrunk.withConnectTimeout(shrink(connect, left), TimeUnit.MILLISECONDS);
    }
    if (shrink(read, left) != read) shrunk = shrunk.withReadTimeout(shrink(read, left), TimeUnit.MILLISECONDS);
    if (shrink(write, left) != write) shrunk = shrunk.withWriteTimeout(shrink(write, left), TimeUnit.MILLISECONDS);
    return shrunk;
  }

  static int shrink(int configuredMillis, int leftMillis) {
    return configuredMillis == 0 ? leftMillis : Math.min(configuredMillis, leftMillis);
  }

  /** A short, header-free description for listeners and logs. */
  static String describe(Response response, IOException error) {
    if (response != null) return "HTTP " + response.code();
    String message = error.getMessage();
    return message == null
        ? error.getClass().getSimpleName()
        : error.getClass().getSimpleName() + ": " + message;
  }

  void notifyAttemptStarted(Request request, int attempt) {
    if (listener == RetryListener.NONE) return;
    try {
      listener.onAttemptStarted(request, attempt);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onAttemptStarted threw; ignored", e);
    }
  }

  void notifyNetworkRequest(Request request, int attempt, int requestInAttempt) {
    if (requestInAttempt > 1 && log.isDebugEnabled()) {
      log.debug(
          "{} {} attempt {}: OkHttp sent request {} by itself (its own retry or a follow-up)",
          request.method(),
          request.url().redact(),
          attempt,
          requestInAttempt);
    }
    try {
      listener.onNetworkRequest(request, attempt, requestInAttempt);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onNetworkRequest threw; ignored", e);
    }
  }

  void notifyRetryScheduled(Request request, int attempt, String failure, long delayNanos) {
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} attempt {} failed ({}); retrying in {} ms",
          request.method(),
          request.url().redact(),
          attempt,
          failure,
          TimeUnit.NANOSECONDS.toMillis(delayNanos));
    }
    if (listener == RetryListener.NONE) return;
    try {
      listener.onRetryScheduled(request, attempt, failure, Duration.ofNanos(delayNanos));
    } catch (RuntimeException e) {
      log.warn("RetryListener.onRetryScheduled threw; ignored", e);
    }
  }

  void notifyGaveUp(Request request, int attempts, GiveUpReason reason, String failure) {
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} gave up after {} attempt(s): {} ({})",
          request.method(),
          request.url().redact(),
          attempts,
          reason,
          failure);
    }
    if (listener == RetryListener.NONE) return;
    try {
      listener.onGaveUp(request, attempts, reason, failure);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onGaveUp threw; ignored", e);
    }
  }

  void notifySucceeded(Request request, Response response, int attempts) {
    if (attempts > 1 && log.isDebugEnabled()) {
      log.debug(
          "{} {} succeeded on attempt {} (HTTP {})",
          request.method(),
          request.url().redact(),
          attempts,
          response.code());
    }
    if (listener == RetryListener.NONE) return;
    try {
      listener.onSucceeded(request, response, attempts);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onSucceeded threw; ignored", e);
    }
  }

  /** Validates a public duration setting: present, positive, and at most 24 hours. */
  static Duration checkDuration(String name, Duration value) {
    Objects.requireNonNull(value, () -> name + " == null");
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
    if (value.compareTo(LONGEST_DURATION) > 0) {
      throw new IllegalArgumentException(name + " must be at most " + LONGEST_DURATION + ": " + value);
    }
    return value;
  }

  /**
   * Configures a {@link RetryInterceptor}. Each setter rejects a bad value at once, naming the
   * setting; {@link #build()} takes an immutable snapshot, so a builder can be reused and changed
   * afterwards without affecting interceptors already built. Not thread-safe.
   */
  public static final class Builder {
    private int maxRetries = 3;
    private Duration baseDelay = Duration.ofMillis(200);
    private Duration maxDelay = Duration.ofSeconds(10);
    private double multiplier = 2.0;
    private Jitter jitter = Jitter.FULL;
    private Duration deadline; // none
    private Duration maxRetryAfter = Duration.ofSeconds(60);
    private double retryAfterSpread = 0.5;
    private final Set<Integer> retryStatuses = new TreeSet<>(Set.of(429, 503));
    private Predicate<Response> responsePredicate;
    private Predicate<IOException> exceptionPredicate;
    private String idempotencyKeyHeader = "Idempotency-Key";
    private boolean quoteIdempotencyKey;
    private boolean generateIdempotencyKeys = true;
    private RetryListener listener = RetryListener.NONE;
    private RetryBudget budget; // null: a fresh default budget per build()
    private boolean originWideRetryAfter;
    private TimeSource time = TimeSource.SYSTEM;
    private Clock clock = Clock.systemUTC();
    private RandomGenerator random = () -> ThreadLocalRandom.current().nextLong();
    private Supplier<String> keyGenerator = () -> UUID.randomUUID().toString();

    private Builder() {}

    private Builder(RetryInterceptor r) {
      maxRetries = r.maxRetries;
      baseDelay = r.baseDelay;
      maxDelay = r.maxDelay;
      multiplier = r.multiplier;
      jitter = r.jitter;
      deadline = r.deadline;
      maxRetryAfter = r.maxRetryAfter;
      retryAfterSpread = r.retryAfterSpread;
      retryStatuses.clear();
      retryStatuses.addAll(r.retryStatuses);
      responsePredicate = r.responsePredicate;
      exceptionPredicate = r.exceptionPredicate;
      idempotencyKeyHeader = r.idempotencyKeyHeader;
      quoteIdempotencyKey = r.quoteIdempotencyKey;
      generateIdempotencyKeys = r.generateIdempotencyKeys;
      listener = r.listener;
      budget = r.budget; // a variation shares its original's budget, as a shared client would
      originWideRetryAfter = r.originWideRetryAfter;
      time = r.time;
      clock = r.clock;
      random = r.random;
      keyGenerator = r.keyGenerator;
    }

    /**
     * Retries after the first attempt: at most {@code maxRetries + 1} attempts in all; 0 means a
     * single attempt. Default 3.
     *
     * @param maxRetries retries after the first attempt, 0 or more
     * @return this builder
     * @throws IllegalArgumentException if {@code maxRetries} is negative
     */
    public Builder maxRetries(int maxRetries) {
      if (maxRetries < 0) throw new IllegalArgumentException("maxRetries must be >= 0: " + maxRetries);
      this.maxRetries = maxRetries;
      return this;
    }

    /**
     * The wait before retry 1, which is its upper bound when jittered. Default 200 ms.
     *
     * @param baseDelay the wait cap before retry 1, positive, at most 24 hours
     * @return this builder
     * @throws NullPointerException if {@code baseDelay} is null
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder baseDelay(Duration baseDelay) {
      this.baseDelay = checkDuration("baseDelay", baseDelay);
      return this;
    }

    /**
     * The cap on any single computed wait. Default 10 s. A cap below {@link #baseDelay} is allowed
     * and makes every wait's cap equal to {@code maxDelay}.
     *
     * @param maxDelay the cap on any single wait, positive, at most 24 hours
     * @return this builder
     * @throws NullPointerException if {@code maxDelay} is null
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder maxDelay(Duration maxDelay) {
      this.maxDelay = checkDuration("maxDelay", maxDelay);
      return this;
    }

    /**
     * Growth of the wait cap per retry: cap(n) = {@code baseDelay × multiplier^(n-1)}. Default 2.
     *
     * @param multiplier growth of the wait cap per retry, finite and above 1
     * @return this builder
     * @throws IllegalArgumentException if {@code multiplier} is NaN, infinite, or not above 1
     */
    public Builder multiplier(double multiplier) {
      if (!(multiplier > 1.0) || Double.isInfinite(multiplier)) {
        throw new IllegalArgumentException("multiplier must be finite and > 1: " + multiplier);
      }
      this.multiplier = multiplier;
      return this;
    }

    /**
     * How each wait is drawn from its cap. Default {@link Jitter#FULL}.
     *
     * @param jitter how each wait is drawn from its cap
     * @return this builder
     * @throws NullPointerException if {@code jitter} is null
     */
    public Builder jitter(Jitter jitter) {
      this.jitter = Objects.requireNonNull(jitter, "jitter == null");
      return this;
    }

    /**
     * A deadline for each whole logical call (all attempts and waits), measured on a monotonic
     * clock from when the interceptor first sees the call. Default: none, though OkHttp's
     * {@code callTimeout} always bounds the call. Per request, {@link RetryOverrides} replaces it.
     *
     * @param deadline the time allowed for all attempts and waits, positive, at most 24 hours
     * @return this builder
     * @throws NullPointerException if {@code deadline} is null
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder deadline(Duration deadline) {
      this.deadline = checkDuration("deadline", deadline);
      return this;
    }

    /**
     * Removes the deadline set by {@link #deadline(Duration)}. The default.
     *
     * @return this builder
     */
    public Builder noDeadline() {
      this.deadline = null;
      return this;
    }

    /**
     * The longest {@code Retry-After} honored; a longer one ends the call at once with that
     * response. Default 60 s.
     *
     * @param maxRetryAfter the longest Retry-After to wait for, positive, at most 24 hours
     * @return this builder
     * @throws NullPointerException if {@code maxRetryAfter} is null
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = checkDuration("maxRetryAfter", maxRetryAfter);
      return this;
    }

    /**
     * Spreads a server's {@code Retry-After} upward by a random extra of up to {@code fraction} of
     * it (never past {@link #maxRetryAfter}), so callers told the same instant do not all return
     * at once. The wait is never shorter than the server asked, and the extra is trimmed so it never
     * pushes a wait that fits past the deadline. Default 0.5, as Envoy does; 0 honors the value
     * exactly.
     *
     * @param fraction the largest extra, as a fraction of the Retry-After, in [0, 1]
     * @return this builder
     * @throws IllegalArgumentException if {@code fraction} is not in {@code [0, 1]}
     */
    public Builder retryAfterSpread(double fraction) {
      if (!(fraction >= 0 && fraction <= 1)) {
        throw new IllegalArgumentException("retryAfterSpread must be in [0, 1]: " + fraction);
      }
      this.retryAfterSpread = fraction;
      return this;
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
    public Builder retryOnStatus(int... codes) {
      Objects.requireNonNull(codes, "codes == null");
      for (int code : codes) {
        if (code < 100 || code > 999) {
          throw new IllegalArgumentException("retryOnStatus code not in [100, 999]: " + code);
        }
      }
      for (int code : codes) retryStatuses.add(code);
      return this;
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
    public Builder retryOnResponse(Predicate<Response> predicate) {
      Objects.requireNonNull(predicate, "predicate == null");
      responsePredicate = responsePredicate == null ? predicate : responsePredicate.or(predicate);
      return this;
    }

    /**
     * Also retries exceptions that match {@code predicate}; several add up. A canceled call or an
     * interrupted thread is never retried, whatever the predicate says.
     *
     * @param predicate returns true for what should also be retried
     * @return this builder
     * @throws NullPointerException if {@code predicate} is null
     */
    public Builder retryOnException(Predicate<IOException> predicate) {
      Objects.requireNonNull(predicate, "predicate == null");
      exceptionPredicate = exceptionPredicate == null ? predicate : exceptionPredicate.or(predicate);
      return this;
    }

    /**
     * The header that carries the idempotency key. Default {@code Idempotency-Key}.
     *
     * @param name an HTTP header name (a token)
     * @return this builder
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is not a valid header name
     */
    public Builder idempotencyKeyHeader(String name) {
      Objects.requireNonNull(name, "idempotencyKeyHeader == null");
      if (name.isEmpty()) throw new IllegalArgumentException("idempotencyKeyHeader is empty");
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        if (c <= 0x20 || c >= 0x7f || "\"(),/:;<=>?@[\\]{}".indexOf(c) >= 0) {
          throw new IllegalArgumentException("idempotencyKeyHeader is not a token: " + name);
        }
      }
      this.idempotencyKeyHeader = name;
      return this;
    }

    /**
     * Sends the key as a Structured-Field string ({@code "…"}), as the IETF {@code
     * Idempotency-Key} draft specifies, instead of the bare value Stripe-style APIs expect.
     * Default false (bare).
     *
     * @param quote true to send the key as a quoted sf-string
     * @return this builder
     */
    public Builder quoteIdempotencyKey(boolean quote) {
      this.quoteIdempotencyKey = quote;
      return this;
    }

    /**
     * Whether POST and PATCH without an {@link IdempotencyKey} tag get a generated key (a UUID v4
     * from a {@code SecureRandom}). Default true. The key is unpredictable on purpose: a server
     * that de-duplicates by key across clients would otherwise let anyone who can guess a key
     * replay or poison another caller's request. It costs about 0.2 µs per POST. When false, such requests are repeated only
     * after failures that prove the server did not process them.
     *
     * @param generate true to generate keys for POST and PATCH
     * @return this builder
     */
    public Builder generateIdempotencyKeys(boolean generate) {
      this.generateIdempotencyKeys = generate;
      return this;
    }

    /**
     * Receives events for every call. Default {@link RetryListener#NONE}.
     *
     * @param listener receives every call's events
     * @return this builder
     * @throws NullPointerException if {@code listener} is null
     */
    public Builder listener(RetryListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener == null");
      return this;
    }

    /**
     * The budget that bounds retries across calls. Default: a fresh {@link RetryBudget#create()}
     * for each interceptor built (retries stay within about 20% of calls once failures persist).
     * Pass one instance to several interceptors to share it, or {@link RetryBudget#unlimited()}.
     *
     * @param budget the budget to draw retries from
     * @return this builder
     * @throws NullPointerException if {@code budget} is null
     */
    public Builder retryBudget(RetryBudget budget) {
      this.budget = Objects.requireNonNull(budget, "budget == null");
      return this;
    }

    /**
     * When a server answers 429 or 503 with a {@code Retry-After}, makes every call to that
     * origin (scheme, host, port) through this interceptor respect the same "not before" time:
     * a new call waits for it (spread upward like any {@code Retry-After}) if its deadline and
     * {@link #maxRetryAfter} allow, or else gets at once a local response with the stored
     * status and no request is sent. Default false, because many servers rate-limit per
     * endpoint rather than per origin.
     *
     * @param enabled true to share Retry-After across calls to an origin
     * @return this builder
     */
    public Builder originWideRetryAfter(boolean enabled) {
      this.originWideRetryAfter = enabled;
      return this;
    }

    /** Test seam: monotonic time and sleeping. */
    Builder timeSource(TimeSource time) {
      this.time = Objects.requireNonNull(time, "time == null");
      return this;
    }

    /** Test seam: the wall clock that HTTP-dates in Retry-After are compared with. */
    Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /** Test seam: the random source of the jitter; called from many threads unless a test's. */
    Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random == null");
      return this;
    }

    /** Test seam: generates idempotency keys. */
    Builder keyGenerator(Supplier<String> keyGenerator) {
      this.keyGenerator = Objects.requireNonNull(keyGenerator, "keyGenerator == null");
      return this;
    }

    /**
     * An immutable interceptor with this builder's configuration.
     *
     * @return an immutable interceptor with this builder's configuration
     */
    public RetryInterceptor build() {
      return new RetryInterceptor(this);
    }
  }
}
