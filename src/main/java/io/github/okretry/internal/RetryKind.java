package io.github.okretry.internal;

/**
 * What a retry follows, which sets its price in a retry budget and what it counts on its origin's
 * streak ({@code docs/semantics.md}, "Retry budget").
 */
public enum RetryKind {
  /** An error: a failed connection, a retryable status without a server-given wait. */
  ERROR,
  /** A timeout: the server may still be working on the request, and may be overloaded. */
  TIMEOUT,
  /**
   * A 503 with a {@code Retry-After}, or a spent published quota's reset, that the retry waits out:
   * unavailable, and it said when. Another 5xx that says when is an {@link #ERROR}: a dead server's
   * 5xx claim whatever they like.
   */
  UNAVAILABLE_SAYS_WHEN,
  /**
   * A 4xx (a 429, or another the policy retries, such as GitHub's 403) that says when, by a {@code
   * Retry-After} or a spent published quota's reset, waited out: the server works and paces this
   * client; the pacers space such retries.
   */
  THROTTLED,
  /**
   * An HTTP/2 stream the server refused ({@code REFUSED_STREAM}, also after a GOAWAY): a live
   * server says it never processed the request, as gRPC's "transparent" retries count it.
   */
  REFUSED;

  /** Whether the server said when to come back: the retry costs less. */
  public boolean serverSaidWhen() {
    return this == UNAVAILABLE_SAYS_WHEN || this == THROTTLED;
  }

  /**
   * What a retry of this kind counts on its origin's streak, in halves: 2, 1 for a 503 that says
   * when, 0 for a throttled client (the server works, and its pacing bounds them) or a refused
   * stream (the server is alive and never saw the request).
   */
  public long halves() {
    switch (this) {
      case THROTTLED:
      case REFUSED:
        return 0;
      case UNAVAILABLE_SAYS_WHEN:
        return 1;
      default:
        return 2;
    }
  }
}
