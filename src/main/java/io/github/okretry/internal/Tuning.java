package io.github.okretry.internal;

import java.util.concurrent.TimeUnit;

/**
 * The numbers that decide how much load okretry lets through to a server when failures pile up: the
 * retry budget's (all of them), how the pacer of a crowd learns, how many origins the origin gate
 * remembers, and adaptive hedging's. They live here, together, so a reviewer finds them in one
 * place and a fleet simulator can build budgets and {@link OriginPacer}s with other values side by
 * side with these. The published-quota pacer's own few (its probe poll, default interval and slack)
 * stay in {@link QuotaPacer}, beside the draft's rules they serve. Why each value was chosen is in
 * {@code docs/semantics.md} ("Retry budget", "Pacing a crowd"); each budget number halved and
 * doubled is in {@code docs/fleet.md}.
 */
public final class Tuning {

  private Tuning() {}

  // ---- Retry budget (RetryBudget, TokenBalance, OriginStreaks) ----

  /** Tokens a logical call whose first attempt succeeds deposits, as Finagle and gRPC do. */
  public static final double PERCENT_CAN_RETRY = 0.2;

  /** The reserve: tokens per second, and its cap, independent of deposits (Finagle: 10). */
  public static final int MIN_RETRIES_PER_SECOND = 10;

  /**
   * The most tokens the balance holds. Finagle's; doubled, the metastable run's overload draws on a
   * bigger balance and recovers within 5 s on 17 of 20 seeds instead of 20 (docs/fleet.md, "Budget
   * numbers halved and doubled").
   */
  public static final int MAX_TOKENS = 100;

  /**
   * The fraction of {@link #MAX_TOKENS} a new budget starts with: full, as gRPC (A6), the AWS SDKs
   * and MongoDB's drivers start, and like Finagle's 100 retries at t = 0. A fresh client can ride
   * out a burst or a flaky start; a server that fails everything sees at most the starting balance
   * in extra attempts before the budget holds.
   */
  public static final double INITIAL_FILL = 1.0;

  /** What a retry after an error without a server-given wait costs, in thousandths of a token. */
  public static final long RETRY_COST_MILLI = 1000;

  /**
   * What a retry after a timeout costs while failures are common ({@link #COMMON_FAILURE_SHARE}),
   * in thousandths of a token: fourteen ordinary retries (as the AWS SDKs price a retry since
   * 2026), never from the reserve. A timeout among many failures is the sign of a server too slow
   * to answer, which may still be working on the request: the retries that turn an overload into an
   * outage that outlasts its cause follow timeouts. Chosen on the fleet simulator's frontier
   * (docs/fleet.md, "A retry after a timeout"): a knife edge, stated there; at 7 the metastable run
   * recovers within 5 s on 18 of 20 seeds (counted when calls start), at 14 and 28 on 20.
   */
  public static final long TIMEOUT_COST_MILLI = 14_000;

  /**
   * The share of recent answers, failures among them, at or above which failures are common ({@link
   * OriginStreaks#failuresAreCommon}), among its origin's answers: a retry after a timeout then
   * costs {@link #TIMEOUT_COST_MILLI} and none is paid back; below it (a lossy link) a retry after
   * a timeout costs as any other, and one that succeeds is free. A third: a lossy link at 20 %
   * stalls stays below it, an overload whose queue times out half the attempts does not
   * (docs/fleet.md, "A retry after a timeout"). A knife edge both ways, stated there: at a sixth
   * the lossy link gets 83 % of its calls through, at two thirds the metastable run recovers on 7
   * of 20 seeds.
   */
  public static final double COMMON_FAILURE_SHARE = 1.0 / 3;

  /**
   * The answers the failure share averages over, about: enough that a lossy link's noise stays
   * below a third. Halved or doubled, no row of the scorecard moves (docs/fleet.md).
   */
  public static final int FAILURE_SHARE_WINDOW = 64;

  /**
   * What a retry costs that honours a 429/503 {@code Retry-After}, in thousandths of a token: half
   * of an ordinary retry. The server said when it can take the request, the retry comes no earlier,
   * and refusing such a request costs a rate limiter little; but a server that sends {@code
   * Retry-After} on every response still has its extra load bounded (twice the ordinary retry
   * rate). AWS's 2026 retry update charges throttling retries 5 tokens against 14.
   */
  public static final long SERVER_WAIT_RETRY_COST_MILLI = 500;

  /**
   * A spent published quota's reset shorter than this is no reset (the backoff applies, and the
   * retry counts as one after an error): reset fields are whole seconds, floored, so 0 means
   * "within the second", and read as "now" they let a crowd retry at once, 4 requests a call.
   */
  public static final long MIN_QUOTA_RESET_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * A retry past its origin's count ends its call at once, instead of being skipped, once the
   * origin has failed everything for longer than this many of the call's retry schedules (its
   * backoff caps summed: 1.4 s by default, so 2.8 s). Two: a blip up to two schedules long is still
   * waited out as a client with no budget waits it out (the busy client's 2 s blip loses calls at
   * one schedule; docs/fleet.md, "Budget numbers halved and doubled"), and past it a dead origin's
   * calls fail in milliseconds rather than after their whole backoff, so a busy client's threads do
   * not sleep against a dead dependency.
   */
  public static final int DOWN_AFTER_SCHEDULES = 2;

  /**
   * A call whose last retry its budget skipped waits this share of its base delay more (50 ms by
   * default) before it ends, and goes if its origin answered meanwhile: a blip is over a moment
   * before an answer says so, and a busy client's next answer comes within it. A quarter: at half
   * or a whole base delay a held call saves more of a blip than a client with no budget, but the
   * crowd's calls through an overload end later, and the metastable run recovers (calls counted
   * when they end) on 16 of 20 seeds instead of 18 (docs/fleet.md, "Budget numbers halved and
   * doubled").
   */
  public static final double LAST_SKIP_GRACE = 0.25;

  /**
   * Origins a budget tells apart ({@link OriginStreaks}): a fixed table by hash, about 40 bytes a
   * slot in use, made at the first failure; origins beyond it share slots rather than push each
   * other out.
   */
  public static final int ORIGIN_SLOTS = 4096;

  /**
   * What a budget knows of an origin (its streak, its failure share) is forgotten this long after
   * its last failure: longer than the gaps between a quiet client's calls (a fleet of clients each
   * calling every 10 s keeps its streaks), short enough that an origin's old outage does not cost
   * calls made long after it.
   */
  public static final long ORIGIN_MEMORY_NANOS = TimeUnit.SECONDS.toNanos(30);

  // ---- Pacing a crowd on one origin (OriginPacer) ----

  /**
   * Until two retries were admitted back to back, turns go this many times the widest refused gap
   * apart.
   */
  public static final double PACING_GROWTH = 1.25;

  /**
   * Turns go this many times the narrowest admitted gap apart: one that passed may fail by a
   * millisecond.
   */
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

  // ---- Per-origin state (OriginGate) ----

  /** The most origins one policy's {@link OriginGate} remembers, about 200 bytes each; then LRU. */
  public static final int MAX_ORIGINS = 1024;

  /**
   * Origins whose shared (HTTP/2) connection failed, for which a policy keeps a route of their own
   * (FreshRoutes): a fixed table, made at the first such failure.
   */
  public static final int FRESH_ROUTE_SLOTS = 256;

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
   * How long after an origin refused a call (a 429 or 503, or a {@code Retry-After}) no call of the
   * factory hedges to it: hedging is for a healthy service with a tail, and an origin that sheds
   * load is not one. Ten seconds, a few times the usual {@code Retry-After}.
   */
  public static final long HEDGE_QUIET_AFTER_REFUSAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The percentile is recomputed (a sort of the window) once per this many new answers. */
  public static final int HEDGE_RECOMPUTE_EVERY = 8;
}
