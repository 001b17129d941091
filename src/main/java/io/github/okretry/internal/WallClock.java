package io.github.okretry.internal;

/**
 * The wall clock that {@code Retry-After} HTTP-dates are measured against when a response has no
 * {@code Date} header, and that stamps okretry's own local responses. A seam of its own because
 * waits and deadlines use the monotonic {@link TimeSource}, never this.
 */
public interface WallClock {

  /** {@link System#currentTimeMillis()}. */
  WallClock SYSTEM = System::currentTimeMillis;

  /** Milliseconds since the epoch, as {@link System#currentTimeMillis()}. */
  long currentTimeMillis();
}
