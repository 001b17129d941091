package io.github.okretry.internal;

import io.github.okretry.internal.Quota.Form;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import okhttp3.Headers;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Reads the quota a response publishes: the IETF {@code RateLimit} / {@code RateLimit-Policy}
 * fields (draft-ietf-httpapi-ratelimit-headers -08 to -10, and the -07 Dictionary), the separate
 * {@code RateLimit-Limit/-Remaining/-Reset} of the earlier drafts, and the {@code X-RateLimit-*}
 * and {@code X-Rate-Limit-*} families. Pure: time comes in as arguments; never throws; null when
 * nothing usable was published. What each form means and every bound: docs/semantics.md, "Published
 * quotas".
 *
 * <p>One family per response, the first present and valid in this order: IETF List, -07 Dictionary,
 * {@code RateLimit-*} fields, {@code X-RateLimit-*}, {@code X-Rate-Limit-*}. A malformed IETF field
 * is ignored whole (the draft's MUST, and RFC 9651 §4.2), as if absent. The two structured forms
 * (IETF List, -07 Dictionary) are read by {@link StructuredQuotas}; the separate fields here.
 */
public final class QuotaHeaders {
  /**
   * The longest reset believed: 10 minutes, the draft's own threshold (§8.5.1). A later one is
   * unknown, so a hostile or mistaken value can never park calls.
   */
  public static final long MAX_RESET_NANOS = 600_000_000_000L;

  /** The longest window ({@code w}) kept: 366 days; a longer one is dropped as absurd. */
  public static final long MAX_WINDOW_SECONDS = 366L * 86_400L;

  /** Policies kept from one response (the draft sets no limit; memory must have one). */
  public static final int MAX_QUOTAS = 16;

  /** The longest policy name, bucket id or partition key kept; a longer one drops its quota. */
  public static final int MAX_KEY_CHARS = 128;

  /**
   * A reset (nanoseconds from now) that is not known: none sent, unreadable, in the past or past
   * {@link #MAX_RESET_NANOS}. Not 0, which is a reset now.
   */
  static final long NO_RESET = -1;

  /** What {@link #integer} reads from a value that is not a non-negative integer (or is none). */
  private static final long NOT_AN_INTEGER = -1;

  static final long NANOS_PER_SECOND = 1_000_000_000L;

  /** A reset value at or above this is epoch seconds (2001-09-09), below it delta seconds. */
  static final long EPOCH_SECONDS_FROM = 1_000_000_000L;

  /** A reset value at or above this is epoch milliseconds. */
  static final long EPOCH_MILLIS_FROM = 1_000_000_000_000L;

  private QuotaHeaders() {}

  /**
   * The quotas {@code response} published, or null. A response served from OkHttp's cache ({@code
   * cacheResponse} without {@code networkResponse}) publishes nothing; a conditional hit
   * revalidated by the network does.
   *
   * @param nowNanos the caller's monotonic time when the response arrived
   * @param clock the wall clock, read only for an epoch reset on a response without {@code Date}
   */
  @Nullable
  public static List<Quota> parse(Response response, long nowNanos, WallClock clock) {
    boolean fromCache = response.cacheResponse() != null && response.networkResponse() == null;
    return parse(response.headers(), response.code(), fromCache, nowNanos, clock);
  }

  /**
   * The quotas these headers publish, or null; {@code nowNanos} and {@code clock} as for {@link
   * #parse(Response, long, WallClock)}. Nothing is read from a response that came from a cache
   * ({@code fromCache}, or an {@code Age} above 0: the draft's "positive current_age"), nor from a
   * 401 or 407, whose quota fields are placeholders of an unauthenticated caller.
   *
   * @param code the response's status
   * @param fromCache whether the response was served from a cache rather than by the origin
   */
  @Nullable
  public static List<Quota> parse(
      Headers headers, int code, boolean fromCache, long nowNanos, WallClock clock) {
    if (fromCache || code == 401 || code == 407 || hasPositiveAge(headers)) return null;
    List<Quota> quotas = StructuredQuotas.ietf(headers, nowNanos);
    if (quotas == null) quotas = StructuredQuotas.draftDictionary(headers, nowNanos);
    if (quotas == null) quotas = fields(headers, "RateLimit-", Form.DRAFT_FIELDS, nowNanos, clock);
    if (quotas == null) quotas = fields(headers, "X-RateLimit-", Form.X_RATELIMIT, nowNanos, clock);
    if (quotas == null) {
      quotas = fields(headers, "X-Rate-Limit-", Form.X_RATE_LIMIT, nowNanos, clock);
    }
    return quotas;
  }

  /**
   * Whether {@code headers} hold any field {@link #parse} reads ({@code RateLimit…}, {@code
   * X-RateLimit-…}, {@code X-Rate-Limit-…}): one pass over the names, allocating nothing, so a
   * response from a server that publishes no quota costs no parse.
   */
  public static boolean mayPublish(Headers headers) {
    for (int i = 0, n = headers.size(); i < n; i++) {
      String name = headers.name(i);
      if (name.regionMatches(true, 0, "RateLimit", 0, 9)
          || name.regionMatches(true, 0, "X-RateLimit-", 0, 12)
          || name.regionMatches(true, 0, "X-Rate-Limit-", 0, 13)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The latest reset among the quotas {@code response} reports spent, in nanoseconds from {@code
   * nowNanos}, or {@link RetryAfter#ABSENT} if none says when: what a retried response without
   * {@code Retry-After} waits instead of its backoff (docs/semantics.md, "Retry-After").
   *
   * @param nowNanos the caller's monotonic time when the response arrived
   * @param clock the wall clock, read only for an epoch reset on a response without {@code Date}
   */
  public static long spentResetNanos(Response response, long nowNanos, WallClock clock) {
    if (!mayPublish(response.headers())) return RetryAfter.ABSENT;
    List<Quota> quotas = parse(response, nowNanos, clock);
    if (quotas == null) return RetryAfter.ABSENT;
    long latest = RetryAfter.ABSENT;
    for (int i = 0, n = quotas.size(); i < n; i++) {
      Quota q = quotas.get(i);
      if (q.remaining() == 0 && q.hasReset()) latest = Math.max(latest, q.resetAfterNanos());
    }
    return latest;
  }

  // Age is delta-seconds; a garbage one says nothing, so it does not count as cached.
  private static boolean hasPositiveAge(Headers headers) {
    String age = headers.get("Age");
    if (age == null) return false;
    age = age.trim();
    if (age.isEmpty()) return false;
    boolean positive = false;
    for (int i = 0; i < age.length(); i++) {
      char c = age.charAt(i);
      if (c < '0' || c > '9') return false;
      if (c != '0') positive = true;
    }
    return positive;
  }

  // ---- separate fields: RateLimit-*, X-RateLimit-*, X-Rate-Limit-* ----------------------------

  @Nullable
  private static List<Quota> fields(
      Headers headers, String prefix, Form form, long nowNanos, WallClock clock) {
    long remaining = integer(headers.get(prefix + "Remaining"));
    if (remaining == NOT_AN_INTEGER) return null; // absent, negative, fractional, garbage: none
    long limit = integer(firstMember(headers.get(prefix + "Limit")));
    boolean hasLimit = limit != NOT_AN_INTEGER;
    if (hasLimit) remaining = Math.min(remaining, limit);
    String policy = null;
    if (form == Form.X_RATELIMIT) {
      String bucket = headers.get("X-RateLimit-Bucket"); // Discord
      if (bucket == null) bucket = headers.get("X-RateLimit-Resource"); // GitHub
      if (bucket != null) {
        policy = bucket.trim();
        if (!isKeyText(policy)) {
          return null; // an unusable id: keying it would merge or split buckets
        }
      }
    }
    String after = form == Form.X_RATELIMIT ? headers.get("X-RateLimit-Reset-After") : null;
    long resetNanos =
        after != null
            ? delta(decimal(after)) // Discord: relative, so immune to clock skew
            : reset(headers, decimal(headers.get(prefix + "Reset")), clock);
    boolean hasReset = resetNanos != NO_RESET;
    Quota q =
        new Quota(
            form,
            policy,
            null,
            remaining,
            hasLimit,
            hasLimit ? limit : 0,
            0,
            nowNanos,
            hasReset,
            hasReset ? resetNanos : 0);
    return Collections.singletonList(q);
  }

  /**
   * A reset as the separate fields send it, in nanoseconds from now, or {@link #NO_RESET}. By
   * magnitude, since one name carries both (docs/semantics.md, "Legacy reset"): ≥ 10^12 epoch
   * milliseconds, ≥ 10^9 epoch seconds, else delta seconds. An epoch is measured against the
   * response's {@code Date}, else the local wall clock (as hub4j does); one in the past is unknown
   * (as Envoy does), not "now".
   */
  @SuppressWarnings("JavaUtilDate") // OkHttp's Headers.getDate gives a Date; java.time is API 26+
  private static long reset(Headers headers, long @Nullable [] decimal, WallClock clock) {
    if (decimal == null) return NO_RESET;
    long whole = decimal[0];
    if (whole < EPOCH_SECONDS_FROM) return delta(decimal);
    // whole < 10^15 (integer's bound), so whole * 1000 cannot overflow.
    long epochMillis = whole >= EPOCH_MILLIS_FROM ? whole : whole * 1000 + decimal[1] / 1_000_000L;
    Date serverNow = headers.getDate("Date");
    long nowMillis = serverNow != null ? serverNow.getTime() : clock.currentTimeMillis();
    long deltaMillis = epochMillis - nowMillis;
    // Negative: in the past, or (for an absurd clock far before 1970) an overflow past any bound.
    if (deltaMillis < 0 || deltaMillis > MAX_RESET_NANOS / 1_000_000L) return NO_RESET;
    return deltaMillis * 1_000_000L;
  }

  // A reset past MAX_RESET_NANOS (or negative) is unknown: NO_RESET. Every form keeps one bound.
  static long boundedReset(long nanos) {
    return nanos < 0 || nanos > MAX_RESET_NANOS ? NO_RESET : nanos;
  }

  // A non-negative integer of at most 15 digits (sf-integer's bound), padded by spaces; else
  // NOT_AN_INTEGER.
  private static long integer(@Nullable String value) {
    if (value == null) return NOT_AN_INTEGER;
    value = value.trim();
    if (value.isEmpty() || value.length() > 15) return NOT_AN_INTEGER;
    long n = 0;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') return NOT_AN_INTEGER;
      n = n * 10 + (c - '0');
    }
    return n;
  }

  // Envoy and draft -02 send "10, 10;w=1": the first member's number is the limit.
  @Nullable
  private static String firstMember(@Nullable String value) {
    if (value == null) return null;
    int end = 0;
    while (end < value.length() && value.charAt(end) != ',' && value.charAt(end) != ';') end++;
    return value.substring(0, end);
  }

  // A delta of decimal seconds as nanoseconds, or NO_RESET (none, or past MAX_RESET_NANOS).
  private static long delta(long @Nullable [] decimal) {
    if (decimal == null || decimal[0] > MAX_RESET_NANOS / NANOS_PER_SECOND) return NO_RESET;
    return boundedReset(decimal[0] * NANOS_PER_SECOND + decimal[1]);
  }

  // {whole seconds (≤ 15 digits), fraction in nanoseconds rounded up past the ninth digit} of a
  // non-negative decimal ("1.5"), or null ("", "1.", ".5", "-1", "1e3").
  private static long @Nullable [] decimal(@Nullable String value) {
    if (value == null) return null;
    value = value.trim();
    int dot = value.indexOf('.');
    long whole = integer(dot < 0 ? value : value.substring(0, dot));
    if (whole == NOT_AN_INTEGER || dot == value.length() - 1) return null;
    long fraction = 0;
    boolean more = false; // a non-zero digit past the nanosecond
    for (int i = dot + 1; dot >= 0 && i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') return null;
      if (i - dot <= 9) {
        fraction = fraction * 10 + (c - '0');
      } else if (c != '0') {
        more = true;
      }
    }
    for (int i = dot < 0 ? 9 : value.length() - dot - 1; i < 9; i++) fraction *= 10;
    return new long[] {whole, more ? fraction + 1 : fraction};
  }

  // A key part okretry can compare and log: 1..128 visible ASCII characters.
  private static boolean isKeyText(String s) {
    if (s.isEmpty() || s.length() > MAX_KEY_CHARS) return false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
  }
}
