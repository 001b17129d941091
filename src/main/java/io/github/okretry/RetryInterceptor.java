package io.github.okretry;

import io.github.okretry.internal.CallTimeouts;
import java.io.IOException;
import java.io.InterruptedIOException;
import okhttp3.Call;
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
 * (for {@link Call#enqueue}, a dispatcher thread). {@link RetryingCallFactory} runs the same
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
   */
  public static RetryInterceptor create(RetryPolicy policy) {
    if (policy == null) throw new NullPointerException("policy == null");
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
        LogicalCall.open(policy, request, CallTimeouts.nanosAllowed(chain.call().timeout()));
    if (logical == null) {
      // Most calls succeed at once; such a call makes no per-call state (docs/performance.md).
      Response response = null;
      IOException error = null;
      try {
        response = proceed(chain, request);
      } catch (IOException e) {
        error = e;
      }
      logical = LogicalCall.afterStatelessAttempt(policy, request, response, error, seen(chain.call(), false));
      if (logical == null) return response;
      return run(chain, logical, response);
    }
    return run(chain, logical, null);
  }

  /** Acts on each step of {@code logical}; {@code response} is one already in hand, or null. */
  private Response run(Chain chain, LogicalCall logical, @Nullable Response response) throws IOException {
    Call call = chain.call();
    for (Step step = logical.next(null); ; ) {
      switch (step.kind()) {
        case SEND:
          Attempt attempt = step.attempt();
          Chain attemptChain = AttemptSettings.apply(chain, attempt, policy.time);
          attempt.attachTo(call);
          DeadlineWatch watch = DeadlineWatch.start(call, attempt.watchNanos());
          Throwable error = null;
          try {
            response = proceed(attemptChain, attempt.request());
          } catch (IOException | RuntimeException | Error e) {
            error = e;
          }
          // The outcome is in hand: stop the watch before user code (a predicate, a listener) runs
          // on it, so a response decided before the deadline reaches the caller.
          boolean fired = watch != null && watch.stop();
          step = logical.ended(attempt, response, error, seen(call, fired));
          break;
        case WAIT:
          if (response != null) response.close(); // not held idle through the wait
          response = null;
          step = logical.next(sleep(step.waitNanos(), call));
          break;
        case RETURN:
          return step.responseOr(response);
        default:
          if (response != null) response.close();
          Throwable failure = step.failure();
          if (failure instanceof RuntimeException) throw (RuntimeException) failure;
          if (failure instanceof Error) throw (Error) failure;
          throw (IOException) failure;
      }
    }
  }

  /** What this driver saw of its one call, for {@link LogicalCall#ended}. */
  private static int seen(Call call, boolean watchFired) {
    return (watchFired ? Seen.WATCH_FIRED : 0)
        | (call.isCanceled() ? Seen.CALLER_CANCELED | Seen.ATTEMPT_CANCELED : 0)
        | (Thread.currentThread().isInterrupted() ? Seen.INTERRUPTED : 0);
  }

  private static Response proceed(Chain chain, Request request) throws IOException {
    try {
      return chain.proceed(request);
    } catch (Exception e) {
      // OkHttp 5 can throw a raw, undeclared InterruptedException while connecting, and it
      // clears the interrupt flag: restore the flag and report it as Java I/O does.
      if (!(e instanceof InterruptedException)) throw e;
      Thread.currentThread().interrupt();
      throw (IOException) new InterruptedIOException("interrupted").initCause(e);
    }
  }

  /** Waits; returns what ended the wait early (a cancel, an interrupt, a close), or null. */
  private @Nullable IOException sleep(long delayNanos, Call call) {
    RetryingCallFactory f = factory;
    if (f != null) f.blockingWaits.add(call); // before the check, so close() cannot slip between
    try {
      if (f != null && f.isClosed()) return new IOException("RetryingCallFactory is closed");
      policy.time.sleep(delayNanos, call);
      return null;
    } catch (IOException e) {
      // close() cancels the waiting call to wake it: report the close, not a cancel.
      return f != null && f.isClosed() ? new IOException("RetryingCallFactory is closed") : e;
    } finally {
      if (f != null) f.blockingWaits.remove(call);
    }
  }

  @Override
  public String toString() {
    return "RetryInterceptor{" + policy + "}";
  }
}
