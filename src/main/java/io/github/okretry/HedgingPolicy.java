package io.github.okretry;

import io.github.okretry.internal.Durations;
import io.github.okretry.internal.SuppressSignatureCheck;
import io.github.okretry.internal.Tuning;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * When {@link RetryingCallFactory} hedges a call: once an attempt has gone unanswered for the hedge
 * delay, the same request is sent again beside it, the first acceptable answer wins and the other
 * attempt is canceled (its response, if any, closed). Hedging is the factory's, not the {@link
 * RetryPolicy}'s: a {@link RetryInterceptor} runs one chain on one thread, and only a driver that
 * can have two attempts in flight can hedge.
 *
 * <pre>{@code
 * RetryingCallFactory calls =
 *     RetryingCallFactory.create(client, policy, HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
 * }</pre>
 *
 * <p>Only requests that are safe to send twice are hedged: an idempotent method or one carrying an
 * idempotency key (every hedge carries the same key), with a body that can be written again (never
 * a one-shot or duplex body, never a keyless POST). A hedge is an attempt: it counts against the
 * policy's {@code maxRetries} and is paid for from its {@link RetryBudget} like a retry; a call
 * that sent one pays nothing back into it. No hedge goes to an origin that is refusing or pacing
 * (after the call saw a 429 or 503, or a {@code Retry-After}, or while the origin's gate is closed
 * or a crowd is paced on it, or for 10 s after the origin refused any call of the factory), nor
 * past the call's deadline, which hedges and retries share.
 *
 * <p>An immutable value; what a factory learns of each origin (its recent latencies, its refusals)
 * is that factory's own.
 */
public final class HedgingPolicy {

  private final long delayNanos; // a fixed delay; 0 for an adaptive one
  private final double percentile; // an adaptive delay's percentile; 0 for a fixed delay
  private final long floorNanos; // an adaptive delay's floor; 0 for a fixed delay
  private final int maxHedges;

  private HedgingPolicy(long delayNanos, double percentile, long floorNanos, int maxHedges) {
    this.delayNanos = delayNanos;
    this.percentile = percentile;
    this.floorNanos = floorNanos;
    this.maxHedges = maxHedges;
  }

  /**
   * Hedges after a fixed delay: once an attempt has had no answer for {@code amount}, a hedge is
   * sent beside it. An origin that has never answered a call of the factory is not hedged (it may
   * be one that refuses everything). At most one hedge in flight, unless {@link #maxHedges}.
   *
   * @param amount how long an attempt may go unanswered before a hedge, positive, at most 24 hours
   * @param unit the unit of {@code amount}
   * @return a policy that hedges after {@code amount}
   * @throws NullPointerException if {@code unit} is null
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  public static HedgingPolicy after(long amount, TimeUnit unit) {
    return new HedgingPolicy(Durations.checkedNanos("hedge delay", amount, unit), 0, 0, 1);
  }

  /**
   * Hedges after a fixed delay, as a {@link Duration}; see {@link #after(long, TimeUnit)}.
   *
   * @param delay how long an attempt may go unanswered before a hedge, positive, at most 24 hours
   * @return a policy that hedges after {@code delay}
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if it is zero, negative or over 24 hours
   */
  @SuppressSignatureCheck
  public static HedgingPolicy after(Duration delay) {
    return new HedgingPolicy(Durations.checkedNanos("hedge delay", delay), 0, 0, 1);
  }

  /**
   * Hedges after a delay learned from each origin, with the defaults: twice the p90 of its recent
   * answers, at least 10 ms. See {@link #adaptive(double, long, TimeUnit)}.
   *
   * @return a policy with an adaptive delay, p90 and a 10 ms floor
   */
  public static HedgingPolicy adaptive() {
    return adaptive(Tuning.HEDGE_PERCENTILE, Tuning.HEDGE_FLOOR_NANOS, TimeUnit.NANOSECONDS);
  }

  /**
   * Hedges after a delay learned from each origin: twice the {@code percentile} of the latencies of
   * its recent answers (the last 128 attempts to that origin that answered, under this factory),
   * and never sooner than {@code floor}. Twice, because a hedge at the percentile itself would go
   * out for a tenth of healthy attempts at p90: only attempts clearly slower than the body of the
   * distribution are hedged, and a service that is uniformly slow is not hedged at all. Until an
   * origin has answered 20 attempts (its warm-up) its calls are not hedged.
   *
   * @param percentile the percentile of recent latencies, in (0, 1), such as 0.9
   * @param floor the shortest delay, positive, at most 24 hours
   * @param unit the unit of {@code floor}
   * @return a policy with an adaptive delay
   * @throws NullPointerException if {@code unit} is null
   * @throws IllegalArgumentException if {@code percentile} is not in (0, 1), or {@code floor} is
   *     zero, negative or over 24 hours
   */
  public static HedgingPolicy adaptive(double percentile, long floor, TimeUnit unit) {
    long floorNanos = Durations.checkedNanos("hedge floor", floor, unit);
    return new HedgingPolicy(0, checkedPercentile(percentile), floorNanos, 1);
  }

  /**
   * Hedges after a delay learned from each origin, its floor a {@link Duration}; see {@link
   * #adaptive(double, long, TimeUnit)}.
   *
   * @param percentile the percentile of recent latencies, in (0, 1), such as 0.9
   * @param floor the shortest delay, positive, at most 24 hours
   * @return a policy with an adaptive delay
   * @throws NullPointerException if {@code floor} is null
   * @throws IllegalArgumentException if {@code percentile} is not in (0, 1), or {@code floor} is
   *     zero, negative or over 24 hours
   */
  @SuppressSignatureCheck
  public static HedgingPolicy adaptive(double percentile, Duration floor) {
    long floorNanos = Durations.checkedNanos("hedge floor", floor);
    return new HedgingPolicy(0, checkedPercentile(percentile), floorNanos, 1);
  }

  private static double checkedPercentile(double percentile) {
    if (!(percentile > 0 && percentile < 1)) {
      throw new IllegalArgumentException("hedge percentile must be in (0, 1): " + percentile);
    }
    return percentile;
  }

  /**
   * This policy with at most {@code maxHedges} hedges in flight beside a call's attempt, each sent
   * one hedge delay after the one before: at most {@code maxHedges + 1} attempts of a call run at
   * once. Default 1.
   *
   * @param maxHedges hedges in flight at most, in [1, 5]
   * @return a copy of this policy with {@code maxHedges}
   * @throws IllegalArgumentException if {@code maxHedges} is not in [1, 5]
   */
  public HedgingPolicy maxHedges(int maxHedges) {
    if (maxHedges < 1 || maxHedges > 5) {
      throw new IllegalArgumentException("maxHedges not in [1, 5]: " + maxHedges);
    }
    return new HedgingPolicy(delayNanos, percentile, floorNanos, maxHedges);
  }

  /** The fixed hedge delay, or 0 for an adaptive one. */
  long delayNanos() {
    return delayNanos;
  }

  /** The adaptive delay's percentile, in (0, 1), or 0 for a fixed delay. */
  double percentile() {
    return percentile;
  }

  /** The adaptive delay's floor, or 0 for a fixed delay. */
  long floorNanos() {
    return floorNanos;
  }

  /** Hedges in flight at most, beside the attempt. */
  int maxHedges() {
    return maxHedges;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof HedgingPolicy)) return false;
    HedgingPolicy other = (HedgingPolicy) o;
    return delayNanos == other.delayNanos
        && Double.compare(percentile, other.percentile) == 0
        && floorNanos == other.floorNanos
        && maxHedges == other.maxHedges;
  }

  @Override
  public int hashCode() {
    return Objects.hash(delayNanos, percentile, floorNanos, maxHedges);
  }

  @Override
  public String toString() {
    return "HedgingPolicy{"
        + (percentile > 0
            ? "percentile=" + percentile + ", floorNanos=" + floorNanos
            : "delayNanos=" + delayNanos)
        + ", maxHedges="
        + maxHedges
        + "}";
  }
}
