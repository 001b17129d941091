package io.github.okretry;

/**
 * Why a call ended on a failure without another attempt; passed to {@link RetryListener#onGaveUp}.
 */
public enum GiveUpReason {
  /** The outcome is not one okretry retries (e.g. a TLS failure or an unlisted exception). */
  NOT_RETRYABLE,
  /**
   * The outcome is retryable, but repeating the request could repeat its side effect: a
   * non-idempotent method without an idempotency key whose failure does not prove the server
   * ignored it, or a duplex body.
   */
  NOT_SAFE_TO_REPEAT,
  /**
   * The outcome is retryable and the request safe to repeat, but its body is one-shot and okretry
   * did not keep all of it to write again: larger than the replay buffer's limit per call, the
   * total its calls share was in use, or its first attempt did not write it whole ({@link
   * RetryPolicy.Builder#replayBuffer}). The log says which.
   */
  BODY_NOT_KEPT,
  /**
   * The server answered {@code X-Should-Retry: false} to a response okretry would otherwise retry
   * (a 429 whose quota is a billing limit, a 503 that will not pass): the caller receives that
   * response. Only while the policy obeys the header ({@link
   * RetryPolicy.Builder#obeyShouldRetryHeader}, the default).
   */
  SERVER_SAID_NO_RETRY,
  /** The last allowed attempt ({@code maxRetries + 1}) failed. */
  RETRIES_EXHAUSTED,
  /**
   * The deadline (okretry's, or OkHttp's call timeout) ran out: the next wait (computed or
   * Retry-After) would end at or past it, or an attempt or a wait was cut short by it.
   */
  DEADLINE_EXCEEDED,
  /**
   * The server's Retry-After is longer than {@code maxRetryAfter}, or the call's turn in a crowd
   * paced on its origin would come later than that: the caller then receives a local response with
   * the origin's status and a {@code Retry-After} for that turn (when half the time left is the
   * tighter bound, the reason is {@link #DEADLINE_EXCEEDED}).
   */
  RETRY_AFTER_TOO_LONG,
  /**
   * The call's {@link RetryBudget} could not pay the retry's price, from its balance or its
   * reserve: failures persist among successes beyond what the budget's deposits pay for. Known at
   * once when the retry is decided (the failure as it came); rarely, only when it was to leave
   * (after its wait: a response then without its body).
   */
  BUDGET_EXHAUSTED,
  /**
   * The call's {@link RetryBudget} did not send its retries: it had sent one failing call's worth
   * to the origin (or the path) since a call to it last succeeded, and either the origin has failed
   * everything for two of the call's retry schedules (the call ends at once, with its failure as it
   * came), or no call to it succeeded while the call waited its backoff (it ends with its last
   * failure, a response without its body, having sent no attempt the budget skipped). Or, under
   * {@code retryBeforeFirstSuccess(false)}, the retry follows an error before the budget's first
   * success (then at once).
   */
  NO_RECENT_SUCCESS,
  /**
   * The origin is closed by an earlier 429/503 {@code Retry-After} ({@link
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
