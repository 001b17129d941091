package io.github.okretry;

/** Why a call ended on a failure without another attempt; passed to {@link RetryListener#onGaveUp}. */
public enum GiveUpReason {
  /** The outcome is not one okretry retries (e.g. a TLS failure or an unlisted exception). */
  NOT_RETRYABLE,
  /**
   * The outcome is retryable, but repeating the request could repeat its side effect: a
   * non-idempotent method without an idempotency key whose failure does not prove the server
   * ignored it, or a one-shot or duplex body.
   */
  NOT_SAFE_TO_REPEAT,
  /** The last allowed attempt ({@code maxRetries + 1}) failed. */
  RETRIES_EXHAUSTED,
  /**
   * The deadline (okretry's, or OkHttp's call timeout) ran out: the next wait (computed or
   * Retry-After) would end at or past it, or an attempt or a wait was cut short by it.
   */
  DEADLINE_EXCEEDED,
  /**
   * The server's Retry-After is longer than {@code maxRetryAfter}; or the call waits on it in a
   * crowd paced on its origin, behind others, and its turn would come after {@code
   * maxRetryAfter}: the caller then receives a local response with the origin's status and a
   * {@code Retry-After} for that turn, and nothing more is sent (when half the time left is the
   * tighter bound, the reason is {@link #DEADLINE_EXCEEDED}).
   */
  RETRY_AFTER_TOO_LONG,
  /**
   * The call's {@link RetryBudget} had no token left for the retry (neither its balance nor its
   * reserve): failures persist across many calls, and more retries would only add load to a
   * struggling server.
   */
  BUDGET_EXHAUSTED,
  /**
   * The call's {@link RetryBudget} paid, since a call of its last succeeded, as many retries as
   * one failing call may make ({@code maxRetries}; a retry that waits out a 503's {@code
   * Retry-After} counts half, a rate limiter's 429 nothing), and pays no more until one succeeds: a server that has only failed since gets no
   * more than one call's retries from this process. Under {@link
   * RetryBudget.Builder#retryBeforeFirstSuccess retryBeforeFirstSuccess(false)}, also a retry
   * after an error before the budget's first success.
   */
  NO_RECENT_SUCCESS,
  /**
   * The origin is closed by an earlier 429/503 {@code Retry-After} (see {@link
   * RetryPolicy.Builder#originWideRetryAfter}) for longer than this call can wait; the caller
   * receives a local response with that status and no request is sent.
   */
  ORIGIN_THROTTLED,
  /**
   * The call was canceled: by {@link okhttp3.Call#cancel()}, {@code Dispatcher.cancelAll()}, or
   * anything else but a deadline running out ({@link #DEADLINE_EXCEEDED}).
   */
  CANCELED,
  /** The calling thread was interrupted. */
  INTERRUPTED
}
