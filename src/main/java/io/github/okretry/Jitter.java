package io.github.okretry;

/**
 * How a wait is drawn from the exponential cap {@code cap(n) = min(base × multiplier^(n-1),
 * maxDelay)} before retry {@code n}. The names follow the AWS Architecture Blog post "Exponential
 * Backoff And Jitter", whose simulation shows that spreading retries in time is what keeps many
 * callers from hitting an overloaded server in lockstep.
 */
public enum Jitter {
  /** Wait exactly {@code cap(n)}: deterministic, and the slowest under contention. */
  NONE,
  /** Wait uniformly in {@code [0, cap(n)]}. The default: least total work for the server. */
  FULL,
  /** Wait {@code cap(n)/2 + uniform[0, cap(n)/2]}: never less than half the cap. */
  EQUAL,
  /**
   * Wait {@code min(maxDelay, uniform[base, previous × 3])}, where {@code previous} is the last
   * wait (the base before the first retry). Does not use the multiplier.
   */
  DECORRELATED
}
