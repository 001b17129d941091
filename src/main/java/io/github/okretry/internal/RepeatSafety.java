package io.github.okretry.internal;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import okhttp3.RequestBody;
import org.jspecify.annotations.Nullable;

/**
 * When a request may be sent again. Pure: every input is passed in.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class RepeatSafety {

  /** Idempotent by RFC 9110 §9.2.2: sending them twice has the effect of sending them once. */
  private static final Set<String> IDEMPOTENT_METHODS =
      Collections.unmodifiableSet(
          new HashSet<>(Arrays.asList("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE")));

  private RepeatSafety() {}

  /**
   * True if sending the request twice has the effect of sending it once: its method is
   * idempotent, or it carries an idempotency key ({@code hasKey}: a non-blank one).
   */
  public static boolean idempotent(String method, boolean hasKey) {
    return hasKey || IDEMPOTENT_METHODS.contains(method);
  }

  /** True if {@code body} can be written again: none, or neither one-shot nor duplex. */
  public static boolean repeatableBody(@Nullable RequestBody body) {
    return body == null || !(body.isOneShot() || body.isDuplex());
  }

  /**
   * True if another attempt may send the request: its body can be written again, and the request
   * is idempotent or the failed attempt is proven not processed (never sent, or refused).
   */
  public static boolean safeToRepeat(boolean repeatableBody, boolean idempotent, boolean provenUnprocessed) {
    return repeatableBody && (idempotent || provenUnprocessed);
  }

  /**
   * True if okretry must watch whether an attempt was sent: only a failure of a repeatable,
   * non-idempotent request that may be retried depends on it.
   */
  public static boolean needsSendProof(boolean repeatableBody, boolean idempotent, int maxRetries) {
    return !idempotent && repeatableBody && maxRetries > 0;
  }
}
