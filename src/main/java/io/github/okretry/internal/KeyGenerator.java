package io.github.okretry.internal;

import java.util.UUID;

/** Makes idempotency keys; a seam so tests can predict them. */
public interface KeyGenerator {

  /**
   * A random UUID v4 from a {@code SecureRandom}: unpredictable on purpose, because a server that
   * de-duplicates by key across clients would otherwise let anyone who can guess a key replay or
   * poison another caller's request.
   */
  KeyGenerator RANDOM_UUID = () -> UUID.randomUUID().toString();

  /** A new key of visible ASCII characters. */
  String newKey();
}
