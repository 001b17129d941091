package io.github.okretry;

import io.github.okretry.internal.CallTimeouts;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An OkHttp application interceptor that runs each call under a {@link RetryPolicy}: it retries
 * transient failures with exponential backoff and jitter, honors {@code Retry-After}, sends an
 * idempotency key so a repeated POST is safe, and keeps the whole logical call within a deadline.
 * {@link RetryPolicy} shows a whole setup.
 *
 * <p>This is the blocking driver: it waits between attempts on the thread that runs the call (for
 * {@link okhttp3.Call#enqueue}, a dispatcher thread). {@link RetryingCallFactory} runs the same
 * policy without holding a thread while it waits. What is retried, when repeating is safe, and how
 * waits and the deadline work is the policy's: see {@link RetryPolicy} and docs/semantics.md. The
 * caller gets the last real outcome: the last response, body unread, or the last exception with
 * earlier ones attached as {@linkplain Throwable#getSuppressed() suppressed} (at most 9: the first
 * 3, a marker counting those left out, the last 5), and okretry's summary of the call last. {@link
 * RetryOutcome#of(Response)} and {@link RetryOutcome#of(Throwable)} read what happened to the call
 * from either.
 *
 * <p>Immutable and thread-safe; share one per client. Add it with {@link #install}, which also adds
 * the network interceptor that guards OkHttp from a hostile {@code Retry-After}; added with {@link
 * OkHttpClient.Builder#addInterceptor} alone it works without that guard, and as a network
 * interceptor it throws {@link IllegalStateException}.
 *
 * <p>Two okretry layers on one call do not multiply their attempts. The first a call meets governs
 * it; a {@code RetryInterceptor} inside it (later in the same client's interceptors, say added
 * through {@code newBuilder()} of a library's client, or in the client of a {@link
 * RetryingCallFactory}) sends each of its attempts once, as if it were not there: no key, no
 * deadline, no retry and no event of its own. The call makes the attempts the outer layer alone
 * would make, never fewer and never more. An interceptor before this one that proceeds again once a
 * pass through it has ended (a 401 answered with a fresh token, a failover to another host) starts
 * a logical call of its own: its own key, deadline, retries and events.
 */
public final class RetryInterceptor implements Interceptor {

  private static final Logger log = LoggerFactory.getLogger(RetryInterceptor.class);
  // Constants: OkHttp's tag(Class) wraps the class in a new KClass on every lookup (RequestTags).
  private static final KClass<Passes> PASSES = JvmClassMappingKt.getKotlinClass(Passes.class);

  private final RetryPolicy policy;

  /**
   * Sleeps between attempts: the policy's time, or for the calls a factory's execute() runs, one
   * whose waits that factory's close() ends. Reading the clock is always the policy's.
   */
  private final TimeSource waits;

  /** An interceptor that waits on {@code waits}, {@code policy}'s time or one its owner can end. */
  RetryInterceptor(RetryPolicy policy, TimeSource waits) {
    this.policy = policy;
    this.waits = waits;
  }

  /**
   * An interceptor with every default: the policy of {@code RetryPolicy.builder().build()}.
   *
   * @return a new interceptor with its own policy and budget
   */
  public static RetryInterceptor create() {
    return create(RetryPolicy.builder().build());
  }

  /**
   * An interceptor that runs calls under {@code policy}, sharing its budget and per-origin state
   * with every other user of that policy.
   *
   * @param policy the policy to apply
   * @return a new interceptor
   * @throws NullPointerException if {@code policy} is null
   */
  public static RetryInterceptor create(RetryPolicy policy) {
    if (policy == null) throw new NullPointerException("policy == null");
    return new RetryInterceptor(policy, policy.time);
  }

  /** The policy this interceptor applies. */
  RetryPolicy policy() {
    return policy;
  }

  /**
   * Adds this interceptor to {@code builder} as an application interceptor, and with it the network
   * interceptor that guards OkHttp from a hostile {@code Retry-After} (OkHttp 5 throws {@link
   * NumberFormatException} on a 503 whose numeric {@code Retry-After} exceeds an int; the guard
   * saturates such values, which keeps their meaning). Each is added only if {@code builder} lacks
   * it, so installing twice (or into the {@code newBuilder()} of a client that has them) adds
   * nothing more. This interceptor goes after the application interceptors already added: add those
   * that must run once per logical call first, those that must see every attempt after.
   *
   * @param builder the client builder to add both interceptors to
   * @return {@code builder}, for chaining
   * @throws NullPointerException if {@code builder} is null
   */
  public OkHttpClient.Builder install(OkHttpClient.Builder builder) {
    if (builder == null) throw new NullPointerException("builder == null");
    if (!builder.interceptors().contains(this)) builder.addInterceptor(this);
    if (!builder.networkInterceptors().contains(RetryAfterGuard.INSTANCE)) {
      builder.addNetworkInterceptor(RetryAfterGuard.INSTANCE);
    }
    return builder;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    if (chain.connection() != null) {
      throw new IllegalStateException(
          "RetryInterceptor must be added with addInterceptor(), not addNetworkInterceptor()");
    }
    Call call = chain.call();
    // Two layers would multiply their attempts: the first a call meets sees the whole logical
    // call, so one inside it sees a single attempt and sends it once (see the class doc).
    if (governed(call)) {
      if (log.isDebugEnabled()) {
        log.debug(
            "{} passes {} {} through once: another okretry layer governs the call",
            this,
            chain.request().method(),
            chain.request().url().redact());
      }
      return chain.proceed(chain.request());
    }
    Passes passes = call.tag(PASSES, Passes.NEW); // made at the call's first pass
    passes.enter();
    try {
      Request request = policy.keys.stamp(chain.request());
      // Most calls succeed at once; such a call makes no per-call state (docs/performance.md).
      return BlockingLoop.run(
          chain, policy, request, CallTimeouts.nanosAllowed(call.timeout()), waits);
    } finally {
      passes.exit(); // a later pass (an interceptor above that proceeds again) is a call of its own
    }
  }

  /**
   * True if an okretry layer above this interceptor is running a pass of {@code call} now: a {@code
   * RetryInterceptor} earlier in the same client (the call's {@link Passes}, a tag, which reaches
   * every interceptor of the call on any thread, whatever request they pass on), or a {@link
   * RetryingCallFactory} whose attempt this call is ({@link Attempt#ofCall}). A pass that has ended
   * governs nothing.
   */
  private static boolean governed(Call call) {
    Passes passes = call.tag(PASSES);
    return passes != null && passes.running() || Attempt.ofCall(call) != null;
  }

  /**
   * The mark that tells a {@code RetryInterceptor} inside a pass of a call to pass it through: its
   * value is how many passes of the call run now, 0 or 1 (a pass inside one passes through), more
   * only for threads that start passes of one call at the same moment. A tag of the call, made at
   * its first pass, so it is seen on every thread the call's interceptors run on, and it lives as
   * long as the call: nothing of okretry stays on a thread once a call returns, so a web
   * application's class loader is collected when it is undeployed (a per-thread list, as before,
   * pinned it). 16 bytes and the tag's node per call (docs/architecture.md, "One mark per call").
   * An {@code AtomicInteger} of its own, as a field updater finds its field by a name that a
   * shrinker (R8, ProGuard) may rename.
   */
  @SuppressWarnings("serial") // never serialized: a tag of a call
  private static final class Passes extends AtomicInteger {
    /** Makes a call's mark at its first pass: one function for all calls, no lambda per call. */
    static final Function0<Passes> NEW =
        new Function0<Passes>() {
          @Override
          public Passes invoke() {
            return new Passes();
          }
        };

    boolean running() {
      return get() > 0;
    }

    void enter() {
      incrementAndGet();
    }

    void exit() {
      decrementAndGet();
    }
  }

  @Override
  public String toString() {
    return "RetryInterceptor{" + policy + "}";
  }
}
