package io.github.okretry;

import io.github.okretry.internal.Admission;
import io.github.okretry.internal.CallTimeouts;
import io.github.okretry.internal.Decision;
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
    long callTimeoutNanos = CallTimeouts.nanosAllowed(chain.call().timeout());
    if (!LogicalCall.canDeferState(policy, request, callTimeoutNanos)) {
      return run(chain, new LogicalCall(policy, request, callTimeoutNanos, 0), null, null);
    }
    // Most calls succeed at once; such a call makes no per-call state (docs/performance.md).
    Response response;
    try {
      response = proceed(chain, request);
    } catch (IOException e) {
      return run(chain, new LogicalCall(policy, request, 0, 1), null, e);
    }
    if (LogicalCall.succeededAtOnce(policy, response)) return response;
    return run(chain, new LogicalCall(policy, request, 0, 1), response, null);
  }

  /**
   * The attempt loop. A non-null {@code response} or {@code error} is the outcome of an attempt
   * already made, to be decided on first.
   */
  private Response run(
      Chain chain, LogicalCall logical, @Nullable Response response, @Nullable IOException error)
      throws IOException {
    Call call = chain.call();
    DeadlineWatch watch =
        logical.needsDeadlineWatch() ? DeadlineWatch.start(call, logical.remainingNanos()) : null;
    try {
      while (true) {
        if (response == null && error == null) {
          for (Admission gate; (gate = logical.beforeAttempt()).kind() != Admission.Kind.GO; ) {
            if (gate.kind() == Admission.Kind.THROTTLED) return logical.throttledResponse(gate);
            sleep(logical, gate.waitNanos(), call, watch);
          }
          Chain attempt =
              AttemptSettings.apply(chain, logical.deadlineNanos(), logical.mustNotRepeatUnderneath(), policy.time);
          logical.attemptStarting(call);
          try {
            response = proceed(attempt, logical.request());
          } catch (IOException e) {
            error = e;
          } catch (RuntimeException | Error e) {
            logical.failedBelow(e);
            throw e;
          }
        }

        // The outcome is in hand: stop the watch before user code (a predicate, a listener) runs
        // on it, so a response decided before the deadline reaches the caller instead of being
        // canceled under it. It is started again if the call waits and tries again.
        boolean watchFired = watch != null && watch.stop();
        watch = null;
        // A cancel by a deadline (okretry's watch, or OkHttp's call timeout) is not the caller's
        // cancel: report it as the timeout it is.
        boolean canceled = call.isCanceled();
        GiveUpReason cutShort =
            error != null && (watchFired || canceled && logical.deadlinePassed())
                ? GiveUpReason.DEADLINE_EXCEEDED
                : canceled ? GiveUpReason.CANCELED
                : Thread.currentThread().isInterrupted() ? GiveUpReason.INTERRUPTED
                : null;
        Decision decision = logical.afterAttempt(response, error, cutShort);
        if (decision.isRetry()) {
          if (response != null) response.close(); // not held idle through the wait
          if (logical.needsDeadlineWatch()) watch = DeadlineWatch.start(call, logical.remainingNanos());
          sleep(logical, decision.delayNanos(), call, watch);
          response = null;
          error = null;
          continue;
        }
        IOException failure = logical.failureFor(decision, error);
        if (failure == null) return response;
        if (response != null) response.close();
        throw failure;
      }
    } finally {
      if (watch != null) watch.exit();
    }
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

  private void sleep(LogicalCall logical, long delayNanos, Call call, @Nullable DeadlineWatch watch)
      throws IOException {
    RetryingCallFactory f = factory;
    if (f != null) f.blockingWaits.add(call); // before the check, so close() cannot slip between
    try {
      if (f != null && f.isClosed()) throw new IOException("RetryingCallFactory is closed");
      policy.time.sleep(delayNanos, call);
    } catch (IOException e) {
      // close() cancels the waiting call to wake it: report the close, not a cancel.
      IOException why = f != null && f.isClosed() ? new IOException("RetryingCallFactory is closed") : e;
      throw logical.waitFailed(why, watch != null && watch.fired() || logical.deadlinePassed());
    } finally {
      if (f != null) f.blockingWaits.remove(call);
    }
  }

  @Override
  public String toString() {
    return "RetryInterceptor{" + policy + "}";
  }
}
