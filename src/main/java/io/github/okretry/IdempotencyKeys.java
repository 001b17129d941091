package io.github.okretry;

import io.github.okretry.internal.KeyGenerator;
import okhttp3.Request;

/**
 * Puts the idempotency key on a logical call's request, once, before the first attempt; every retry
 * then resends that same request object, so the key cannot drift between attempts.
 */
final class IdempotencyKeys {

  private final String headerName;
  private final boolean quote;
  private final boolean generateForPostAndPatch;
  private final KeyGenerator generator;

  IdempotencyKeys(
      String headerName, boolean quote, boolean generateForPostAndPatch, KeyGenerator generator) {
    this.headerName = headerName;
    this.quote = quote;
    this.generateForPostAndPatch = generateForPostAndPatch;
    this.generator = generator;
  }

  /**
   * True if {@code request} carries a usable key: a key header whose value is not blank. A blank
   * value ({@code ""}, spaces, or an empty sf-string {@code "\"\""}) is a missing key that app code
   * papered over; a server may well treat it as no key, so it never makes a request safe to repeat.
   */
  boolean hasKey(Request request) {
    String value = request.header(headerName);
    return value != null && !isBlank(value);
  }

  /** True for a key value with nothing in it, bare or as an sf-string. */
  static boolean isBlank(String value) {
    int start = 0;
    int end = value.length();
    while (start < end && isSpaceOrTab(value.charAt(start))) start++;
    while (end > start && isSpaceOrTab(value.charAt(end - 1))) end--;
    if (end - start >= 2 && value.charAt(start) == '"' && value.charAt(end - 1) == '"') {
      start++; // an sf-string: look inside the quotes
      end--;
      while (start < end && isSpaceOrTab(value.charAt(start))) start++;
      while (end > start && isSpaceOrTab(value.charAt(end - 1))) end--;
    }
    return start == end;
  }

  private static boolean isSpaceOrTab(char c) {
    return c == ' ' || c == '\t';
  }

  /**
   * {@code request} with its key header, or {@code request} itself when it gets none. A key header
   * set by the caller is left exactly as it is, even blank: okretry does not rewrite what the
   * caller chose to send ({@link #hasKey} decides whether it counts).
   */
  Request stamp(Request request) {
    // A follow-up built from a response must not carry its outcome.
    request = RetryOutcome.unmarked(request);
    if (request.header(headerName) != null) return request; // the caller's own key always wins
    IdempotencyKey tag = RequestTags.idempotencyKey(request);
    String key;
    if (tag == null) {
      String method = request.method();
      if (!generateForPostAndPatch || !(method.equals("POST") || method.equals("PATCH"))) {
        return request;
      }
      key = generator.newKey();
    } else if (tag.value != null) {
      key = tag.value;
    } else if (tag.generate) {
      key = generator.newKey();
    } else {
      return request; // IdempotencyKey.none()
    }
    return request
        .newBuilder()
        .header(headerName, quote ? structuredFieldString(key) : key)
        .build();
  }

  /** RFC 8941 sf-string, the form the IETF Idempotency-Key draft specifies. */
  static String structuredFieldString(String key) {
    StringBuilder out = new StringBuilder(key.length() + 2).append('"');
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == '"' || c == '\\') out.append('\\');
      out.append(c);
    }
    return out.append('"').toString();
  }
}
