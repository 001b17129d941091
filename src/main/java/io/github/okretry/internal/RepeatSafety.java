package io.github.okretry.internal;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import okhttp3.RequestBody;
import org.jspecify.annotations.Nullable;

/**
 * When a request may be sent again: whether sending it twice has the effect of sending it once
 * (idempotent), and whether its body can be written twice. A value, one of four shared instances,
 * so finding it allocates nothing. Pure: every input is passed in.
 */
public final class RepeatSafety {

  /**
   * Idempotent by RFC 9110 §9.2.2, and QUERY by RFC 10008 (safe and idempotent: a GET whose query
   * is its body, which OkHttp sends): sending them twice has the effect of sending them once. So
   * none gets a generated key ({@code IdempotencyKeys} generates for POST and PATCH only).
   */
  private static final Set<String> IDEMPOTENT_METHODS =
      Collections.unmodifiableSet(
          new HashSet<>(
              Arrays.asList("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "QUERY")));

  /** Indexed by (idempotent ? 2 : 0) + (repeatableBody ? 1 : 0). */
  private static final RepeatSafety[] ALL = {
    new RepeatSafety(false, false),
    new RepeatSafety(false, true),
    new RepeatSafety(true, false),
    new RepeatSafety(true, true)
  };

  private final boolean idempotent;
  private final boolean repeatableBody;

  private RepeatSafety(boolean idempotent, boolean repeatableBody) {
    this.idempotent = idempotent;
    this.repeatableBody = repeatableBody;
  }

  /**
   * The repeat safety of a request with {@code method} and {@code body}; {@code hasKey}: it carries
   * a non-blank idempotency key.
   */
  public static RepeatSafety of(String method, boolean hasKey, @Nullable RequestBody body) {
    return of(method, hasKey, repeatableBody(body));
  }

  /**
   * The repeat safety of a request with {@code method}, whose body can be written again if {@code
   * repeatableBody} (a one-shot body that okretry keeps for a retry: {@link ReplayBody}).
   */
  public static RepeatSafety of(String method, boolean hasKey, boolean repeatableBody) {
    return ALL[(idempotent(method, hasKey) ? 2 : 0) + (repeatableBody ? 1 : 0)];
  }

  /**
   * True if sending the request twice has the effect of sending it once: its method is idempotent,
   * or it carries an idempotency key ({@code hasKey}: a non-blank one).
   */
  public static boolean idempotent(String method, boolean hasKey) {
    return hasKey || IDEMPOTENT_METHODS.contains(method);
  }

  /** True if {@code body} can be written again: none, or neither one-shot nor duplex. */
  public static boolean repeatableBody(@Nullable RequestBody body) {
    return body == null || !(body.isOneShot() || body.isDuplex());
  }

  /** True if sending the request twice has the effect of sending it once. */
  public boolean isIdempotent() {
    return idempotent;
  }

  /**
   * True if another attempt may send the request: its body can be written again, and the request is
   * idempotent or the failed attempt is {@code provenUnprocessed} (never sent, or refused).
   */
  public boolean safeToRepeat(boolean provenUnprocessed) {
    return repeatableBody && (idempotent || provenUnprocessed);
  }

  /**
   * True if okretry must watch whether an attempt was sent: only a failure of a repeatable,
   * non-idempotent request that may be retried ({@code maxRetries} above 0) depends on it.
   */
  public boolean needsSendProof(int maxRetries) {
    return !idempotent && repeatableBody && maxRetries > 0;
  }

  @Override
  public String toString() {
    return "RepeatSafety{"
        + (idempotent ? "idempotent" : "not idempotent")
        + (repeatableBody ? ", repeatable body}" : ", one-shot body}");
  }
}
