package io.github.okretry;

import okhttp3.Request;
import okhttp3.Response;

/**
 * Observes what okretry does with each logical call: for metrics, tracing or logs. Every method has
 * an empty default, so implement only what you need.
 *
 * <p>Attempts are numbered from 1, and the count <em>includes</em> the first attempt. Methods are
 * called on the thread executing the call: for {@link RetryInterceptor} the calling thread; for
 * {@link RetryingCallFactory}'s {@code enqueue} the thread running the current step (the enqueuing
 * thread for the first, then OkHttp's dispatcher or the factory's scheduler), and for a cancel or
 * close during a wait the client's dispatcher, never the thread that canceled. So they must be
 * quick, and thread-safe when the policy is shared. An exception thrown by a listener is logged and
 * otherwise ignored: it never changes the call's outcome.
 *
 * <p>Every event of one logical call passes the same {@link Request} instance (the request with its
 * idempotency key), so a listener can key per-call state by it, for example in an {@code
 * IdentityHashMap}; a call ends with exactly one {@link #onSucceeded} or {@link #onGaveUp}.
 *
 * <p><b>Matching events to your own call.</b> That request is the one the caller passed to {@code
 * newCall}, or, when okretry added an idempotency key, a copy of it that keeps all its tags. So tag
 * the request with something of your own and read it back in the listener:
 *
 * <pre>{@code
 * Request request = new Request.Builder().url(url).tag(OrderId.class, new OrderId(42)).build();
 * // in the listener:
 * public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
 *   OrderId order = request.tag(OrderId.class);   // the caller's own tag: this is order 42's call
 * }
 * }</pre>
 *
 * <p>The caller needs no listener to learn what happened to the call it holds: {@link
 * RetryOutcome#of(okhttp3.Response)} and {@link RetryOutcome#of(Throwable)} read it from the
 * response or the exception.
 */
public interface RetryListener {

  /** A listener that does nothing; the default. */
  RetryListener NONE = new RetryListener() {};

  /**
   * Attempt {@code attempt} (1 = the first) is about to be sent.
   *
   * @param request the request as sent, including any {@code Idempotency-Key} header
   * @param attempt the attempt, 1 for the first
   */
  default void onAttemptStarted(Request request, int attempt) {}

  /**
   * Attempt {@code attempt} is a hedge: the same request sent again while earlier attempts of the
   * call are still in flight and unanswered, {@code afterNanos} after the latest of them was sent
   * (a {@link RetryingCallFactory} with a {@link HedgingPolicy}); a retry follows a failure, a
   * hedge follows silence. Reported when the hedge leaves OkHttp's dispatcher, on the thread that
   * runs it, just before its {@link #onAttemptStarted}: counting these events counts hedges sent,
   * and the attempts started minus one minus the hedges counts retries.
   *
   * @param request the request as sent, including any idempotency key header (the same key as the
   *     attempts in flight)
   * @param attempt the hedge's attempt number, 2 or more
   * @param afterNanos how long the attempt before it had gone unanswered, in nanoseconds
   */
  default void onHedgeStarted(Request request, int attempt, long afterNanos) {}

  /**
   * OkHttp sent a request on the network for attempt {@code attempt}: it has written the request's
   * headers (a request that failed before that cannot have reached the server and is not reported).
   * {@code requestInAttempt} is 1 for the first; a higher number means OkHttp sent the attempt
   * again by itself underneath okretry (its {@code retryOnConnectionFailure}, a 408, or a 503 with
   * {@code Retry-After: 0}) or followed a redirect or auth challenge. Summing these events counts
   * every request that reached the network, which is what a server's load is made of.
   *
   * <p>Watching network requests costs each call some bytes (an {@code EventListener} on it), so
   * okretry does it only for a listener whose class overrides this method, which it checks once per
   * policy by reflection. Where the check cannot be made (a shrinker renamed the method, or a
   * GraalVM native image has no reflection metadata for the listener's class), it watches: the
   * events are always delivered.
   *
   * @param request the request as sent, including any idempotency key header
   * @param attempt the attempt, 1 for the first
   * @param requestInAttempt 1 for the attempt's first network request, more for OkHttp's own
   *     repeats
   */
  default void onNetworkRequest(Request request, int attempt, int requestInAttempt) {}

  /**
   * Attempt {@code attempt} failed and will be retried after {@code delayNanos}: the retry is
   * decided, and its budget would not stop it. A retry the budget would stop is never announced;
   * one announced is sent after the wait unless the call is canceled or closed during it, an origin
   * that asked every caller to wait cannot take it in the time the call has, or the budget skips or
   * stops it when it is to leave ({@link #onGaveUp} then follows with the same {@code attempt};
   * nothing is paid for it). A call whose retries the budget skips announces its first wait only:
   * the later ones, for attempts it does not send, are not retries.
   *
   * @param request the request as sent, including any idempotency key header
   * @param attempt the attempt, 1 for the first
   * @param reason a short description of the failure such as {@code "HTTP 503"} or {@code
   *     "SocketTimeoutException: timeout"}, never containing header values
   * @param delayNanos the wait before the next attempt in nanoseconds, zero or positive
   */
  default void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {}

  /**
   * The call ends on a failure after {@code attempts} attempts; the caller receives the last
   * response or exception.
   *
   * @param attempts attempts made; 0 when the call ended before its first was sent: its origin
   *     refused it ({@link GiveUpReason#ORIGIN_THROTTLED}, or a turn that would come too late), or
   *     it was canceled, interrupted or out of time while it waited to start
   * @param lastFailure the same kind of short description as in {@link #onRetryScheduled}
   * @param request the request as sent, including any idempotency key header
   * @param reason why no further attempt is made
   */
  default void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {}

  /**
   * The call ends with a response okretry does not treat as a failure (a 2xx, but also a 404 or any
   * status not configured as retryable), after {@code attempts} attempts.
   *
   * @param request the request as sent, including any idempotency key header
   * @param response the response the caller receives
   * @param attempts attempts made, including the first
   */
  default void onSucceeded(Request request, Response response, int attempts) {}
}
