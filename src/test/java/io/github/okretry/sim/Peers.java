package io.github.okretry.sim;

import io.github.okretry.HedgingPolicy;
import io.github.okretry.RetryBudget;
import io.github.okretry.RetryPolicy;
import io.github.okretry.SimulatedDriver;
import io.github.okretry.SimulatedDriver.Failure;
import io.github.okretry.internal.OriginStreaks;
import io.github.okretry.internal.TokenBalance;
import io.github.okretry.internal.Tuning;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * okretry and the peers' budgets the fleet simulator compares, each from its documented constants
 * (sources in {@code docs/fleet.md}). Every peer runs okretry's per-call code (the same backoff,
 * classification and {@code Retry-After} handling, {@code maxRetries} of the scenario) with an
 * unlimited budget, and vetoes attempts by its own budget's rules, so only the budget differs
 * between the rows of a table.
 */
public final class Peers {

  private Peers() {}

  /** okretry with its default budget, as a user gets it. */
  public static final Fleet.Contender OKRETRY = okretry("okretry (default)", null);

  /**
   * okretry with the strict rule for fleets of one-shot processes: {@code
   * retryBeforeFirstSuccess(false)}.
   */
  public static final Fleet.Contender OKRETRY_STRICT =
      okretry(
          "okretry, retryBeforeFirstSuccess(false)",
          () -> RetryBudget.builder().retryBeforeFirstSuccess(false).build());

  public static final Fleet.Contender UNBUDGETED = peer("unbudgeted, 3 retries", () -> null);
  public static final Fleet.Contender AWS_STANDARD =
      peer("AWS standard (500, cost 5/10)", () -> new Aws(500, 5, 10, 5));
  public static final Fleet.Contender AWS_2026 =
      peer("AWS 2026 (500, cost 14, throttling 5)", () -> new Aws(500, 14, 14, 5));
  public static final Fleet.Contender GRPC_A6 =
      peer("gRPC A6 (maxTokens 10, ratio 0.1)", () -> new GrpcThrottle(10, 0.1));
  public static final Fleet.Contender FINAGLE =
      peer("Finagle (20 % + 10/s, ttl 10 s)", () -> new Finagle(0.2, 10, 10));
  public static final Fleet.Contender SRE_ADAPTIVE =
      peer("SRE adaptive throttling (K = 2)", () -> new SreAdaptive(2.0, 120));

  public static final List<Fleet.Contender> PEERS =
      List.of(UNBUDGETED, AWS_STANDARD, AWS_2026, GRPC_A6, FINAGLE, SRE_ADAPTIVE);

  /** okretry with a budget of {@code numbers}, for candidates the public builder cannot make. */
  public static Fleet.Contender okretryOver(String name, BudgetNumbers numbers) {
    return okretry(name, numbers::budget);
  }

  /**
   * Every number of okretry's budget, the defaults from {@code Tuning}; {@code with…} copies one
   * changed, for the table of each number halved and doubled.
   */
  public record BudgetNumbers(
      long depositMilli,
      long maxTokensMilli,
      int reservePerSecond,
      long timeoutCostMilli,
      double commonShare,
      int shareWindow,
      int downAfterSchedules,
      long memoryNanos) {

    public static final BudgetNumbers DEFAULTS =
        new BudgetNumbers(
            Math.round(Tuning.PERCENT_CAN_RETRY * 1000),
            Tuning.MAX_TOKENS * 1000L,
            Tuning.MIN_RETRIES_PER_SECOND,
            Tuning.TIMEOUT_COST_MILLI,
            Tuning.COMMON_FAILURE_SHARE,
            Tuning.FAILURE_SHARE_WINDOW,
            Tuning.DOWN_AFTER_SCHEDULES,
            Tuning.ORIGIN_MEMORY_NANOS);

    RetryBudget budget() {
      return SimulatedDriver.budget(
          new TokenBalance(depositMilli, maxTokensMilli, maxTokensMilli, reservePerSecond),
          new OriginStreaks(Tuning.ORIGIN_SLOTS, memoryNanos, commonShare, shareWindow),
          downAfterSchedules,
          timeoutCostMilli);
    }

    public BudgetNumbers withDepositMilli(long v) {
      return new BudgetNumbers(
          v,
          maxTokensMilli,
          reservePerSecond,
          timeoutCostMilli,
          commonShare,
          shareWindow,
          downAfterSchedules,
          memoryNanos);
    }

    public BudgetNumbers withMaxTokensMilli(long v) {
      return new BudgetNumbers(
          depositMilli,
          v,
          reservePerSecond,
          timeoutCostMilli,
          commonShare,
          shareWindow,
          downAfterSchedules,
          memoryNanos);
    }

    public BudgetNumbers withReservePerSecond(int v) {
      return new BudgetNumbers(
          depositMilli,
          maxTokensMilli,
          v,
          timeoutCostMilli,
          commonShare,
          shareWindow,
          downAfterSchedules,
          memoryNanos);
    }

    public BudgetNumbers withTimeoutCostMilli(long v) {
      return new BudgetNumbers(
          depositMilli,
          maxTokensMilli,
          reservePerSecond,
          v,
          commonShare,
          shareWindow,
          downAfterSchedules,
          memoryNanos);
    }

    public BudgetNumbers withCommonShare(double v) {
      return new BudgetNumbers(
          depositMilli,
          maxTokensMilli,
          reservePerSecond,
          timeoutCostMilli,
          v,
          shareWindow,
          downAfterSchedules,
          memoryNanos);
    }

    public BudgetNumbers withShareWindow(int v) {
      return new BudgetNumbers(
          depositMilli,
          maxTokensMilli,
          reservePerSecond,
          timeoutCostMilli,
          commonShare,
          v,
          downAfterSchedules,
          memoryNanos);
    }

    public BudgetNumbers withDownAfterSchedules(int v) {
      return new BudgetNumbers(
          depositMilli,
          maxTokensMilli,
          reservePerSecond,
          timeoutCostMilli,
          commonShare,
          shareWindow,
          v,
          memoryNanos);
    }

    public BudgetNumbers withMemoryNanos(long v) {
      return new BudgetNumbers(
          depositMilli,
          maxTokensMilli,
          reservePerSecond,
          timeoutCostMilli,
          commonShare,
          shareWindow,
          downAfterSchedules,
          v);
    }
  }

  /** okretry with {@code budget} (null: the default budget). */
  public static Fleet.Contender okretry(String name, @Nullable Supplier<RetryBudget> budget) {
    return okretryWith(
        name,
        null,
        b -> {
          if (budget != null) b.retryBudget(budget.get());
        });
  }

  /**
   * okretry with the default budget, its calls hedged by {@code hedging} as a {@code
   * RetryingCallFactory} hedges.
   */
  public static Fleet.Contender okretryHedging(String name, HedgingPolicy hedging) {
    return okretryWith(name, hedging, b -> {});
  }

  /**
   * okretry hedged by {@code hedging} (null: not hedged), {@code configure} applied to its builder.
   */
  static Fleet.Contender okretryWith(
      String name,
      @Nullable HedgingPolicy hedging,
      java.util.function.Consumer<RetryPolicy.Builder> configure) {
    return new Fleet.Contender() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public SimulatedDriver driver(Fleet.Env env) {
        RetryPolicy.Builder b = RetryPolicy.builder().maxRetries(env.maxRetries());
        configure.accept(b);
        SplittableRandom r = env.random();
        return new SimulatedDriver(
            SimulatedDriver.seams(b, env.time(), env.clock(), r::nextLong).build(),
            hedging,
            Fleet.URL,
            null,
            env.retryAfterSeconds());
      }
    };
  }

  interface VetoFactory {
    SimulatedDriver.@Nullable Veto create();
  }

  static Fleet.Contender peer(String name, VetoFactory veto) {
    return new Fleet.Contender() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public SimulatedDriver driver(Fleet.Env env) {
        RetryPolicy.Builder b =
            RetryPolicy.builder().maxRetries(env.maxRetries()).retryBudget(RetryBudget.unlimited());
        SplittableRandom r = env.random();
        SimulatedDriver.Veto v = veto.create();
        if (v instanceof SreAdaptive s) s.random = r.split();
        return new SimulatedDriver(
            SimulatedDriver.seams(b, env.time(), env.clock(), r::nextLong).build(),
            Fleet.URL,
            v,
            env.retryAfterSeconds());
      }
    };
  }

  /**
   * The AWS SDKs' retry quota: a bucket of {@code capacity} tokens, full at the start; a retry
   * takes its cost (a timeout or a throttling error its own), refused if the bucket holds less; a
   * call that succeeds puts back what its retries took, or 1 if it took nothing.
   */
  static final class Aws implements SimulatedDriver.Veto {
    final int capacity;
    final int retryCost;
    final int timeoutCost;
    final int throttlingCost;
    int tokens;

    Aws(int capacity, int retryCost, int timeoutCost, int throttlingCost) {
      this.capacity = capacity;
      this.retryCost = retryCost;
      this.timeoutCost = timeoutCost;
      this.throttlingCost = throttlingCost;
      this.tokens = capacity;
    }

    @Override
    public boolean admit(long nowNanos, int attempt) {
      return true;
    }

    @Override
    public boolean allowRetry(long nowNanos, Failure failure) {
      int cost =
          failure == Failure.TIMEOUT
              ? timeoutCost
              : failure == Failure.THROTTLED ? throttlingCost : retryCost;
      if (tokens < cost) return false;
      tokens -= cost;
      return true;
    }

    @Override
    public void attemptEnded(
        long nowNanos, int attempt, boolean success, @Nullable Failure failure) {
      if (!success) return;
      // The SDKs refund what the call's last retry acquired, or 1 for a call never retried. The
      // veto does not see which call a success ends, so a retried success refunds the ordinary
      // retry cost: exact for every scenario here but the mixed ones.
      tokens = Math.min(capacity, tokens + (attempt == 1 ? 1 : retryCost));
    }
  }

  /**
   * gRPC retry throttling (gRFC A6): a token count per server, starting at {@code maxTokens}; every
   * failed attempt takes 1, every success adds {@code tokenRatio}; retries are refused while the
   * count is at or below half of {@code maxTokens}.
   */
  static final class GrpcThrottle implements SimulatedDriver.Veto {
    final double max;
    final double ratio;
    double tokens;

    GrpcThrottle(double max, double ratio) {
      this.max = max;
      this.ratio = ratio;
      this.tokens = max;
    }

    @Override
    public boolean admit(long nowNanos, int attempt) {
      return true;
    }

    @Override
    public void attemptEnded(
        long nowNanos, int attempt, boolean success, @Nullable Failure failure) {
      tokens = success ? Math.min(max, tokens + ratio) : Math.max(0, tokens - 1);
    }

    @Override
    public boolean allowRetry(long nowNanos, Failure failure) {
      return tokens > max / 2;
    }
  }

  /**
   * Finagle's {@code RetryBudget}: every call deposits, a retry withdraws {@code 1/percent}
   * deposits, deposits and withdrawals expire after {@code ttl}, and a reserve of {@code
   * minRetriesPerSec × ttl} retries is always there: retries in any {@code ttl} window stay within
   * {@code minRetriesPerSec × ttl + percent × calls}.
   */
  static final class Finagle implements SimulatedDriver.Veto {
    final double percent;
    final double reserve;
    final Window window; // 0: deposits, 1: withdrawals

    Finagle(double percent, int minRetriesPerSec, int ttlSeconds) {
      this.percent = percent;
      this.reserve = minRetriesPerSec * (double) ttlSeconds;
      this.window = new Window(ttlSeconds);
    }

    @Override
    public boolean admit(long nowNanos, int attempt) {
      if (attempt == 1) window.add(nowNanos, 0, percent);
      return true;
    }

    @Override
    public boolean allowRetry(long nowNanos, Failure failure) {
      if (reserve + window.sum(nowNanos, 0) - window.sum(nowNanos, 1) < 1) return false;
      window.add(nowNanos, 1, 1);
      return true;
    }

    @Override
    public void attemptEnded(
        long nowNanos, int attempt, boolean success, @Nullable Failure failure) {}
  }

  /**
   * Client-side adaptive throttling (Google SRE book, "Handling Overload"): over the last two
   * minutes, every attempt the application asks for is a request and every one the backend accepted
   * an accept; a new attempt is rejected locally with probability {@code max(0, (requests − K ×
   * accepts) / (requests + 1))}. Retries as unbudgeted otherwise.
   */
  static final class SreAdaptive implements SimulatedDriver.Veto {
    final double k;
    final Window window; // 0: requests, 1: accepts
    SplittableRandom random;

    SreAdaptive(double k, int windowSeconds) {
      this.k = k;
      this.window = new Window(windowSeconds);
    }

    @Override
    public boolean admit(long nowNanos, int attempt) {
      double requests = window.sum(nowNanos, 0);
      double p = Math.max(0, (requests - k * window.sum(nowNanos, 1)) / (requests + 1));
      window.add(nowNanos, 0, 1);
      return random.nextDouble() >= p;
    }

    @Override
    public boolean allowRetry(long nowNanos, Failure failure) {
      return true;
    }

    @Override
    public void attemptEnded(
        long nowNanos, int attempt, boolean success, @Nullable Failure failure) {
      if (success) window.add(nowNanos, 1, 1);
    }
  }

  /** Two counts per second over a sliding window of whole seconds. */
  static final class Window {
    final double[][] counts;
    final int seconds;
    long second = -1;

    Window(int seconds) {
      this.seconds = seconds;
      this.counts = new double[2][seconds];
    }

    private int roll(long nowNanos) {
      long s = nowNanos / Fleet.SECOND;
      if (second < 0) second = s;
      for (; second < s; second++) {
        int i = (int) ((second + 1) % seconds);
        counts[0][i] = 0;
        counts[1][i] = 0;
      }
      return (int) (second % seconds);
    }

    void add(long nowNanos, int which, double v) {
      counts[which][roll(nowNanos)] += v;
    }

    double sum(long nowNanos, int which) {
      roll(nowNanos);
      double sum = 0;
      for (double c : counts[which]) sum += c;
      return sum;
    }
  }
}
