package io.github.okretry.internal;

import java.util.concurrent.TimeUnit;

/**
 * The numbers that decide how much load okretry lets through to a server when failures pile
 * up: the retry budget's defaults, what a retry costs, how the pacer of a crowd learns, and how
 * many origins the per-origin state remembers. They live here, together, so a reviewer finds
 * them in one place and a fleet simulator can build {@link RetryTokenBucket} and {@link
 * OriginPacer} with other values side by side with these. Why each value was chosen is in
 * {@code docs/semantics.md} ("Retry budget", "Pacing a crowd").
 */
public final class Tuning {

  private Tuning() {}

  // ---- Retry budget (RetryBudget, RetryTokenBucket) ----

  /** Tokens a logical call whose first attempt succeeds deposits, as Finagle and gRPC do. */
  public static final double PERCENT_CAN_RETRY = 0.2;

  /** The reserve: tokens per second, and its cap, independent of deposits (Finagle: 10). */
  public static final int MIN_RETRIES_PER_SECOND = 10;

  /** The most tokens the balance holds. */
  public static final int MAX_TOKENS = 100;

  /**
   * The fraction of {@link #MAX_TOKENS} a new budget starts with: full, as gRPC (A6), the AWS SDKs
   * and MongoDB's drivers start, and like Finagle's 100 retries at t = 0. A fresh client can ride
   * out a burst or a flaky start; a server that fails everything sees at most the starting
   * balance in extra attempts before the budget holds.
   */
  public static final double INITIAL_FILL = 1.0;

  /** What a retry after an error without a server-given wait costs, in thousandths of a token. */
  public static final long RETRY_COST_MILLI = 1000;

  /**
   * What a retry after a timeout costs, in thousandths of a token: ten ordinary retries. A timeout
   * is the sign of a server too slow to answer, which may still be working on the request: the
   * retries that turn an overload into an outage that outlasts its cause follow timeouts. Chosen
   * on the fleet simulator's frontier (docs/fleet.md, "A retry after a timeout").
   */
  public static final long TIMEOUT_COST_MILLI = 10_000;

  /**
   * What a retry costs that honours a 429/503 {@code Retry-After}, in thousandths of a token: half
   * of an ordinary retry. The server said when it can take the request, the retry comes no
   * earlier, and refusing such a request costs a rate limiter little; but a server that sends
   * {@code Retry-After} on every response still has its extra load bounded (twice the ordinary
   * retry rate). AWS's 2026 retry update charges throttling retries 5 tokens against 14.
   */
  public static final long RETRY_AFTER_COST_MILLI = 500;

  // ---- Pacing a crowd on one origin (OriginPacer) ----

  /** Until two retries were admitted back to back, turns go this many times the widest refused gap apart. */
  public static final double PACING_GROWTH = 1.25;

  /** Turns go this many times the narrowest admitted gap apart: one that passed may fail by a millisecond. */
  public static final double PACING_MARGIN = 1.1;

  /** An origin's pacing is forgotten after this long without a release or an outcome. */
  public static final long PACING_MEMORY_NANOS = TimeUnit.SECONDS.toNanos(30);

  /** The sliding window over which an origin's admissions of this client's calls are counted. */
  public static final long PACING_RATE_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * The pacing interval is at most this many mean gaps between the origin's recent admissions of
   * this client's calls, so a crowd is never paced much slower than the origin admits the client;
   * 2, so it does not undercut a learned interval that itself produced those admissions.
   */
  public static final double PACING_RATE_SLACK = 2.0;

  // ---- Published quotas (QuotaPacer, OriginGate) ----

  /**
   * Sends to an origin that has not answered this policy yet that go at once, uncounted; more wait
   * for its first answer, whose published quota may hold them (as {@code PROBE} holds all but one,
   * which costs a crowd on every fresh origin a round trip): TCP's initial window (RFC 6928).
   */
  public static final int FIRST_CONTACT_SENDS = 10;

  /**
   * The longest a call waits for that first answer (also within {@code maxRetryAfter} and half its
   * time left): a first answer later than this is a slow origin, not a quota to learn, and the
   * crowd should not pay for it twice.
   */
  public static final long FIRST_CONTACT_HOLD_NANOS = TimeUnit.SECONDS.toNanos(1);

  // ---- Per-origin state (OriginGate) ----

  /** The most origins one policy's {@link OriginGate} remembers, about 200 bytes each; then LRU. */
  public static final int MAX_ORIGINS = 1024;

  // ---- Hedging (HedgingPolicy#adaptive, OriginLatencies) ----

  /** The adaptive hedge delay's percentile when none is given: p90 of recent answers. */
  public static final double HEDGE_PERCENTILE = 0.9;

  /** The adaptive hedge delay's floor when none is given. */
  public static final long HEDGE_FLOOR_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** The adaptive delay is this many times the percentile; why: {@code HedgingPolicy.adaptive}. */
  public static final double HEDGE_MARGIN = 2.0;

  /** Answers an origin must have given before the adaptive delay hedges anything: its warm-up. */
  public static final int HEDGE_WARMUP_SAMPLES = 20;

  /** Recent answers kept per origin for the adaptive delay (a ring: the oldest is replaced). */
  public static final int HEDGE_WINDOW = 128;

  /**
   * How long after an origin refused a call (a 429 or 503, or a {@code Retry-After}) no call of
   * the factory hedges to it: hedging is for a healthy service with a tail, and an origin that
   * sheds load is not one. Ten seconds, a few times the usual {@code Retry-After}.
   */
  public static final long HEDGE_QUIET_AFTER_REFUSAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The percentile is recomputed (a sort of the window) once per this many new answers. */
  public static final int HEDGE_RECOMPUTE_EVERY = 8;
}
