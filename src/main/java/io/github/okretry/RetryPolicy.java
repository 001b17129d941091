package io.github.okretry;

import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.Durations;
import io.github.okretry.internal.FreshRoutes;
import io.github.okretry.internal.KeyGenerator;
import io.github.okretry.internal.OkHttpVersion;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.ReplayBuffer;
import io.github.okretry.internal.SuppressSignatureCheck;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.Tuning;
import io.github.okretry.internal.WallClock;
import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * What okretry does with a call: which failures it retries, how long it waits, how it keeps a
 * repeated request safe, and how it protects the server. One immutable value, built once and taken
 * as it is by both ways of running calls, {@link RetryInterceptor} (blocking) and {@link
 * RetryingCallFactory} (waits without a thread; it may also hedge, by a {@link HedgingPolicy}):
 *
 * <pre>{@code
 * RetryPolicy policy = RetryPolicy.builder()
 *     .maxRetries(3)
 *     .deadline(10, TimeUnit.SECONDS)
 *     .build();
 * OkHttpClient client = RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build();
 * }</pre>
 *
 * <p>The settings are fixed at {@link Builder#build()}; every setting's default is on its setter on
 * {@link Builder}, and {@link #toString()} shows them. A policy also holds the state that its calls
 * share by design: the {@link RetryBudget}, and a bounded per-origin table that paces retries
 * waiting on an origin's {@code Retry-After}, paces calls by the quota an origin publishes ({@link
 * Builder#quotaPacing}, on by default), and, when enabled, holds the origin-wide gate. Both are
 * thread-safe. So one policy should serve one client (or several that call the same servers); each
 * {@code build()} makes a policy with its own table, and its own budget unless given one to share.
 * Per request, {@link RetryOverrides} and {@link IdempotencyKey} tags change what a policy allows.
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
  final FreshRoutes routes; // origins whose shared connection failed, and their new routes
  final ReplayBuffer replay; // the one-shot bodies its calls keep for a retry, all together

  RetryPolicy(Settings settings) {
    this.settings = settings;
    this.retryStatuses = Collections.unmodifiableSet(new TreeSet<>(settings.retryStatuses));
    this.time = settings.time;
    this.clock = settings.clock;
    this.random = settings.random;
    this.budget = settings.budget != null ? settings.budget : RetryBudget.builder().build();
    // Backoff.Jitter is internal's twin of the public enum.
    Backoff.Jitter jitter = Backoff.Jitter.valueOf(settings.jitter.name());
    Backoff backoff =
        new Backoff(settings.baseDelayNanos, settings.maxDelayNanos, settings.multiplier, jitter);
    this.rules = new RetryRules(backoff, settings.maxRetryAfterNanos, settings.retryAfterSpread);
    this.classifier =
        new Classifier(
            retryStatuses,
            settings.responsePredicate,
            settings.exceptionPredicate,
            settings.obeyShouldRetryHeader);
    this.keys =
        new IdempotencyKeys(
            settings.idempotencyKeyHeader,
            settings.quoteIdempotencyKey,
            settings.generateIdempotencyKeys,
            settings.keyGenerator);
    this.events = new Events(settings.listener);
    this.originGate =
        new OriginGate(
            Tuning.MAX_ORIGINS,
            settings.quotaPacing != QuotaPacing.OFF,
            settings.quotaPacing == QuotaPacing.PROBE,
            settings.clock,
            settings.random);
    this.routes = new FreshRoutes(Tuning.FRESH_ROUTE_SLOTS);
    this.replay = new ReplayBuffer(settings.replayPerCallBytes, settings.replayPerClientBytes);
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
   * This policy's worst case in words and numbers, one short line per claim, the binding figure
   * first: {@code "At worst 5 s: the deadline bounds the whole call, attempts and waits."}, or
   * without a deadline that nothing bounds the call. Then the attempts; the longest each wait can
   * be and their sum ({@code "Backoff waits, each at most: 0.2 + 0.4 + 0.8 = 1.4 s of waiting"} by
   * default; base 1 s, ×2, 5 retries and no cap give {@code "1 + 2 + 4 + 8 + 16 = 31 s"}); what a
   * server's {@code Retry-After} makes of them, each up to {@code maxRetryAfter} ({@code "so the
   * waits come to up to 180 s"} by default); and the holds a published quota may add before each
   * attempt. The waits are the ones the backoff draws at their largest (with {@link Jitter#NONE},
   * the ones it draws). For what the client's timeouts add, see {@link #explain(OkHttpClient)}.
   *
   * @return a few lines, in English, each ending with {@code '\n'}
   */
  public String explain() {
    return PolicyExplanation.explain(settings, rules.backoff(), null);
  }

  /**
   * {@link #explain()}, with what {@code client}'s timeouts add: an attempt takes up to its
   * connect, write and read timeouts together if its request times out once (each is per operation,
   * and each redirect or auth follow-up OkHttp makes gets them afresh, so a trickling or
   * redirecting server holds it longer); with no deadline or call timeout, the attempts times that
   * plus the waits. The deadline or the client's call timeout, whichever is shorter, is the binding
   * figure, and a warning says when a connect, write or read timeout at or above it (or none)
   * leaves a server that stalls one attempt and no retry.
   *
   * @param client the client whose timeouts the attempts run with
   * @return a few lines, in English, each ending with {@code '\n'}
   * @throws NullPointerException if {@code client} is null
   */
  public String explain(OkHttpClient client) {
    if (client == null) throw new NullPointerException("client == null");
    long[] timeouts = {
      client.connectTimeoutMillis(),
      client.writeTimeoutMillis(),
      client.readTimeoutMillis(),
      client.callTimeoutMillis()
    };
    return PolicyExplanation.explain(settings, rules.backoff(), timeouts);
  }

  /**
   * Every setting but the predicates, listener and seams, with durations in nanoseconds and 0 for
   * no deadline; for logs. {@link #explain()} says what they come to.
   */
  @Override
  public String toString() {
    Settings s = settings;
    return "RetryPolicy{maxRetries="
        + s.maxRetries
        + ", baseDelayNanos="
        + s.baseDelayNanos
        + ", maxDelayNanos="
        + s.maxDelayNanos
        + ", multiplier="
        + s.multiplier
        + ", jitter="
        + s.jitter
        + ", deadlineNanos="
        + s.deadlineNanos
        + ", maxRetryAfterNanos="
        + s.maxRetryAfterNanos
        + ", retryAfterSpread="
        + s.retryAfterSpread
        + ", retryStatuses="
        + retryStatuses
        + ", idempotencyKeyHeader="
        + s.idempotencyKeyHeader
        + ", attemptHeader="
        + s.attemptHeader
        + ", obeyShouldRetryHeader="
        + s.obeyShouldRetryHeader
        + ", avoidFailedConnections="
        + s.avoidFailedConnections
        + ", budget="
        + budget
        + ", originWideRetryAfter="
        + s.originWideRetryAfter
        + ", quotaPacing="
        + s.quotaPacing
        + ", replayBuffer="
        + s.replayPerCallBytes
        + "/"
        + s.replayPerClientBytes
        + "}";
  }

  /**
   * Builds a {@link RetryPolicy}. Each setter rejects a bad value at once, naming the setting and
   * the value ({@link NullPointerException} for null, {@link IllegalArgumentException} for a value
   * out of range), and documents its default; {@link #build()} takes an immutable snapshot, so a
   * builder can be reused and changed afterwards. Not thread-safe.
   *
   * <p>Durations are set as {@code (amount, TimeUnit)}, as OkHttp's own builders do, or as a {@link
   * Duration} where {@code java.time} exists (Java 8+, Android API 26+).
   */
  public static final class Builder {

    private final Settings s;

    Builder() {
      s = new Settings();
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
      if (maxRetries < 0) {
        throw new IllegalArgumentException("maxRetries must be >= 0: " + maxRetries);
      }
      s.maxRetries = maxRetries;
      return this;
    }

    /**
     * The wait before retry 1, which is its upper bound when jittered. Default 200 ms.
     *
     * @param amount the wait cap before retry 1, positive, at most 24 hours
     * @param unit the unit of {@code amount}
     * @return this builder
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder baseDelay(long amount, TimeUnit unit) {
      s.baseDelayNanos = Durations.checkedNanos("baseDelay", amount, unit);
      return this;
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
    public Builder baseDelay(Duration baseDelay) {
      s.baseDelayNanos = Durations.checkedNanos("baseDelay", baseDelay);
      return this;
    }

    /**
     * The cap on any single computed wait. Default 10 s. It may be below the base delay.
     *
     * @param amount the cap on any single wait, positive, at most 24 hours
     * @param unit the unit of {@code amount}
     * @return this builder
     * @throws IllegalArgumentException if it is zero, negative or over 24 hours
     */
    public Builder maxDelay(long amount, TimeUnit unit) {
      s.maxDelayNanos = Durations.checkedNanos("maxDelay", amount, unit);
      return this;
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
    public Builder maxDelay(Duration maxDelay) {
      s.maxDelayNanos = Durations.checkedNanos("maxDelay", maxDelay);
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
      s.multiplier = multiplier;
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
      s.jitter = notNull(jitter, "jitter");
      return this;
    }

    /**
     * A deadline for each whole logical call (all attempts and waits), measured on a monotonic
     * clock from when okretry first sees the call; 0 means none, as for OkHttp's timeouts. Default
     * 0: none, though OkHttp's {@code callTimeout} always bounds the call. Per request, {@link
     * RetryOverrides} replaces it.
     *
     * @param amount the time allowed for all attempts and waits, at most 24 hours, or 0 for none
     * @param unit the unit of {@code amount}
     * @return this builder
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if it is negative or over 24 hours
     */
    public Builder deadline(long amount, TimeUnit unit) {
      s.deadlineNanos = Durations.checkedNanosOrNone("deadline", amount, unit);
      return this;
    }

    /**
     * A deadline for each whole logical call, as a {@link Duration}; see {@link #deadline(long,
     * TimeUnit)}.
     *
     * @param deadline the time allowed for all attempts and waits, at most 24 hours, or zero for
     *     none
     * @return this builder
     * @throws NullPointerException if {@code deadline} is null
     * @throws IllegalArgumentException if it is negative or over 24 hours
     */
    @SuppressSignatureCheck
    public Builder deadline(Duration deadline) {
      s.deadlineNanos = Durations.checkedNanosOrNone("deadline", deadline);
      return this;
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
    public Builder maxRetryAfter(long amount, TimeUnit unit) {
      s.maxRetryAfterNanos = Durations.checkedNanos("maxRetryAfter", amount, unit);
      return this;
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
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      s.maxRetryAfterNanos = Durations.checkedNanos("maxRetryAfter", maxRetryAfter);
      return this;
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
    public Builder retryAfterSpread(double fraction) {
      if (!(fraction >= 0 && fraction <= 1)) {
        throw new IllegalArgumentException("retryAfterSpread must be in [0, 1]: " + fraction);
      }
      s.retryAfterSpread = fraction;
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
      for (int code : notNull(codes, "codes")) {
        if (code < 100 || code > 999) {
          throw new IllegalArgumentException("retryOnStatus code not in [100, 999]: " + code);
        }
      }
      for (int code : codes) s.retryStatuses.add(code);
      return this;
    }

    /**
     * Also retries responses that match {@code predicate}; several add up (any one matching is
     * enough). {@link Response#peekBody} reads the body and leaves it readable.
     *
     * @param predicate returns true for what should also be retried
     * @return this builder
     * @throws NullPointerException if {@code predicate} is null
     */
    public Builder retryOnResponse(RetryPredicate<Response> predicate) {
      s.responsePredicate = or(s.responsePredicate, notNull(predicate, "predicate"));
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
    public Builder retryOnException(RetryPredicate<IOException> predicate) {
      s.exceptionPredicate = or(s.exceptionPredicate, notNull(predicate, "predicate"));
      return this;
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
    public Builder idempotencyKeyHeader(String name) {
      s.idempotencyKeyHeader = headerName(name, "idempotencyKeyHeader");
      return this;
    }

    /**
     * Sends the attempt number to the server on every attempt and hedge, in the header {@code
     * name}, as AWS SDKs send {@code amz-sdk-request}: {@code attempt=N; max=M}, where {@code N}
     * counts from 1 (the first attempt included) and {@code M} is the most attempts the call may
     * make, {@code maxRetries + 1} after a per-request {@link RetryOverrides.Builder#maxRetries}
     * override. A server that sheds load can then shed retries first. Default: not sent.
     *
     * @param name an HTTP header name (a token), e.g. {@code amz-sdk-request} or {@code
     *     Retry-Attempt}
     * @return this builder
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is not a valid header name
     */
    public Builder attemptHeader(String name) {
      s.attemptHeader = headerName(name, "attemptHeader");
      return this;
    }

    /**
     * Obeys a server's {@code X-Should-Retry} header (as the OpenAI and Anthropic SDKs do): {@code
     * false} ends the call with the response ({@link GiveUpReason#SERVER_SAID_NO_RETRY}) where it
     * would have been retried; {@code true} makes an error status (400 or above) retryable, still
     * only when repeating the request is safe and within the retries, the budget and the deadline.
     * One value, {@code true} or {@code false} in any case; a repeated, blank or other value is
     * ignored. Default true.
     *
     * @param obey false to ignore the header
     * @return this builder
     */
    public Builder obeyShouldRetryHeader(boolean obey) {
      s.obeyShouldRetryHeader = obey;
      return this;
    }

    /**
     * Sends a retry over another connection than the one that failed it, as Envoy's {@code
     * previous_hosts} sends it to another host. Behind an L4 balancer (a Kubernetes Service, a
     * cloud network load balancer) a connection is balanced, not the requests on it: without this,
     * every call that pools the connection to a sick replica fails there, retries included.
     *
     * <p>A connection failed when it answered a 5xx this policy retries without a {@code
     * Retry-After} (a server that says when to come back paces the client; a 429 never moves it),
     * or, if shared (HTTP/2), when a request on it timed out. OkHttp itself drops a connection that
     * failed with a reset or a GOAWAY. An HTTP/1 connection carries only the failing call, and is
     * closed when that call is done with the response; a shared one is left to finish its other
     * calls and idle out of the pool, and the policy's later requests to that origin open a new
     * one, putting the address that failed after the others its name resolves to (as for an HTTP/1
     * origin whose name has other addresses). Only a call that retries leaves its connection. Over
     * HTTP/2 the interceptor's own retries stay on the call's connection, which OkHttp keeps for
     * all of a call's requests; the factory's attempts are calls of their own. The next connection
     * costs a TCP (and TLS) handshake; a call that never fails costs nothing. Default true.
     *
     * @param avoid false to send every attempt over whatever connection OkHttp's pool gives
     * @return this builder
     */
    public Builder avoidFailedConnections(boolean avoid) {
      s.avoidFailedConnections = avoid;
      return this;
    }

    /** {@code name}, checked to be an HTTP header name (a token), for the setting {@code what}. */
    private static String headerName(String name, String what) {
      if (name == null) throw new NullPointerException(what + " == null");
      if (name.isEmpty()) throw new IllegalArgumentException(what + " is empty");
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        if (c <= 0x20 || c >= 0x7f || "\"(),/:;<=>?@[\\]{}".indexOf(c) >= 0) {
          throw new IllegalArgumentException(what + " is not a token: " + name);
        }
      }
      return name;
    }

    /**
     * Sends the key as a Structured-Field string ({@code "…"}), as the IETF {@code Idempotency-Key}
     * draft specifies, instead of the bare value Stripe-style APIs expect. Default false (bare).
     *
     * @param quote true to send the key as a quoted sf-string
     * @return this builder
     */
    public Builder quoteIdempotencyKey(boolean quote) {
      s.quoteIdempotencyKey = quote;
      return this;
    }

    /**
     * Whether POST and PATCH without an {@link IdempotencyKey} tag get a generated key (a random
     * UUID v4, about 0.2 µs per POST), which makes them safe to repeat ({@link IdempotencyKey}).
     * Default true.
     *
     * @param generate true to generate keys for POST and PATCH
     * @return this builder
     */
    public Builder generateIdempotencyKeys(boolean generate) {
      s.generateIdempotencyKeys = generate;
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
      s.listener = notNull(listener, "listener");
      return this;
    }

    /**
     * The budget that bounds retries across calls. Default: a fresh budget with the defaults of
     * {@link RetryBudget#builder()} per policy built; share one instance between policies, or
     * {@link RetryBudget#unlimited()}.
     *
     * @param budget the budget to draw retries from
     * @return this builder
     * @throws NullPointerException if {@code budget} is null
     */
    public Builder retryBudget(RetryBudget budget) {
      s.budget = notNull(budget, "budget");
      return this;
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
    public Builder originWideRetryAfter(boolean enabled) {
      s.originWideRetryAfter = enabled;
      return this;
    }

    /**
     * Whether calls are paced by the quota servers publish in their responses (IETF {@code
     * RateLimit} fields and the common {@code X-RateLimit-*} families): a call whose origin's quota
     * is spent waits until more arrives instead of being sent to be refused; {@code Retry-After}
     * takes precedence. Default {@link QuotaPacing#PUBLISHED}, which costs nothing with a server
     * that publishes no quota; the modes are described on {@link QuotaPacing}.
     *
     * @param pacing how to pace by published quotas
     * @return this builder
     * @throws NullPointerException if {@code pacing} is null
     */
    public Builder quotaPacing(QuotaPacing pacing) {
      s.quotaPacing = notNull(pacing, "quotaPacing");
      return this;
    }

    /**
     * How much of a one-shot request body ({@link okhttp3.RequestBody#isOneShot()}: an upload from
     * an {@code InputStream}, a generated stream) okretry keeps as its first attempt writes it, so
     * that a retry can write the same bytes again, as gRPC's retry buffer does: up to {@code
     * perCallBytes} per call, and up to {@code perClientBytes} for all calls of this policy at
     * once. A call keeps its bytes until it ends. A body larger than the first, or one that finds
     * the second in use by other calls, is not kept: the call is not retried ({@link
     * GiveUpReason#BODY_NOT_KEPT}). The usual rules still apply: a keyless POST is repeated only
     * when the failure proves the server did not process it. A duplex body is never repeated, and a
     * one-shot body is never hedged. Default 1 MiB per call, 16 MiB in all (gRPC's defaults);
     * {@code perCallBytes} 0 keeps none, and a one-shot body is then never repeated.
     *
     * @param perCallBytes the most one call keeps, in bytes, 0 or more
     * @param perClientBytes the most all calls of this policy keep at once, in bytes, at least
     *     {@code perCallBytes}
     * @return this builder
     * @throws IllegalArgumentException if {@code perCallBytes} is negative, or {@code
     *     perClientBytes} is below it
     */
    public Builder replayBuffer(long perCallBytes, long perClientBytes) {
      if (perCallBytes < 0) {
        throw new IllegalArgumentException(
            "replayBuffer perCallBytes must be >= 0: " + perCallBytes);
      }
      if (perClientBytes < perCallBytes) {
        throw new IllegalArgumentException(
            "replayBuffer perClientBytes must be >= perCallBytes ("
                + perCallBytes
                + "): "
                + perClientBytes);
      }
      s.replayPerCallBytes = perCallBytes;
      s.replayPerClientBytes = perClientBytes;
      return this;
    }

    /** Test seam: monotonic time and sleeping. */
    Builder timeSource(TimeSource time) {
      s.time = notNull(time, "time");
      return this;
    }

    /** Test seam: the wall clock that HTTP-dates in Retry-After are compared with. */
    Builder clock(WallClock clock) {
      s.clock = notNull(clock, "clock");
      return this;
    }

    /** Test seam: the random source of the jitter; called from many threads unless a test's. */
    Builder random(RandomSource random) {
      s.random = notNull(random, "random");
      return this;
    }

    /** Test seam: generates idempotency keys. */
    Builder keyGenerator(KeyGenerator keyGenerator) {
      s.keyGenerator = notNull(keyGenerator, "keyGenerator");
      return this;
    }

    /**
     * An immutable policy with this builder's settings; the builder can be changed and built again.
     *
     * @return a new policy
     * @throws IllegalStateException if the OkHttp on the classpath is older than 5.4.0, which
     *     okretry needs
     */
    public RetryPolicy build() {
      OkHttpVersion.check(); // here, with a clear message, not NoSuchMethodError on a retry
      return new RetryPolicy(s.copy());
    }
  }
}
