package io.github.okretry.internal;

import static io.github.okretry.internal.QuotaHeaders.MAX_KEY_CHARS;
import static io.github.okretry.internal.QuotaHeaders.MAX_QUOTAS;
import static io.github.okretry.internal.QuotaHeaders.MAX_WINDOW_SECONDS;
import static io.github.okretry.internal.QuotaHeaders.NANOS_PER_SECOND;
import static io.github.okretry.internal.QuotaHeaders.NO_RESET;
import static io.github.okretry.internal.QuotaHeaders.boundedReset;

import io.github.okretry.internal.Quota.Form;
import io.github.okretry.internal.StructuredFields.Item;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import okhttp3.Headers;
import org.jspecify.annotations.Nullable;

/**
 * The two {@link QuotaHeaders} forms that are RFC 9651 structured fields: the IETF {@code
 * RateLimit} List with its {@code RateLimit-Policy} (draft -08 to -10), and the draft -07 {@code
 * RateLimit} Dictionary, which express-rate-limit still sends. Each returns null for a field that
 * is absent, too long or malformed, so {@link QuotaHeaders#parse} moves on to the next form. Linear
 * in the fields: each member is checked once and finds its policy in a map.
 */
final class StructuredQuotas {
  private StructuredQuotas() {}

  // ---- IETF List form -------------------------------------------------------------------------

  // Every member was validated whole before it is read (validServiceLimit, validPolicy): its name
  // has its text, and its REQUIRED r (and its policy's q) are there.
  @SuppressWarnings("NullAway")
  @Nullable
  static List<Quota> ietf(Headers headers, long nowNanos) {
    List<Item> limits = StructuredFields.parse(StructuredFields.field(headers, "RateLimit"), false);
    if (limits == null || limits.isEmpty()) return null;
    for (int i = 0; i < limits.size(); i++) {
      if (!validServiceLimit(limits.get(i))) return null; // one bad member: the field is malformed
    }
    Map<String, Item> policies = policies(headers);
    List<Quota> merged = new ArrayList<>();
    for (int i = 0; i < limits.size(); i++) {
      Item item = limits.get(i);
      String name = item.text;
      String pk = text(item.param("pk"));
      if (name.length() > MAX_KEY_CHARS || (pk != null && pk.length() > MAX_KEY_CHARS)) continue;
      // The policy of the same name whose pk matches, else the one without pk (it covers every pk).
      Item policy = policies.get(policyKey(name, pk));
      if (policy == null && pk != null) policy = policies.get(name);
      if (policy != null && !countsRequests(policy)) {
        continue; // a quota of bytes says nothing of requests
      }
      long remaining = item.param("r").integer;
      boolean hasLimit = policy != null;
      long limit = hasLimit ? policy.param("q").integer : 0;
      if (hasLimit) remaining = Math.min(remaining, limit); // r > q: believe the smaller
      long windowNanos = 0;
      Item w = policy == null ? null : policy.param("w");
      if (w != null && w.integer <= MAX_WINDOW_SECONDS) windowNanos = w.integer * NANOS_PER_SECOND;
      Item t = item.param("t");
      // t ≤ 10^15 - 1: no overflow
      long resetNanos = t == null ? NO_RESET : boundedReset(t.integer * NANOS_PER_SECOND);
      boolean hasReset = resetNanos != NO_RESET;
      merge(
          merged,
          new Quota(
              Form.IETF_LIST,
              name,
              pk,
              remaining,
              hasLimit,
              limit,
              windowNanos,
              nowNanos,
              hasReset,
              hasReset ? resetNanos : 0));
    }
    return merged.isEmpty() ? null : Collections.unmodifiableList(merged);
  }

  /**
   * {@code RateLimit-Policy} by {@link #policyKey}, the first of each key sent; empty when the
   * field is absent, too long or malformed (it is informative, §7: {@code RateLimit} then stands
   * alone).
   */
  // The map is private to one parse and only read: no unmodifiable wrapper allocated per response.
  // Each policy was validated whole before it is read (validPolicy): a name has its text.
  @SuppressWarnings({"MixedMutabilityReturnType", "NullAway"})
  private static Map<String, Item> policies(Headers headers) {
    List<Item> list =
        StructuredFields.parse(StructuredFields.field(headers, "RateLimit-Policy"), false);
    if (list == null) return Collections.emptyMap();
    Map<String, Item> byKey = new HashMap<>();
    for (int i = 0; i < list.size(); i++) {
      Item policy = list.get(i);
      if (!validPolicy(policy)) return Collections.emptyMap();
      String key = policyKey(policy.text, text(policy.param("pk")));
      if (!byKey.containsKey(key)) byKey.put(key, policy);
    }
    return byKey;
  }

  // A name alone, or name and pk apart by a line feed, which neither a String nor a Token can hold.
  private static String policyKey(String name, @Nullable String pk) {
    return pk == null ? name : name + '\n' + pk;
  }

  // §5: a String (or Token: draft issue #158 is open) naming the policy; r a non-negative Integer,
  // REQUIRED; t a non-negative Integer; pk a Byte Sequence. Other parameters are comments.
  private static boolean validServiceLimit(Item item) {
    return isName(item)
        && nonNegativeInteger(item.param("r"))
        && absentOrNonNegative(item.param("t"))
        && isBytes(item.param("pk"));
  }

  // §4: q a non-negative Integer, REQUIRED; qu a String; w a positive Integer; pk a Byte Sequence.
  private static boolean validPolicy(Item item) {
    Item qu = item.param("qu");
    Item w = item.param("w");
    return isName(item)
        && nonNegativeInteger(item.param("q"))
        && (qu == null || qu.type == Item.Type.STRING)
        && (w == null || (w.type == Item.Type.INTEGER && w.integer > 0))
        && isBytes(item.param("pk"));
  }

  private static boolean isName(Item item) {
    return item.type == Item.Type.STRING || item.type == Item.Type.TOKEN;
  }

  private static boolean nonNegativeInteger(@Nullable Item item) {
    return item != null && item.type == Item.Type.INTEGER && item.integer >= 0;
  }

  private static boolean absentOrNonNegative(@Nullable Item item) {
    return item == null || nonNegativeInteger(item);
  }

  private static boolean isBytes(@Nullable Item item) {
    return item == null || item.type == Item.Type.BYTES;
  }

  @Nullable
  private static String text(@Nullable Item item) {
    return item == null ? null : item.text;
  }

  // The registry says "requests", the IANA table of -10 "request": both count requests.
  private static boolean countsRequests(Item policy) {
    Item qu = policy.param("qu");
    return qu == null || "requests".equals(qu.text) || "request".equals(qu.text);
  }

  // ---- draft -07 Dictionary -------------------------------------------------------------------

  @Nullable
  static List<Quota> draftDictionary(Headers headers, long nowNanos) {
    List<Item> dict = StructuredFields.parse(StructuredFields.field(headers, "RateLimit"), true);
    if (dict == null) return null;
    Item remaining = StructuredFields.find(dict, "remaining");
    Item limit = StructuredFields.find(dict, "limit");
    Item reset = StructuredFields.find(dict, "reset");
    // -07 §3: each a non-negative Integer; any other type makes the field malformed.
    if (remaining == null
        || !nonNegativeInteger(remaining)
        || !absentOrNonNegative(limit)
        || !absentOrNonNegative(reset)) return null;
    long r = limit == null ? remaining.integer : Math.min(remaining.integer, limit.integer);
    long resetNanos = reset == null ? NO_RESET : boundedReset(reset.integer * NANOS_PER_SECOND);
    boolean hasReset = resetNanos != NO_RESET;
    Quota q =
        new Quota(
            Form.DRAFT_DICTIONARY,
            null,
            null,
            r,
            limit != null,
            limit == null ? 0 : limit.integer,
            0,
            nowNanos,
            hasReset,
            hasReset ? resetNanos : 0);
    return Collections.singletonList(q);
  }

  /**
   * Adds {@code q} to {@code quotas}, at most {@link QuotaHeaders#MAX_QUOTAS}, one per key (policy,
   * pk): the same key twice keeps the more conservative reading, fewer remaining and the later
   * reset.
   */
  private static void merge(List<Quota> quotas, Quota q) {
    for (int i = 0; i < quotas.size(); i++) {
      Quota old = quotas.get(i);
      if (Objects.equals(old.policy(), q.policy())
          && Objects.equals(old.partitionKey(), q.partitionKey())) {
        boolean hasReset = old.hasReset() || q.hasReset();
        long reset = Math.max(old.resetAfterNanos(), q.resetAfterNanos());
        boolean hasLimit = old.hasLimit() || q.hasLimit();
        long limit =
            old.hasLimit() && q.hasLimit()
                ? Math.min(old.limit(), q.limit())
                : Math.max(old.limit(), q.limit());
        long remaining = Math.min(old.remaining(), q.remaining());
        if (hasLimit) remaining = Math.min(remaining, limit);
        quotas.set(
            i,
            new Quota(
                q.form(),
                q.policy(),
                q.partitionKey(),
                remaining,
                hasLimit,
                limit,
                Math.max(old.windowNanos(), q.windowNanos()),
                q.receivedAtNanos(),
                hasReset,
                reset));
        return;
      }
    }
    if (quotas.size() < MAX_QUOTAS) quotas.add(q);
  }
}
