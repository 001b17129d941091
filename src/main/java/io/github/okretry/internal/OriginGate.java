package io.github.okretry.internal;

import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.HttpUrl;
import org.jspecify.annotations.Nullable;

/**
 * Remembers, per origin (scheme, host, port), the earliest time a server allowed the next
 * request through a 429/503 {@code Retry-After}, so every call to that origin respects it instead
 * of each discovering it with a rejected request of its own.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class OriginGate {

  /**
   * A closed gate: no request before {@code notBeforeNanos}; {@code code} is the status that
   * closed it, handed to callers that cannot wait.
   */
  public static final class Closed {
    final long notBeforeNanos;
    final int code;

    Closed(long notBeforeNanos, int code) {
      this.notBeforeNanos = notBeforeNanos;
      this.code = code;
    }

    public long notBeforeNanos() {
      return notBeforeNanos;
    }

    public int code() {
      return code;
    }
  }

  /** Past this many origins, expired entries are swept on the next close. */
  static final int PRUNE_ABOVE = 256;

  private final ConcurrentHashMap<String, Closed> closed = new ConcurrentHashMap<>();

  /** Closes {@code url}'s origin until {@code notBeforeNanos}; a later time wins. */
  public void close(HttpUrl url, long nowNanos, long notBeforeNanos, int code) {
    if (closed.size() > PRUNE_ABOVE) {
      // A client talking to many hosts must not accumulate one entry per host forever.
      for (Iterator<Closed> i = closed.values().iterator(); i.hasNext(); ) {
        if (i.next().notBeforeNanos - nowNanos <= 0) i.remove();
      }
    }
    String key = origin(url);
    Closed update = new Closed(notBeforeNanos, code);
    while (true) {
      Closed old = closed.putIfAbsent(key, update);
      if (old == null || update.notBeforeNanos - old.notBeforeNanos <= 0) return;
      if (closed.replace(key, old, update)) return;
    }
  }

  /** The gate in front of {@code url} at {@code nowNanos}, or null if it is open. */
  public @Nullable Closed check(HttpUrl url, long nowNanos) {
    if (closed.isEmpty()) return null; // the common case, without building a key
    String key = origin(url);
    Closed gate = closed.get(key);
    if (gate == null) return null;
    if (gate.notBeforeNanos - nowNanos <= 0) {
      closed.remove(key, gate);
      return null;
    }
    return gate;
  }

  static String origin(HttpUrl url) {
    return url.scheme() + "://" + url.host() + ":" + url.port();
  }
}
