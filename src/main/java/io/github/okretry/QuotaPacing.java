package io.github.okretry;

/**
 * Whether calls are paced by the quota a server publishes in its responses ({@code RateLimit} /
 * {@code RateLimit-Policy}, the earlier drafts' {@code RateLimit-*}, {@code X-RateLimit-*}, {@code
 * X-Rate-Limit-*}). Set with {@link RetryPolicy.Builder#quotaPacing}; what each reads and every
 * bound on hostile values: docs/semantics.md, "Published quotas".
 */
public enum QuotaPacing {
  /** Quota fields are not read; only {@code Retry-After} paces calls. */
  OFF,
  /**
   * The default. Once an origin publishes a quota, a call finding it spent waits until more arrives
   * (within its deadline and {@code maxRetryAfter}; a longer wait is not imposed), a crowd held at
   * a reset is released as the answers after it allow, and a quota that other processes also draw
   * on is spread over the time to its reset. An origin that never publishes one costs nothing: no
   * state, no lock, one scan of the response's header names.
   */
  PUBLISHED,
  /**
   * As {@link #PUBLISHED}, and also: the calls to an origin this policy has not heard from go one
   * at a time until its first answer, so a crowd on a fresh origin learns the quota before spending
   * it. Costs every call a per-call state and a short lock, and a crowd on a fresh origin one round
   * trip (a call held no longer than {@code maxRetryAfter} or half its time left: then it goes); an
   * origin that answers without a quota is then free for 30 s.
   */
  PROBE
}
