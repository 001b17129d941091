package io.github.okretry.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A retry budget's tokens: a balance that calls whose first attempt succeeds pay into and retries
 * draw from, plus a small reserve refilled with time so a client that calls rarely can still retry.
 * Amounts are in thousandths of a token; every method takes the time as an argument, so the same
 * code runs on a real clock and in the fleet simulator. Thread-safe: the balance is lock-free, the
 * reserve has a lock.
 */
public final class TokenBalance {

  /** Thousandths per token. */
  public static final long MILLI = 1000;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private final long depositMilli;
  private final long capacityMilli;
  private final int reservePerSecond;
  private final long reserveCapMilli; // one second's refill
  private final AtomicLong balanceMilli;

  private long reserveMilli; // guarded by this
  private long reserveRefilledAtNanos; // guarded by this
  private boolean reserveStarted; // guarded by this

  /**
   * @param depositMilli paid in by each call whose first attempt succeeds, ≥ 0
   * @param capacityMilli the most the balance holds, ≥ 1000 (one retry)
   * @param initialMilli the balance of a new budget, in {@code [0, capacityMilli]}
   * @param reservePerSecond the reserve's refill rate and cap, in tokens; 0 for no reserve
   */
  public TokenBalance(
      long depositMilli, long capacityMilli, long initialMilli, int reservePerSecond) {
    if (depositMilli < 0) {
      throw new IllegalArgumentException("depositMilli < 0: " + depositMilli);
    }
    if (capacityMilli < MILLI) {
      throw new IllegalArgumentException("capacityMilli < 1000: " + capacityMilli);
    }
    if (initialMilli < 0 || initialMilli > capacityMilli) {
      throw new IllegalArgumentException(
          "initialMilli not in [0, " + capacityMilli + "]: " + initialMilli);
    }
    if (reservePerSecond < 0) {
      throw new IllegalArgumentException("reservePerSecond < 0: " + reservePerSecond);
    }
    this.depositMilli = depositMilli;
    this.capacityMilli = capacityMilli;
    this.reservePerSecond = reservePerSecond;
    this.reserveCapMilli = (long) reservePerSecond * MILLI;
    this.reserveMilli = reserveCapMilli;
    this.balanceMilli = new AtomicLong(initialMilli);
  }

  /** The balance, without the reserve, in thousandths of a token. */
  public long balanceMilli() {
    return balanceMilli.get();
  }

  /** A call's first attempt succeeded: its deposit, up to the capacity. */
  public void deposit() {
    add(depositMilli);
  }

  /** {@code priceMilli} comes back to the balance (even if the reserve paid), up to capacity. */
  public void giveBack(long priceMilli) {
    add(priceMilli);
  }

  private void add(long milli) {
    // The healthy path: a full balance reads one field and writes nothing.
    for (long current = balanceMilli.get(); current < capacityMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, Math.min(capacityMilli, current + milli))) return;
    }
  }

  /**
   * Whether {@code priceMilli} could be paid now, from the balance or, if {@code reserveToo}, the
   * reserve; nothing is taken.
   */
  public boolean canPay(long priceMilli, boolean reserveToo, long nowNanos) {
    if (balanceMilli.get() >= priceMilli) return true;
    return reserveToo && reserve(priceMilli, nowNanos, false);
  }

  /**
   * Takes {@code priceMilli} from the balance or else, if {@code reserveToo}, from the reserve;
   * false if neither holds it, and then nothing is taken.
   */
  public boolean pay(long priceMilli, boolean reserveToo, long nowNanos) {
    for (long current = balanceMilli.get(); current >= priceMilli; current = balanceMilli.get()) {
      if (balanceMilli.compareAndSet(current, current - priceMilli)) return true;
    }
    return reserveToo && reserve(priceMilli, nowNanos, true);
  }

  private synchronized boolean reserve(long priceMilli, long nowNanos, boolean take) {
    if (reservePerSecond == 0) return false;
    // It refills from its first use, reservePerSecond thousandths of a token per millisecond
    // (computed without overflow); its clock moves on by the time the refill paid for, so what a
    // frequent caller's rounding leaves over is not lost.
    long elapsed = reserveStarted ? Math.max(0, nowNanos - reserveRefilledAtNanos) : 0;
    if (!reserveStarted || elapsed >= NANOS_PER_SECOND) {
      reserveStarted = true;
      reserveRefilledAtNanos = nowNanos;
      if (elapsed >= NANOS_PER_SECOND) reserveMilli = reserveCapMilli;
    } else {
      long refill = elapsed * reservePerSecond / 1_000_000L;
      if (refill > 0) {
        reserveRefilledAtNanos += refill * 1_000_000L / reservePerSecond;
        reserveMilli = Math.min(reserveCapMilli, reserveMilli + refill);
      }
    }
    if (reserveMilli < priceMilli) return false;
    if (take) reserveMilli -= priceMilli;
    return true;
  }
}
