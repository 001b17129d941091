package io.github.okretry;

import org.jspecify.annotations.Nullable;

/**
 * Per-request choice of the idempotency key okretry sends (with either driver), attached as a
 * request tag:
 *
 * <pre>{@code
 * new Request.Builder().url(url).post(body)
 *     .tag(IdempotencyKey.class, IdempotencyKey.of("order-42"))
 *     .build();
 * }</pre>
 *
 * <p>Without a tag, POST and PATCH get a generated key and other methods none (see {@link
 * RetryPolicy.Builder#generateIdempotencyKeys(boolean)}). The same key is sent unchanged on every
 * attempt of one logical call, so a server can de-duplicate a request whose response was lost. A
 * key header the caller set on the request itself always wins over the tag.
 *
 * <p>A request that carries a key is treated as safe to repeat on any retryable failure; one
 * without a key and with a non-idempotent method is repeated only when the failure proves the
 * server did not process it.
 */
public final class IdempotencyKey {

  private static final IdempotencyKey GENERATE = new IdempotencyKey(null, true);
  private static final IdempotencyKey NONE = new IdempotencyKey(null, false);

  final @Nullable String value; // the caller's key from of(), else null
  final boolean generate;

  private IdempotencyKey(@Nullable String value, boolean generate) {
    this.value = value;
    this.generate = generate;
  }

  /**
   * Sends {@code value} as the key on every attempt.
   *
   * @param value non-empty visible ASCII ({@code 0x21..0x7E}); so no spaces, CR or LF, which would
   *     let the key inject headers
   * @return a key sending {@code value}
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if {@code value} is empty or has any other character
   */
  public static IdempotencyKey of(String value) {
    if (value == null) throw new NullPointerException("value == null");
    if (value.isEmpty()) throw new IllegalArgumentException("idempotency key is empty");
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        throw new IllegalArgumentException(
            String.format(
                "idempotency key has a character that is not visible ASCII at index %d: U+%04X",
                i, (int) c));
      }
    }
    return new IdempotencyKey(value, false);
  }

  /**
   * Generates a random key (a UUID v4 from a {@code SecureRandom}) once per logical call, for any
   * method, even a GET.
   *
   * @return the policy that generates a key per call
   */
  public static IdempotencyKey generate() {
    return GENERATE;
  }

  /**
   * Sends no key, even for POST or PATCH.
   *
   * @return the policy that sends no key
   */
  public static IdempotencyKey none() {
    return NONE;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof IdempotencyKey)) return false;
    IdempotencyKey other = (IdempotencyKey) o;
    return generate == other.generate
        && (value == null ? other.value == null : value.equals(other.value));
  }

  @Override
  public int hashCode() {
    return 31 * (value == null ? 0 : value.hashCode()) + (generate ? 1 : 0);
  }

  /** Never prints the key itself, so the tag is safe to log. */
  @Override
  public String toString() {
    return value != null
        ? "IdempotencyKey.of(…)"
        : generate ? "IdempotencyKey.generate()" : "IdempotencyKey.none()";
  }
}
