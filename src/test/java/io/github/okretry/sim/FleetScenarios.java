package io.github.okretry.sim;

import io.github.okretry.HedgingPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Issue 20's scenarios on {@link Fleet}, each returning its numbers; shared by the short checks in
 * {@code FleetSimulationTest} and the full report ({@code FleetReport}, tagged soak) that writes
 * the tables and plots of {@code docs/fleet.md}.
 */
public final class FleetScenarios {

  private FleetScenarios() {}

  public static final double[] FAILURE_RATES = {0, 0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 1.0};
  public static final int[] CLIENT_COUNTS = {10, 100, 1000};

  /** One cell of the failure sweep. */
  public record SweepRow(
      double failureRate, int clients, String contender, double success, double amplification) {}

  /**
   * Brooker's failure sweep: {@code clients} sharing a total of {@code totalPerSecond} calls/s
   * (Poisson) for {@code seconds}, an unbounded server failing each attempt independently.
   */
  public static List<SweepRow> sweep(
      List<Fleet.Contender> contenders, double totalPerSecond, double seconds, long seed) {
    List<SweepRow> rows = new ArrayList<>();
    for (double rate : FAILURE_RATES) {
      for (int clients : CLIENT_COUNTS) {
        for (Fleet.Contender c : contenders) {
          Fleet.Result r =
              new Fleet(
                      new Fleet.Service().failing(rate, -1),
                      Fleet.Load.of(clients, totalPerSecond / clients, seconds),
                      seed)
                  .run(c);
          rows.add(new SweepRow(rate, clients, c.name(), r.successRate(), r.amplification()));
        }
      }
    }
    return rows;
  }

  /**
   * The quiet fleet: {@code clients} each calling evenly every {@code 1/perSecond} s, server
   * failing everything.
   */
  public static Fleet.Result quietFleet(
      Fleet.Contender c, int clients, double perSecond, double seconds, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1),
            Fleet.Load.of(clients, perSecond, seconds).evenlySpaced(),
            seed)
        .run(c);
  }

  /** The quiet fleet against a server that works until {@code diesAt} s, then fails everything. */
  public static Fleet.Result quietFleetServerDies(
      Fleet.Contender c, int clients, double perSecond, double seconds, double diesAt, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1).failingFrom(diesAt),
            Fleet.Load.of(clients, perSecond, seconds).evenlySpaced(),
            seed)
        .run(c);
  }

  /**
   * The quiet fleet against a server answering {@code 503 Retry-After: retryAfter} to everything.
   */
  public static Fleet.Result quietFleetRetryAfter(
      Fleet.Contender c, int clients, double perSecond, double seconds, int retryAfter, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, retryAfter),
            Fleet.Load.of(clients, perSecond, seconds).evenlySpaced(),
            seed)
        .run(c);
  }

  /**
   * The warm fleet: the quiet fleet whose server dies at {@code diesAt} s: attempts per call over
   * the calls started while it is down.
   */
  public static double warmFleetWhileDown(
      Fleet.Contender c, int clients, double perSecond, double seconds, int diesAt, long seed) {
    return quietFleetServerDies(c, clients, perSecond, seconds, diesAt, seed)
        .amplification(diesAt, (int) seconds);
  }

  /**
   * One busy client, 100 calls/s for 60 s, against a healthy server on which a share {@code rate}
   * of attempts (independently) take 2 s, past the 1 s attempt timeout.
   */
  public static Fleet.Result flakyTimeouts(Fleet.Contender c, double rate) {
    return new Fleet(
            new Fleet.Service().service(0.01, true).slow(rate, 2.0),
            Fleet.Load.of(1, 100, 60).timeout(1),
            1)
        .run(c);
  }

  // ---- Failures that come together, lossy links, clients of two origins (issue 35) ----

  /**
   * A busy client through a blip: one process, {@code perSecond} calls/s (Poisson), every attempt
   * failing from 2 s for {@code blipSeconds} (a 503 at once, or, {@code refused}, a refused
   * connection: a restarting server), healthy before and for 3 s after.
   */
  public static Fleet.Result blip(
      Fleet.Contender c, double perSecond, double blipSeconds, boolean refused, long seed) {
    Fleet.Service s =
        refused
            ? new Fleet.Service().down(0, 2, 2 + blipSeconds)
            : new Fleet.Service().failing(1.0, -1).failingBetween(2, 2 + blipSeconds);
    return new Fleet(s, Fleet.Load.of(1, perSecond, 5 + blipSeconds), seed).run(c);
  }

  /**
   * A lossy link: one process on a healthy server (5 ms answers) whose attempts stall at random
   * with probability {@code stallRate} (2 s, past the 300 ms read timeout); {@code perSecond}
   * calls/s (Poisson) for 60 s, or, with {@code perSecond} 0, 300 calls one after another.
   */
  public static Fleet.Result lossyLink(
      Fleet.Contender c, double stallRate, double perSecond, long seed) {
    Fleet.Service s = new Fleet.Service().service(0.005, true).slow(stallRate, 2.0);
    Fleet.Load load =
        perSecond == 0
            ? Fleet.Load.of(1, 100, 1e6).oneAfterAnother(300)
            : Fleet.Load.of(1, perSecond, 60);
    return new Fleet(s, load.timeout(0.3), seed).run(c);
  }

  /**
   * A client of two origins: one process, {@code perSecond} calls/s (Poisson) for 40 s, every other
   * call to a dead origin (503 to everything), the rest to a healthy one that fails 10 % of
   * attempts at random ({@link Fleet.Service#otherOrigin}).
   */
  public static Fleet.Result deadBesideHealthy(Fleet.Contender c, double perSecond, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1).otherOrigin(0.1),
            Fleet.Load.of(1, perSecond, 40),
            seed)
        .run(c);
  }

  /**
   * A dead path beside a live one on the same origin: one process, {@code perSecond} calls/s for 40
   * s, every other call to a path that answers 503 to everything, the rest to one that works.
   */
  public static Fleet.Result deadPathBesideLive(Fleet.Contender c, double perSecond, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1).livePath(0), Fleet.Load.of(1, perSecond, 40), seed)
        .run(c);
  }

  /**
   * Many dead origins in turn: one process, {@code perSecond} calls/s for {@code seconds}, each to
   * the next of {@code origins} origins that answer 503 to everything.
   */
  public static Fleet.Result manyDeadOrigins(
      Fleet.Contender c, int origins, double perSecond, double seconds, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1).manyOrigins(origins),
            Fleet.Load.of(1, perSecond, seconds).evenlySpaced(),
            seed)
        .run(c);
  }

  /**
   * A lossy link beside a dead host: {@link #lossyLink}'s origin at {@code perSecond} (20 % of
   * attempts stall past the 300 ms timeout), every other call to another origin that answers 503 to
   * everything (an analytics host down).
   */
  public static Fleet.Result lossyBesideDead(Fleet.Contender c, double perSecond, long seed) {
    return new Fleet(
            new Fleet.Service().service(0.005, false).slow(0.2, 2).otherOrigin(1.0),
            Fleet.Load.of(1, 2 * perSecond, 60).timeout(0.3),
            seed)
        .run(c);
  }

  /** The capacity cut with every other call to a healthy origin beside it. */
  public static Fleet.Result capacityCutBesideHealthy(Fleet.Contender c, long seed) {
    Fleet.Service s =
        new Fleet.Service().servers(1, 20, 100).service(0.1, true).cut(0.2, 10, 20).otherOrigin(0);
    return new Fleet(s, Fleet.Load.of(10, 28, 60).timeout(3), seed).run(c);
  }

  /**
   * An origin that stalls: one process, 20 calls/s for 20 s, every attempt taking 5 s against a 1 s
   * timeout.
   */
  public static Fleet.Result stalling(Fleet.Contender c, long seed) {
    return new Fleet(new Fleet.Service().slow(1.0, 5), Fleet.Load.of(1, 20, 20).timeout(1), seed)
        .run(c);
  }

  /** The same with every other call to a path of the dead origin that OkHttp's cache answers. */
  public static Fleet.Result deadBesideCached(Fleet.Contender c, double perSecond, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1).cachedPath(),
            Fleet.Load.of(1, perSecond, 40),
            seed)
        .run(c);
  }

  /**
   * A busy client, {@code perSecond} calls/s (Poisson), whose server is dead from 2 s to 12 s of
   * 14.
   */
  public static Fleet.Result busyThroughOutage(Fleet.Contender c, double perSecond, long seed) {
    return new Fleet(
            new Fleet.Service().failing(1.0, -1).failingBetween(2, 12),
            Fleet.Load.of(1, perSecond, 14),
            seed)
        .run(c);
  }

  /** {@link #coldStart} over seeds 1..{@code seeds}: {mean, min} successes of the 50 calls. */
  public static double[] coldStartOverSeeds(Fleet.Contender c, int seeds) {
    double mean = 0;
    long min = 50;
    for (long seed = 1; seed <= seeds; seed++) {
      long ok = coldStart(c, seed);
      mean += ok / (double) seeds;
      min = Math.min(min, ok);
    }
    return new double[] {mean, min};
  }

  /**
   * Cold start one after another: one fresh client, 50 calls in sequence, 50 % independent failure,
   * maxRetries(14): successes.
   */
  public static long coldStartSequential(Fleet.Contender c, long seed) {
    Fleet.Result r =
        new Fleet(
                new Fleet.Service().failing(0.5, -1),
                Fleet.Load.of(1, 100, 1e6).oneAfterAnother(50).maxRetries(14),
                seed)
            .run(c);
    if (r.calls != 50) throw new AssertionError("sequential cold start made " + r.calls + " calls");
    return r.succeeded;
  }

  /**
   * Cold start: one fresh client, 100 calls/s, 50 % independent failure, maxRetries(14): successes
   * of its first 50 calls.
   */
  public static long coldStart(Fleet.Contender c, long seed) {
    Fleet.Result r =
        new Fleet(
                new Fleet.Service().failing(0.5, -1),
                Fleet.Load.of(1, 100, 0.5).evenlySpaced().maxRetries(14),
                seed)
            .run(c);
    if (r.calls != 50) throw new AssertionError("cold start made " + r.calls + " calls");
    return r.succeeded;
  }

  /**
   * One busy client: 200 calls/s for 10 s against a server failing everything (with {@code
   * Retry-After: retryAfter} if ≥ 0): server attempts per call from the second second on, once the
   * starting balance is spent, as CrowdTest measures it.
   */
  public static double busyClientSustained(Fleet.Contender c, int retryAfter, long seed) {
    Fleet.Result r =
        new Fleet(
                new Fleet.Service().failing(1.0, retryAfter),
                Fleet.Load.of(1, 200, 10).evenlySpaced(),
                seed)
            .run(c);
    long attempts = 0;
    long calls = 0;
    for (int s = 1; s < 10; s++) {
      attempts += r.attemptsByCallStart[s];
      calls += r.offered[s];
    }
    return attempts / (double) calls;
  }

  /**
   * Brooker's metastable-retry shape: 10 clients, 70 calls/s in all (Poisson), 2 servers each
   * working 5 at a time (exponential service, mean 0.1 s), a queue of 100 each, 1 s attempt
   * timeout; server 0 refuses connections from 5 s to 15 s; 60 s.
   */
  public static Fleet.Result metastable(Fleet.Contender c, long seed) {
    Fleet.Service s = new Fleet.Service().servers(2, 5, 100).service(0.1, true).down(0, 5, 15);
    return new Fleet(s, Fleet.Load.of(10, 7, 60).timeout(1), seed).run(c);
  }

  /**
   * The metastable run over seeds 1..{@code seeds}: how many came back to ≥ 95 % within 5 s of the
   * server's return, {calls counted when they start, when they end}.
   */
  public static int[] metastableBackWithinFiveSeconds(Fleet.Contender c, int seeds) {
    int byStart = 0;
    int byEnd = 0;
    for (long seed = 1; seed <= seeds; seed++) {
      Fleet.Result m = metastable(c, seed);
      int r = recoverySecondsByStart(m, 15, 58);
      if (r >= 0 && r <= 5) byStart++;
      r = recoverySeconds(m, 15, 58);
      if (r >= 0 && r <= 5) byEnd++;
    }
    return new int[] {byStart, byEnd};
  }

  /**
   * Capacity cut: 10 clients, 140 calls/s in all, one server working 20 at a time (mean 0.1 s:
   * 200/s), a queue of 100; from 10 s to 20 s it works 4 at a time (20 %); 3 s attempt timeout; 60
   * s.
   */
  public static Fleet.Result capacityCut(Fleet.Contender c, long seed) {
    Fleet.Service s = new Fleet.Service().servers(1, 20, 100).service(0.1, true).cut(0.2, 10, 20);
    return new Fleet(s, Fleet.Load.of(10, 14, 60).timeout(3), seed).run(c);
  }

  /**
   * The capacity cut, {@code seconds} long (the cut still 10 s to 20 s): for the short guard of
   * hedging in {@code FleetSimulationTest}.
   */
  public static Fleet.Result capacityCut(Fleet.Contender c, double seconds, long seed) {
    return capacityCut(c, 14, seconds, seed);
  }

  /**
   * The capacity cut with {@code perClient} calls/s from each of its 10 processes (14: the
   * scenario's 140/s).
   */
  public static Fleet.Result capacityCut(
      Fleet.Contender c, double perClient, double seconds, long seed) {
    Fleet.Service s = new Fleet.Service().servers(1, 20, 100).service(0.1, true).cut(0.2, 10, 20);
    return new Fleet(s, Fleet.Load.of(10, perClient, seconds).timeout(3), seed).run(c);
  }

  /**
   * A healthy service with a tail: the capacity cut's fleet and server, no cut, service mean 0.05
   * s, and 5 % of attempts (independently) taking 1 s; {@code seconds} long.
   */
  public static Fleet.Result healthyTail(Fleet.Contender c, double seconds, long seed) {
    Fleet.Service s = new Fleet.Service().servers(1, 20, 100).service(0.05, true).slow(0.05, 1.0);
    return new Fleet(s, Fleet.Load.of(10, 14, seconds).timeout(3), seed).run(c);
  }

  /**
   * The fixed hedge delay of the hedging rows: about the capacity cut's p95 before the cut (0.30
   * s).
   */
  public static final long HEDGE_AFTER_MILLIS = 300;

  /** The hedging rows: okretry's default, with a fixed hedge delay, with the adaptive one. */
  public static final List<Fleet.Contender> HEDGING =
      List.of(
          Peers.OKRETRY,
          Peers.okretryHedging(
              "okretry + HedgingPolicy.after(" + HEDGE_AFTER_MILLIS + " ms)",
              HedgingPolicy.after(HEDGE_AFTER_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS)),
          Peers.okretryHedging("okretry + HedgingPolicy.adaptive()", HedgingPolicy.adaptive()));

  /**
   * Seconds after {@code fromSecond} until goodput is back at ≥ 95 % of the offered load for good:
   * the start of the first 5-second window from which every later window up to {@code lastSecond}
   * passes (windows, since a call is offered in the second it starts and counted in the one it
   * ends); -1 if none does.
   */
  public static int recoverySeconds(Fleet.Result r, int fromSecond, int lastSecond) {
    return recoverySeconds(r, fromSecond, lastSecond, r.goodput);
  }

  /**
   * {@link #recoverySeconds}, counting each call that succeeded in the second it started: the share
   * of calls that succeed, free of the calls in flight across a window's edges, which make the
   * goodput of a healthy 70/s service dip below 95 % of a window's offered load now and then (seeds
   * 3 and 6 of the metastable run, with no call failing).
   */
  public static int recoverySecondsByStart(Fleet.Result r, int fromSecond, int lastSecond) {
    return recoverySeconds(r, fromSecond, lastSecond, r.succeededByStart);
  }

  private static int recoverySeconds(
      Fleet.Result r, int fromSecond, int lastSecond, long[] goodput) {
    int back = -1;
    for (int s = lastSecond - 5; s >= fromSecond; s--) {
      long offered = 0;
      long good = 0;
      for (int i = s; i < s + 5; i++) {
        offered += r.offered[i];
        good += goodput[i];
      }
      if (good < 0.95 * offered) break;
      back = s;
    }
    return back < 0 ? -1 : back - fromSecond;
  }

  /**
   * One row of the published-quota scenario: {@code seeds} runs, each a fresh crowd and window
   * phase.
   */
  public record QuotaRow(
      String name,
      int clients,
      int callsEach,
      io.github.okretry.QuotaPacing pacing,
      double allThrough,
      double meanAttemptsPerCall,
      double worstAttemptsPerCall,
      double meanMakespan,
      double worstMakespan) {}

  /**
   * Issue 20's published quota: {@code clients} × {@code callsEach} calls at once against a 20/s
   * limiter publishing the IETF fields ({@link QuotaFleet}), over seeds 1..{@code seeds}.
   */
  public static QuotaRow publishedQuota(
      int clients, int callsEach, io.github.okretry.QuotaPacing pacing, int seeds) {
    int through = 0;
    double attempts = 0;
    double worstAttempts = 0;
    double makespan = 0;
    double worstMakespan = 0;
    for (long seed = 1; seed <= seeds; seed++) {
      QuotaFleet.Result r = new QuotaFleet(clients, callsEach, 20, seed).run(pacing);
      if (r.succeeded() == r.calls()) through++;
      attempts += r.attemptsPerCall() / seeds;
      worstAttempts = Math.max(worstAttempts, r.attemptsPerCall());
      makespan += r.makespanSeconds() / seeds;
      worstMakespan = Math.max(worstMakespan, r.makespanSeconds());
    }
    return new QuotaRow(
        clients + " × " + callsEach,
        clients,
        callsEach,
        pacing,
        through / (double) seeds,
        attempts,
        worstAttempts,
        makespan,
        worstMakespan);
  }

  static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
