package io.github.okretry.internal;

import static io.github.okretry.internal.QuotaHeaders.MAX_KEY_CHARS;
import static io.github.okretry.internal.QuotaHeaders.MAX_QUOTAS;
import static io.github.okretry.internal.QuotaHeaders.MAX_WINDOW_SECONDS;
import static io.github.okretry.internal.QuotaHeaders.NANOS_PER_SECOND;
import static io.github.okretry.internal.QuotaHeaders.boundedReset;

import io.github.okretry.internal.Quota.Form;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import okhttp3.Headers;
import org.jspecify.annotations.Nullable;

/**
 * The two {@link QuotaHeaders} forms that are RFC 9651 structured fields, read from what {@link
 * StructuredFields} parses: the IETF {@code RateLimit} List with its {@code RateLimit-Policy}
 * (draft -08 to -10), and the draft -07 {@code RateLimit} Dictionary. Each returns null for a
 * field that is absent or malformed, so {@link QuotaHeaders#parse} moves on to the next form; the
 * bounds are {@link QuotaHeaders}'s.
 */
final class StructuredQuotas {
  private StructuredQuotas() {}

  // ---- IETF List form -------------------------------------------------------------------------

  @Nullable
  static List<Quota> ietf(Headers headers, long nowNanos) {
    List<StructuredItem> limits = StructuredFields.parseList(StructuredFields.combine(headers.values("RateLimit")));
    if (limits == null || limits.isEmpty()) return null;
    for (int i = 0; i < limits.size(); i++) {
      if (!validServiceLimit(limits.get(i))) return null; // one bad member: the field is malformed
    }
    // RateLimit-Policy is informative (§7): a malformed one is ignored and RateLimit stands alone.
    List<StructuredItem> policies =
        StructuredFields.parseList(StructuredFields.combine(headers.values("RateLimit-Policy")));
    if (policies != null) {
      for (int i = 0; i < policies.size(); i++) {
        if (!validPolicy(policies.get(i))) {
          policies = null;
          break;
        }
      }
    }
    Merged merged = new Merged();
    for (int i = 0; i < limits.size(); i++) {
      StructuredItem item = limits.get(i);
      String name = item.text;
      String pk = bytes(item.param("pk"));
      if (name.length() > MAX_KEY_CHARS || (pk != null && pk.length() > MAX_KEY_CHARS)) continue;
      StructuredItem policy = policies == null ? null : findPolicy(policies, name, pk);
      if (policy != null && !countsRequests(policy)) continue; // a quota of bytes says nothing of requests
      long remaining = item.param("r").integer;
      boolean hasLimit = policy != null;
      long limit = hasLimit ? policy.param("q").integer : 0;
      if (hasLimit) remaining = Math.min(remaining, limit); // r > q: believe the smaller
      long windowNanos = 0;
      StructuredItem w = policy == null ? null : policy.param("w");
      if (w != null && w.integer <= MAX_WINDOW_SECONDS) windowNanos = w.integer * NANOS_PER_SECOND;
      StructuredItem t = item.param("t");
      long resetNanos = t == null ? -1 : boundedReset(t.integer * NANOS_PER_SECOND); // t ≤ 10^15 - 1: no overflow
      merged.add(new Quota(Form.IETF_LIST, name, pk, remaining, hasLimit, limit, windowNanos, nowNanos,
          resetNanos >= 0, Math.max(0, resetNanos)));
    }
    return merged.result();
  }

  // §5: a String (or Token: draft issue #158 is open) naming the policy; r a non-negative Integer,
  // REQUIRED; t a non-negative Integer; pk a Byte Sequence. Other parameters are comments.
  private static boolean validServiceLimit(StructuredItem item) {
    if (!isName(item)) return false;
    StructuredItem r = item.param("r");
    if (r == null || !nonNegativeInteger(r)) return false;
    StructuredItem t = item.param("t");
    if (t != null && !nonNegativeInteger(t)) return false;
    StructuredItem pk = item.param("pk");
    return pk == null || pk.type == StructuredItem.BYTES;
  }

  // §4: q a non-negative Integer, REQUIRED; qu a String; w a positive Integer; pk a Byte Sequence.
  private static boolean validPolicy(StructuredItem item) {
    if (!isName(item)) return false;
    StructuredItem q = item.param("q");
    if (q == null || !nonNegativeInteger(q)) return false;
    StructuredItem qu = item.param("qu");
    if (qu != null && qu.type != StructuredItem.STRING) return false;
    StructuredItem w = item.param("w");
    if (w != null && (w.type != StructuredItem.INTEGER || w.integer <= 0)) return false;
    StructuredItem pk = item.param("pk");
    return pk == null || pk.type == StructuredItem.BYTES;
  }

  private static boolean isName(StructuredItem item) {
    return item.type == StructuredItem.STRING || item.type == StructuredItem.TOKEN;
  }

  private static boolean nonNegativeInteger(StructuredItem item) {
    return item.type == StructuredItem.INTEGER && item.integer >= 0;
  }

  @Nullable
  private static String bytes(@Nullable StructuredItem item) {
    return item == null ? null : item.text;
  }

  // The policy of the same name whose pk matches, or that has none (it then covers every pk).
  @Nullable
  private static StructuredItem findPolicy(List<StructuredItem> policies, String name, @Nullable String pk) {
    StructuredItem fallback = null;
    for (int i = 0; i < policies.size(); i++) {
      StructuredItem p = policies.get(i);
      if (!name.equals(p.text)) continue;
      String ppk = bytes(p.param("pk"));
      if (ppk == null) {
        if (fallback == null) fallback = p;
      } else if (ppk.equals(pk)) {
        return p;
      }
    }
    return fallback;
  }

  // The registry says "requests", the IANA table of -10 "request": both count requests.
  private static boolean countsRequests(StructuredItem policy) {
    StructuredItem qu = policy.param("qu");
    return qu == null || "requests".equals(qu.text) || "request".equals(qu.text);
  }

  // ---- draft -07 Dictionary -------------------------------------------------------------------

  @Nullable
  static List<Quota> draftDictionary(Headers headers, long nowNanos) {
    Map<String, StructuredItem> dict =
        StructuredFields.parseDictionary(StructuredFields.combine(headers.values("RateLimit")));
    if (dict == null) return null;
    StructuredItem remaining = dict.get("remaining");
    StructuredItem limit = dict.get("limit");
    StructuredItem reset = dict.get("reset");
    // -07 §3: each a non-negative Integer; any other type makes the field malformed.
    if (remaining == null || !nonNegativeInteger(remaining)) return null;
    if (limit != null && !nonNegativeInteger(limit)) return null;
    if (reset != null && !nonNegativeInteger(reset)) return null;
    long r = limit == null ? remaining.integer : Math.min(remaining.integer, limit.integer);
    long resetNanos = reset == null ? -1 : boundedReset(reset.integer * NANOS_PER_SECOND);
    Quota q = new Quota(Form.DRAFT_DICTIONARY, null, null, r, limit != null, limit == null ? 0 : limit.integer,
        0, nowNanos, resetNanos >= 0, Math.max(0, resetNanos));
    return Collections.singletonList(q);
  }

  /**
   * Quotas by key (policy, pk), at most {@link QuotaHeaders#MAX_QUOTAS}. The same key twice keeps
   * the more conservative reading: fewer remaining, and the later reset.
   */
  private static final class Merged {
    final List<Quota> quotas = new ArrayList<>();

    void add(Quota q) {
      for (int i = 0; i < quotas.size(); i++) {
        Quota old = quotas.get(i);
        if (eq(old.policy(), q.policy()) && eq(old.partitionKey(), q.partitionKey())) {
          boolean hasReset = old.hasReset() || q.hasReset();
          long reset = Math.max(old.resetAfterNanos(), q.resetAfterNanos());
          boolean hasLimit = old.hasLimit() || q.hasLimit();
          long limit = old.hasLimit() && q.hasLimit() ? Math.min(old.limit(), q.limit()) : Math.max(old.limit(), q.limit());
          long remaining = Math.min(old.remaining(), q.remaining());
          if (hasLimit) remaining = Math.min(remaining, limit);
          quotas.set(i, new Quota(q.form(), q.policy(), q.partitionKey(), remaining, hasLimit, limit,
              Math.max(old.windowNanos(), q.windowNanos()), q.receivedAtNanos(), hasReset, reset));
          return;
        }
      }
      if (quotas.size() < MAX_QUOTAS) quotas.add(q);
    }

    @Nullable
    List<Quota> result() {
      return quotas.isEmpty() ? null : Collections.unmodifiableList(new ArrayList<>(quotas));
    }

    private static boolean eq(@Nullable String a, @Nullable String b) {
      return a == null ? b == null : a.equals(b);
    }
  }
}
