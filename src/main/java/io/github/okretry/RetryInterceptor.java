package io.github.okretry;

import io.github.okretry.internal.CallTimeouts;
import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * An OkHttp application interceptor that runs each call under a {@link RetryPolicy}: it retries
 * transient failures with exponential backoff and jitter, honors {@code Retry-After}, sends an
 * idempotency key so a repeated POST is safe, and keeps the whole logical call within a deadline.
 *
 * <pre>{@code
 * RetryInterceptor retry = RetryInterceptor.create(RetryPolicy.builder()
 *     .maxRetries(3)
 *     .deadline(10, TimeUnit.SECONDS)
 *     .build());
 * OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();
 * }</pre>
 *
 * <p>This is the blocking driver: it waits between attempts on the thread that runs the call
 * (for {@link okhttp3.Call#enqueue}, a dispatcher thread). {@link RetryingCallFactory} runs the same
 * policy without holding a thread while it waits. What is retried, when repeating is safe, and
 * how waits and the deadline work is the policy's: see {@link RetryPolicy} and
 * docs/semantics.md. The caller gets the last real outcome: the last response, body unread, or
 * the last exception with earlier ones attached as {@linkplain Throwable#getSuppressed()
 * suppressed} (at most 9: the first 3, a marker counting those left out, the last 5).
 *
 * <p>Immutable and thread-safe; share one per client. Add it with {@link
 * OkHttpClient.Builder#addInterceptor}, or {@link #install}: as a network interceptor it throws
 * {@link IllegalStateException}.
 */
public final class RetryInterceptor implements Interceptor {

  private final RetryPolicy policy;
  /** The factory whose execute() this runs, so its close() ends this call's waits; else null. */
  private final @Nullable RetryingCallFactory factory;

  private RetryInterceptor(RetryPolicy policy) {
    this(policy, null);
  }

  RetryInterceptor(RetryPolicy policy, @Nullable RetryingCallFactory factory) {
    this.policy = policy;
    this.factory = factory;
  }

  /**
   * An interceptor with every default: 3 retries, 200 ms base, 10 s cap, Full Jitter.
   *
   * @return a new interceptor with its own policy and budget
   */
  public static RetryInterceptor create() {
    return create(RetryPolicy.create());
  }

  /**
   * An interceptor that runs calls under {@code policy}, sharing its budget with every other
   * user of that policy.
   *
   * @param policy the policy to apply
   * @return a new interceptor
   * @throws NullPointerException if {@code policy} is null
   * @throws IllegalArgumentException if {@code policy} hedges ({@link
   *     RetryPolicy.Builder#hedgeAfter}): an interceptor runs one chain on one thread and cannot
   *     have two attempts in flight; {@link RetryingCallFactory} hedges, in {@code execute()} too
   */
  public static RetryInterceptor create(RetryPolicy policy) {
    if (policy == null) throw new NullPointerException("policy == null");
    if (policy.hedges()) {
      throw new IllegalArgumentException(
          "RetryInterceptor cannot hedge (one chain, one thread): use RetryingCallFactory, whose execute() hedges too; policy hedges: "
              + (policy.hedgePercentile() > 0 ? "hedgeAdaptively" : "hedgeAfter " + policy.hedgeDelayNanos() + " ns"));
    }
    return new RetryInterceptor(policy);
  }

  /**
   * The policy this interceptor applies.
   *
   * @return the policy
   */
  public RetryPolicy policy() {
    return policy;
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
    Request request = policy.keys.stamp(chain.request());
    LogicalCall logical =
        StatelessAttempt.open(policy, request, CallTimeouts.nanosAllowed(chain.call().timeout()));
    // Most calls succeed at once; such a call makes no per-call state (docs/performance.md).
    if (logical == null) return BlockingLoop.runStateless(chain, policy, request, factory);
    return BlockingLoop.run(chain, logical, null, factory);
  }

  @Override
  public String toString() {
    return "RetryInterceptor{" + policy + "}";
  }
}
