package io.github.okretry.internal;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One quota a response published, as {@link QuotaHeaders} parsed it: how many requests are left for
 * one policy of the server, and when more arrive. Immutable; every number already bounded by {@link
 * QuotaHeaders}, so a consumer needs no checks of its own. Keyed by the caller's origin, {@link
 * #policy()} and {@link #partitionKey()} (two quotas of one response never share both); times on
 * the caller's monotonic clock (a wall-clock reset was converted to a delta first).
 */
public final class Quota {

  /** Which family of fields the quota came from, most standard first. */
  public enum Form {
    /** {@code RateLimit} / {@code RateLimit-Policy} as Lists of named items (draft -08 to -10). */
    IETF_LIST,
    /** {@code RateLimit: limit=…, remaining=…, reset=…} as a Dictionary (draft -07). */
    DRAFT_DICTIONARY,
    /** Separate {@code RateLimit-Limit}, {@code -Remaining}, {@code -Reset} (drafts -00 to -06). */
    DRAFT_FIELDS,
    /** {@code X-RateLimit-*} (GitHub, Discord, Envoy, many others). */
    X_RATELIMIT,
    /** {@code X-Rate-Limit-*} (X/Twitter, Okta). */
    X_RATE_LIMIT
  }

  private final Form form;
  @Nullable private final String policy;
  @Nullable private final String partitionKey;
  private final long remaining;
  private final boolean hasLimit;
  private final long limit;
  private final long windowNanos;
  private final long receivedAtNanos;
  private final boolean hasReset;
  private final long resetAfterNanos;

  Quota(
      Form form,
      @Nullable String policy,
      @Nullable String partitionKey,
      long remaining,
      boolean hasLimit,
      long limit,
      long windowNanos,
      long receivedAtNanos,
      boolean hasReset,
      long resetAfterNanos) {
    if (form == null) throw new NullPointerException("form == null");
    if (remaining < 0) throw new IllegalArgumentException("remaining < 0: " + remaining);
    if (hasLimit && (limit < 0 || remaining > limit)) {
      throw new IllegalArgumentException("limit " + limit + " with remaining " + remaining);
    }
    if (windowNanos < 0) throw new IllegalArgumentException("windowNanos < 0: " + windowNanos);
    if (hasReset && resetAfterNanos < 0) {
      throw new IllegalArgumentException("resetAfterNanos < 0: " + resetAfterNanos);
    }
    this.form = form;
    this.policy = policy;
    this.partitionKey = partitionKey;
    this.remaining = remaining;
    this.hasLimit = hasLimit;
    this.limit = hasLimit ? limit : 0;
    this.windowNanos = windowNanos;
    this.receivedAtNanos = receivedAtNanos;
    this.hasReset = hasReset;
    this.resetAfterNanos = hasReset ? resetAfterNanos : 0;
  }

  /** The family of fields this came from. */
  public Form form() {
    return form;
  }

  /**
   * The server's name for the policy (IETF item name, Discord's {@code X-RateLimit-Bucket},
   * GitHub's {@code X-RateLimit-Resource}), at most 128 visible ASCII characters; null when it
   * names none.
   */
  @Nullable
  public String policy() {
    return policy;
  }

  /**
   * The IETF partition key {@code pk} as the base64 text of its Byte Sequence (≤ 128 characters),
   * or null.
   */
  @Nullable
  public String partitionKey() {
    return partitionKey;
  }

  /**
   * Requests left in this quota when the response was made; ≥ 0 and ≤ {@link #limit()} if known.
   */
  public long remaining() {
    return remaining;
  }

  /** Whether the server said how large the quota is. */
  public boolean hasLimit() {
    return hasLimit;
  }

  /**
   * The quota's size in requests ({@code q}, {@code limit}); 0 when {@link #hasLimit()} is false.
   */
  public long limit() {
    return limit;
  }

  /** The policy's window ({@code w}) in nanoseconds, 1 s to 366 days; 0 when none was published. */
  public long windowNanos() {
    return windowNanos;
  }

  /** The monotonic time (the caller's "now") at which the response was parsed. */
  public long receivedAtNanos() {
    return receivedAtNanos;
  }

  /**
   * Whether the response said when more quota arrives; false if it did not, or out of bounds or
   * malformed.
   */
  public boolean hasReset() {
    return hasReset;
  }

  /**
   * Nanoseconds from {@link #receivedAtNanos()} until more quota arrives; 0 when {@link
   * #hasReset()} is false.
   */
  public long resetAfterNanos() {
    return resetAfterNanos;
  }

  /**
   * When more quota arrives, on the caller's monotonic clock; only meaningful when {@link
   * #hasReset()}.
   */
  public long resetAtNanos() {
    return receivedAtNanos + resetAfterNanos;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) return true;
    if (!(o instanceof Quota)) return false;
    Quota q = (Quota) o;
    return form == q.form
        && Objects.equals(policy, q.policy)
        && Objects.equals(partitionKey, q.partitionKey)
        && remaining == q.remaining
        && hasLimit == q.hasLimit
        && limit == q.limit
        && windowNanos == q.windowNanos
        && receivedAtNanos == q.receivedAtNanos
        && hasReset == q.hasReset
        && resetAfterNanos == q.resetAfterNanos;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        form,
        policy,
        partitionKey,
        remaining,
        hasLimit,
        limit,
        windowNanos,
        receivedAtNanos,
        hasReset,
        resetAfterNanos);
  }

  /**
   * E.g. {@code Quota{IETF_LIST "default" remaining=0/20 w=1s reset in 1000ms}}; server text
   * escaped.
   */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("Quota{").append(form);
    if (policy != null) b.append(" \"").append(LogText.safe(policy)).append('"');
    if (partitionKey != null) b.append(" pk=:").append(partitionKey).append(':');
    b.append(" remaining=").append(remaining);
    if (hasLimit) b.append('/').append(limit);
    if (windowNanos > 0) b.append(" w=").append(windowNanos / 1_000_000_000L).append('s');
    b.append(hasReset ? " reset in " + resetAfterNanos / 1_000_000L + "ms" : " reset unknown");
    return b.append('}').toString();
  }
}
