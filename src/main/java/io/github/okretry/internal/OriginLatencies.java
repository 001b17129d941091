package io.github.okretry.internal;

import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import okhttp3.HttpUrl;

/**
 * What hedging knows of each origin (scheme, host, port): when it last refused a call, so no call
 * hedges to it for {@link Tuning#HEDGE_QUIET_AFTER_REFUSAL_NANOS}; and, for the adaptive hedge
 * delay, a ring of its last {@link Tuning#HEDGE_WINDOW} answer latencies with a percentile
 * recomputed once per {@link Tuning#HEDGE_RECOMPUTE_EVERY} new ones. An attempt canceled because
 * another answered first is not recorded (its latency is only bounded below), so a hedge that cut a
 * slow attempt short does not teach the table that the origin is slow.
 *
 * <p>Bounded: at most {@code maxOrigins} origins, the least recently used forgotten first (it only
 * warms up again). O(1) under one short lock, but one record in {@link
 * Tuning#HEDGE_RECOMPUTE_EVERY} sorts a copy of its window.
 *
 * <p>Thread-safe.
 */
public final class OriginLatencies {

  /** One origin's recent latencies. Guarded by the table's lock. */
  private static final class Ring {
    final long[] nanos = new long[Tuning.HEDGE_WINDOW];
    int count; // up to nanos.length
    int next; // where the next latency goes
    int sinceComputed =
        Tuning.HEDGE_RECOMPUTE_EVERY
            - 1; // records since the percentile was computed: due at warm-up
    long percentileNanos; // 0 until warmed up
    boolean refused;
    long refusedNanos; // when it last refused, if refused
  }

  private final double percentile;
  private final int maxOrigins;
  private final LinkedHashMap<String, Ring> rings; // guarded by this; access order: LRU first

  /**
   * A table whose {@link #percentileNanos} is the {@code percentile} of each origin's window.
   *
   * @param percentile in (0, 1)
   */
  public OriginLatencies(double percentile) {
    this(percentile, Tuning.MAX_ORIGINS);
  }

  /** As {@link #OriginLatencies(double)}, remembering at most {@code maxOrigins} origins. */
  public OriginLatencies(double percentile, int maxOrigins) {
    if (!(percentile > 0 && percentile < 1)) {
      throw new IllegalArgumentException("percentile not in (0, 1): " + percentile);
    }
    if (maxOrigins < 1) throw new IllegalArgumentException("maxOrigins < 1: " + maxOrigins);
    this.percentile = percentile;
    this.maxOrigins = maxOrigins;
    this.rings = new LinkedHashMap<>(16, 0.75f, true);
  }

  /** {@code url}'s origin refused a call at {@code nowNanos}. */
  public void refused(HttpUrl url, long nowNanos) {
    String key = OriginGate.origin(url);
    synchronized (this) {
      Ring ring = ringFor(key);
      ring.refused = true;
      ring.refusedNanos = nowNanos;
    }
  }

  /**
   * True if {@code url}'s origin refused a call less than {@link
   * Tuning#HEDGE_QUIET_AFTER_REFUSAL_NANOS} ago.
   */
  public boolean refusedRecently(HttpUrl url, long nowNanos) {
    String key = OriginGate.origin(url);
    synchronized (this) {
      Ring ring = rings.get(key);
      return ring != null
          && ring.refused
          && nowNanos - ring.refusedNanos < Tuning.HEDGE_QUIET_AFTER_REFUSAL_NANOS;
    }
  }

  private Ring ringFor(String key) { // guarded by this
    Ring ring = rings.get(key);
    if (ring == null) {
      ring = new Ring();
      rings.put(key, ring);
      if (rings.size() > maxOrigins) {
        Iterator<Map.Entry<String, Ring>> eldest = rings.entrySet().iterator();
        eldest.next();
        eldest.remove();
      }
    }
    return ring;
  }

  /** An attempt to {@code url}'s origin answered {@code latencyNanos} after it was sent. */
  public void record(HttpUrl url, long latencyNanos) {
    if (latencyNanos < 0) return; // a clock that went back tells nothing
    String key = OriginGate.origin(url);
    synchronized (this) {
      Ring ring = ringFor(key);
      ring.nanos[ring.next] = latencyNanos;
      ring.next = (ring.next + 1) % ring.nanos.length;
      if (ring.count < ring.nanos.length) ring.count++;
      if (ring.count >= Tuning.HEDGE_WARMUP_SAMPLES
          && ++ring.sinceComputed >= Tuning.HEDGE_RECOMPUTE_EVERY) {
        ring.percentileNanos = percentileOf(ring.nanos, ring.count, percentile);
        ring.sinceComputed = 0;
      }
    }
  }

  /**
   * The {@code percentile} of the latencies of {@code url}'s origin's recent answers, or 0 while it
   * has given fewer than {@link Tuning#HEDGE_WARMUP_SAMPLES} (warming up).
   */
  public long percentileNanos(HttpUrl url) {
    String key = OriginGate.origin(url);
    synchronized (this) {
      Ring ring = rings.get(key);
      return ring == null ? 0 : ring.percentileNanos;
    }
  }

  /** True if {@code url}'s origin has answered an attempt (since it was last forgotten). */
  public boolean hasAnswered(HttpUrl url) {
    String key = OriginGate.origin(url);
    synchronized (this) {
      Ring ring = rings.get(key);
      return ring != null && ring.count > 0;
    }
  }

  /** Origins remembered. */
  public synchronized int size() {
    return rings.size();
  }

  /** The nearest-rank {@code percentile} of the first {@code count} of {@code nanos}. */
  static long percentileOf(long[] nanos, int count, double percentile) {
    long[] sorted = Arrays.copyOf(nanos, count);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(percentile * count); // 1-based
    return sorted[Math.max(0, Math.min(count, rank) - 1)];
  }
}
