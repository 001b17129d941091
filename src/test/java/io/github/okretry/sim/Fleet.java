package io.github.okretry.sim;

import io.github.okretry.SimulatedDriver;
import io.github.okretry.SimulatedDriver.Failure;
import io.github.okretry.SimulatedDriver.Next;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.WallClock;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;

/**
 * A fleet of client processes calling one service, as a deterministic discrete-event simulation on
 * fake time. Each client is one okretry policy (its own budget and origin table, as separate
 * processes have), driven through {@link SimulatedDriver}, so every retry decision is okretry's
 * real code; a peer runs the same code with an unlimited budget and its own budget as a veto.
 *
 * <p>The service: {@code servers} behind a uniform random balancer, each working on at most {@code
 * concurrency} requests at once (service time exponential or fixed), a FIFO queue of at most {@code
 * queueLimit} more (beyond it: 503 at once), an independent failure rate (a 503 after service, with
 * {@code Retry-After} if set), one server down for a while (a refused connection at once), or its
 * capacity cut for a while. A client gives up on an attempt after {@code attemptTimeout} (a read
 * timeout, retryable); the server still does the work, as a server that cannot see the client leave
 * does. A share of attempts may be slow ({@code slow}: a tail).
 *
 * <p>A client that hedges (a {@code HedgingPolicy}) is driven as the async driver drives it: after
 * each attempt sent, the delay okretry's SEND carries arms a hedge timer (an event), at which
 * okretry's {@code next} may answer a second attempt; an outcome okretry drops leaves the call to
 * the other attempt, and the first outcome it does not drop cancels the attempts still in flight
 * (the client leaves; the server still does their work, as on a timeout). Everything is a function
 * of the seed.
 */
public final class Fleet {

  static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  static final String URL = "http://service.test/";

  /** Another origin, healthy but for its own random failures ({@link Service#otherOrigin}). */
  static final String OTHER_URL = "http://other.test/";

  /**
   * Another path of the service's origin, answered from OkHttp's cache ({@link
   * Service#cachedPath}).
   */
  static final String CACHED_URL = "http://service.test/cached";

  /**
   * Another path of the service's origin, served by a server of its own ({@link Service#livePath}).
   */
  static final String LIVE_PATH_URL = "http://service.test/live";

  /** The service and what goes wrong with it. */
  public static final class Service {
    int servers = 1;
    int concurrency = 1_000_000;
    int queueLimit = Integer.MAX_VALUE;
    double meanServiceSeconds = 0.01;
    boolean exponential = true;
    double failureRate;
    long failingFromNanos;
    long failingUntilNanos = Long.MAX_VALUE;

    /**
     * Every other call of each client goes elsewhere: 0 nowhere, 1 {@link #OTHER_URL}, 2 {@link
     * #CACHED_URL}.
     */
    int besides;

    int origins; // 0: one origin, URL

    double otherFailureRate;
    int retryAfterSeconds = -1;
    int downServer = -1;
    long downFromNanos;
    long downUntilNanos;
    double cutTo = 1.0;
    long cutFromNanos;
    long cutUntilNanos;
    double slowFraction;
    double slowSeconds;

    public Service servers(int n, int concurrency, int queueLimit) {
      this.servers = n;
      this.concurrency = concurrency;
      this.queueLimit = queueLimit;
      return this;
    }

    public Service service(double meanSeconds, boolean exponential) {
      this.meanServiceSeconds = meanSeconds;
      this.exponential = exponential;
      return this;
    }

    public Service failing(double rate, int retryAfterSeconds) {
      this.failureRate = rate;
      this.retryAfterSeconds = retryAfterSeconds;
      return this;
    }

    /** The failure rate applies from {@code seconds} on; before, every attempt succeeds. */
    public Service failingFrom(double seconds) {
      this.failingFromNanos = nanos(seconds);
      return this;
    }

    /**
     * The failure rate applies from {@code fromSeconds} until {@code untilSeconds} only: a blip, or
     * an outage that ends.
     */
    public Service failingBetween(double fromSeconds, double untilSeconds) {
      this.failingFromNanos = nanos(fromSeconds);
      this.failingUntilNanos = nanos(untilSeconds);
      return this;
    }

    /**
     * Every other call of each client (its 2nd, 4th, …) goes to another origin, {@link #OTHER_URL},
     * which answers at once (its own unbounded server) and fails attempts independently at {@code
     * failureRate}: a client of two origins, one of which may die while the other works.
     */
    public Service otherOrigin(double failureRate) {
      this.besides = 1;
      this.otherFailureRate = failureRate;
      return this;
    }

    /**
     * Every other call of each client goes to another path of the same origin, {@link
     * #LIVE_PATH_URL}, served as {@link #otherOrigin} serves: a dead path beside a live one.
     */
    public Service livePath(double failureRate) {
      this.besides = 3;
      this.otherFailureRate = failureRate;
      return this;
    }

    /**
     * Each client's calls go to {@code origins} origins in turn (a webhook sender, a crawler), all
     * served by the service.
     */
    public Service manyOrigins(int origins) {
      this.origins = origins;
      return this;
    }

    /**
     * Every other call of each client goes to a path of the same origin that OkHttp's cache
     * answers: no request.
     */
    public Service cachedPath() {
      this.besides = 2;
      return this;
    }

    public Service down(int server, double fromSeconds, double untilSeconds) {
      this.downServer = server;
      this.downFromNanos = nanos(fromSeconds);
      this.downUntilNanos = nanos(untilSeconds);
      return this;
    }

    public Service cut(double to, double fromSeconds, double untilSeconds) {
      this.cutTo = to;
      this.cutFromNanos = nanos(fromSeconds);
      this.cutUntilNanos = nanos(untilSeconds);
      return this;
    }

    /**
     * A share {@code fraction} of attempts (independently, the same for every contender) takes
     * {@code seconds} of service.
     */
    public Service slow(double fraction, double seconds) {
      this.slowFraction = fraction;
      this.slowSeconds = seconds;
      return this;
    }

    int capacity(long t) {
      return t >= cutFromNanos && t < cutUntilNanos
          ? (int) Math.max(1, Math.floor(concurrency * cutTo))
          : concurrency;
    }
  }

  /** Who calls, how often, for how long. */
  public record Load(
      int clients,
      double callsPerSecondEach,
      boolean periodic,
      double seconds,
      double attemptTimeoutSeconds,
      int maxRetries,
      int sequentialCalls) {
    public static Load of(int clients, double callsPerSecondEach, double seconds) {
      return new Load(clients, callsPerSecondEach, false, seconds, 0, 3, 0);
    }

    public Load evenlySpaced() {
      return new Load(
          clients,
          callsPerSecondEach,
          true,
          seconds,
          attemptTimeoutSeconds,
          maxRetries,
          sequentialCalls);
    }

    public Load timeout(double s) {
      return new Load(
          clients, callsPerSecondEach, periodic, seconds, s, maxRetries, sequentialCalls);
    }

    public Load maxRetries(int n) {
      return new Load(
          clients,
          callsPerSecondEach,
          periodic,
          seconds,
          attemptTimeoutSeconds,
          n,
          sequentialCalls);
    }

    /**
     * Each client makes {@code calls} calls one after another, the next as the last ends (the rate
     * then only sets the first's phase).
     */
    public Load oneAfterAnother(int calls) {
      return new Load(
          clients, callsPerSecondEach, periodic, seconds, attemptTimeoutSeconds, maxRetries, calls);
    }
  }

  /** What ran: totals and per-second series (by the second a call started or ended). */
  public static final class Result {
    public final String contender;
    public long calls;
    public long succeeded;
    public long serverAttempts;

    /**
     * Of the above, the calls, successes and attempts that went to {@link Service#otherOrigin} or
     * {@link Service#cachedPath}.
     */
    public long besideCalls;

    public long besideSucceeded;
    public long besideAttempts;
    public long shedLocally;
    public long budgetRefusals;

    /** Hedges sent (counted in {@link #serverAttempts} too). */
    public long hedges;

    public final long[] offered;
    public final long[] goodput;

    /** Calls that succeeded, by the second they started in (as {@link #offered} counts them). */
    public final long[] succeededByStart;

    public final long[] attempts;

    /** Server attempts by the second their call started in (CrowdTest's measure). */
    public final long[] attemptsByCallStart;

    /** Attempts that timed out, and that were refused at once, by the second they ended in. */
    public final long[] timeouts;

    public final long[] refusals;
    public long events;

    /** Calls that failed, by why they gave up and the second they started in. */
    public final java.util.Map<io.github.okretry.GiveUpReason, long[]> failedBy =
        new java.util.EnumMap<>(io.github.okretry.GiveUpReason.class);

    /** Each finished call's latency (start to end, success or not) and the second it started in. */
    private long[] latencyNanos = new long[1024];

    private int[] latencyStart = new int[1024];
    private int latencies;

    Result(String contender, int seconds) {
      this.contender = contender;
      this.offered = new long[seconds + 1];
      this.goodput = new long[seconds + 1];
      this.succeededByStart = new long[seconds + 1];
      this.attempts = new long[seconds + 1];
      this.attemptsByCallStart = new long[seconds + 1];
      this.timeouts = new long[seconds + 1];
      this.refusals = new long[seconds + 1];
    }

    public double successRate() {
      return calls == 0 ? 0 : succeeded / (double) calls;
    }

    void latency(int startSecond, long nanos) {
      if (latencies == latencyNanos.length) {
        latencyNanos = java.util.Arrays.copyOf(latencyNanos, 2 * latencies);
        latencyStart = java.util.Arrays.copyOf(latencyStart, 2 * latencies);
      }
      latencyStart[latencies] = startSecond;
      latencyNanos[latencies++] = nanos;
    }

    /**
     * The {@code p} quantile (nearest rank) of the latency in seconds of calls started in [{@code
     * from}, {@code until}) s; 0 if none.
     */
    public double latencySeconds(double p, int from, int until) {
      long[] xs = new long[latencies];
      int n = 0;
      for (int i = 0; i < latencies; i++) {
        if (latencyStart[i] >= from && latencyStart[i] < until) {
          xs[n++] = latencyNanos[i];
        }
      }
      if (n == 0) return 0;
      java.util.Arrays.sort(xs, 0, n);
      return xs[Math.min(n - 1, (int) Math.ceil(p * n) - 1)] / 1e9;
    }

    /**
     * Attempts ÷ logical calls of the service's own calls, without those that went {@linkplain
     * Service#otherOrigin elsewhere}.
     */
    public double serviceAmplification() {
      return calls == besideCalls
          ? 0
          : (serverAttempts - besideAttempts) / (double) (calls - besideCalls);
    }

    /** Calls that failed ({@link #calls} − {@link #succeeded}). */
    public long failed() {
      return calls - succeeded;
    }

    /** Server attempts ÷ logical calls. */
    public double amplification() {
      return calls == 0 ? 0 : serverAttempts / (double) calls;
    }

    /**
     * Server attempts ÷ logical calls, over the calls started in [{@code from}, {@code until}) s
     * only.
     */
    public double amplification(int from, int until) {
      long a = 0;
      long c = 0;
      for (int s = from; s < until; s++) {
        a += attemptsByCallStart[s];
        c += offered[s];
      }
      return c == 0 ? 0 : a / (double) c;
    }
  }

  /** A client's policy: one per simulated process. */
  public interface Contender {
    String name();

    SimulatedDriver driver(Env env);
  }

  /** What a contender builds its client from. */
  public record Env(
      TimeSource time,
      WallClock clock,
      SplittableRandom random,
      int maxRetries,
      int retryAfterSeconds) {}

  /** Fake monotonic time: moved by the event loop only. */
  static final class Clock implements TimeSource {
    long now;

    @Override
    public long nanoTime() {
      return now;
    }

    @Override
    public void sleep(long nanos, Call call) {
      throw new UnsupportedOperationException("the simulator never sleeps");
    }
  }

  private static final int ARRIVE = 0;
  private static final int STEP = 1;
  private static final int SERVED = 2;
  private static final int TIMEOUT = 3;
  private static final int CAPACITY = 4;
  private static final int HEDGE = 5;

  private static final class Event implements Comparable<Event> {
    final long t;
    final long seq;
    final int kind;
    final int client;
    final CallState call;
    final Attempt attempt;
    final int round; // a hedge timer's: stale once its round is over

    Event(long t, long seq, int kind, int client, CallState call, Attempt attempt, int round) {
      this.t = t;
      this.seq = seq;
      this.kind = kind;
      this.client = client;
      this.call = call;
      this.attempt = attempt;
      this.round = round;
    }

    @Override
    public int compareTo(Event o) {
      return t != o.t ? Long.compare(t, o.t) : Long.compare(seq, o.seq);
    }
  }

  private static final class CallState {
    final SimulatedDriver.Call call;
    final int client;
    final long number; // the client's n-th call
    final int startSecond;
    final long startNanos;

    /**
     * Attempts in flight (more than one only with hedges), and the round a hedge timer belongs to,
     * as AsyncLoop counts them.
     */
    final ArrayList<Attempt> flying = new ArrayList<>(2);

    int round;
    final boolean beside; // it went to the other origin or the cached path

    CallState(
        SimulatedDriver.Call call,
        int client,
        long number,
        int startSecond,
        long startNanos,
        boolean beside) {
      this.beside = beside;
      this.call = call;
      this.client = client;
      this.number = number;
      this.startSecond = startSecond;
      this.startNanos = startNanos;
    }
  }

  private static final class Attempt {
    final CallState call;
    final SimulatedDriver.Sent sent;
    final int server;
    final int number;
    boolean over; // answered, timed out or canceled: whatever comes later is ignored

    Attempt(CallState call, SimulatedDriver.Sent sent, int server) {
      this.call = call;
      this.sent = sent;
      this.server = server;
      this.number = sent.number();
    }
  }

  /** A timeout without the cost of a stack trace: the simulator makes millions. */
  static final class Timeout extends SocketTimeoutException {
    Timeout() {
      super("timeout");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  static final class Refused extends ConnectException {
    Refused() {
      super("Connection refused");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  private final Service service;
  private final Load load;
  private final long seed;
  private final Clock clock = new Clock();
  private final PriorityQueue<Event> events = new PriorityQueue<>();
  private long seq;
  private final SplittableRandom serverRandom;
  private final int[] busy;
  private final ArrayDeque<Attempt>[] queues;
  private final long endNanos;
  private Result result;
  private SimulatedDriver[] drivers;
  private SplittableRandom[] arrivals;
  private long[] callNumbers;

  @SuppressWarnings("unchecked")
  public Fleet(Service service, Load load, long seed) {
    this.service = service;
    this.load = load;
    this.seed = seed;
    this.serverRandom = new SplittableRandom(seed ^ 0x5E12E1L);
    this.busy = new int[service.servers];
    this.queues = new ArrayDeque[service.servers];
    for (int i = 0; i < service.servers; i++) queues[i] = new ArrayDeque<>();
    this.endNanos = nanos(load.seconds());
  }

  static long nanos(double seconds) {
    return Math.round(seconds * SECOND);
  }

  /** Runs {@code contender} through the whole load; a Fleet runs once. */
  public Result run(Contender contender) {
    result = new Result(contender.name(), (int) Math.ceil(load.seconds()) + 120);
    drivers = new SimulatedDriver[load.clients()];
    arrivals = new SplittableRandom[load.clients()];
    callNumbers = new long[load.clients()];
    WallClock wall = () -> 1_700_000_000_000L + clock.now / 1_000_000L;
    for (int c = 0; c < load.clients(); c++) {
      SplittableRandom r = new SplittableRandom(mix(seed, c, -1, -1));
      drivers[c] =
          contender.driver(
              new Env(clock, wall, r.split(), load.maxRetries(), service.retryAfterSeconds));
      arrivals[c] = r;
      // Periodic clients start at a random phase; Poisson ones at their first draw.
      double gap = 1.0 / load.callsPerSecondEach();
      long first =
          load.periodic()
              ? (long) (r.nextDouble() * gap * SECOND)
              : (long) (-Math.log(1 - r.nextDouble()) * gap * SECOND);
      push(first, ARRIVE, c, null, null, 0);
    }
    if (service.cutUntilNanos > 0) push(service.cutUntilNanos, CAPACITY, -1, null, null, 0);
    if (service.downUntilNanos > 0) push(service.downUntilNanos, CAPACITY, -1, null, null, 0);
    while (!events.isEmpty()) {
      Event e = events.poll();
      clock.now = e.t;
      result.events++;
      switch (e.kind) {
        case ARRIVE -> arrive(e.client);
        case STEP -> step(e.call);
        case SERVED -> served(e.attempt);
        case TIMEOUT -> timedOut(e.attempt);
        case CAPACITY -> {
          for (int s = 0; s < service.servers; s++) startQueued(s);
        }
        case HEDGE -> hedgeDue(e.call, e.round);
        default -> throw new AssertionError(e.kind);
      }
    }
    return result;
  }

  private void push(long t, int kind, int client, CallState call, Attempt attempt, int round) {
    events.add(new Event(t, seq++, kind, client, call, attempt, round));
  }

  private int second(long t) {
    return (int) Math.min(result.offered.length - 1, t / SECOND);
  }

  private void arrive(int client) {
    long now = clock.now;
    if (now >= endNanos) return;
    result.calls++;
    result.offered[second(now)]++;
    long number = callNumbers[client]++;
    boolean beside = service.besides != 0 && number % 2 == 1;
    if (beside) result.besideCalls++;
    SimulatedDriver.Call sc =
        beside
            ? drivers[client].start(
                service.besides == 1
                    ? OTHER_URL
                    : service.besides == 3 ? LIVE_PATH_URL : CACHED_URL)
            : service.origins > 0
                ? drivers[client].start("http://o" + (number % service.origins) + ".test/")
                : drivers[client].start();
    CallState call = new CallState(sc, client, number, second(now), now, beside);
    if (load.sequentialCalls() == 0) {
      double gap = 1.0 / load.callsPerSecondEach();
      SplittableRandom r = arrivals[client];
      long next =
          load.periodic()
              ? (long) (gap * SECOND)
              : Math.max(1, (long) (-Math.log(1 - r.nextDouble()) * gap * SECOND));
      push(now + next, ARRIVE, client, null, null, 0);
    }
    step(call);
  }

  private void step(CallState call) {
    Next next = call.call.next();
    if (next == Next.WAIT) {
      push(clock.now + call.call.waitNanos(), STEP, call.client, call, null, 0);
    } else if (next == Next.DONE) {
      finish(call);
    } else {
      call.round++;
      armHedge(call);
      send(call, call.call.sent());
    }
  }

  /**
   * After an attempt or a hedge is sent: the hedge timer of this round, if okretry says one is due.
   */
  private void armHedge(CallState call) {
    long delay = call.call.hedgeAfterNanos();
    if (delay > 0) push(clock.now + delay, HEDGE, call.client, call, null, call.round);
  }

  private void hedgeDue(CallState call, int round) {
    if (call.round != round) return; // the round ended: the timer was stale
    SimulatedDriver.Sent hedge = call.call.hedge();
    if (hedge == null) return;
    result.hedges++;
    armHedge(call); // the next hedge, if more may fly
    send(call, hedge);
  }

  private void finish(CallState call) {
    result.latency(call.startSecond, clock.now - call.startNanos);
    if (load.sequentialCalls() > 0 && call.number + 1 < load.sequentialCalls()) {
      push(clock.now, ARRIVE, call.client, null, null, 0);
    }
    if (!call.call.succeeded() && call.call.reason() != null) {
      result
          .failedBy
          .computeIfAbsent(call.call.reason(), k -> new long[result.offered.length])[
          call.startSecond]++;
    }
    if (call.call.succeeded()) {
      result.succeeded++;
      if (call.beside) result.besideSucceeded++;
      result.goodput[second(clock.now)]++;
      result.succeededByStart[call.startSecond]++;
    } else if (call.call.reason() == io.github.okretry.GiveUpReason.BUDGET_EXHAUSTED
        || call.call.reason() == io.github.okretry.GiveUpReason.NO_RECENT_SUCCESS) {
      if (call.call.attempts() == 0) result.shedLocally++;
      else result.budgetRefusals++;
    }
  }

  private void send(CallState call, SimulatedDriver.Sent sent) {
    long now = clock.now;
    if (call.beside && service.besides == 2) { // OkHttp's cache answers: nothing reaches the server
      after(call, call.call.answeredFromCache());
      return;
    }
    if (call.beside) { // the other origin: its own server, answering after the mean service time
      result.serverAttempts++;
      result.besideAttempts++;
      result.attempts[second(now)]++;
      result.attemptsByCallStart[call.startSecond]++;
      Attempt a = new Attempt(call, sent, -1);
      call.flying.add(a);
      push(now + Math.max(1, nanos(service.meanServiceSeconds)), SERVED, call.client, call, a, 0);
      return;
    }
    int server = service.servers == 1 ? 0 : serverRandom.nextInt(service.servers);
    result.serverAttempts++;
    result.attempts[second(now)]++;
    result.attemptsByCallStart[call.startSecond]++;
    Attempt a = new Attempt(call, sent, server);
    call.flying.add(a);
    if (server == service.downServer
        && now >= service.downFromNanos
        && now < service.downUntilNanos) {
      over(a);
      result.refusals[second(now)]++;
      after(call, call.call.failed(sent, new Refused(), Failure.ERROR));
      return;
    }
    if (load.attemptTimeoutSeconds() > 0) {
      push(now + nanos(load.attemptTimeoutSeconds()), TIMEOUT, call.client, call, a, 0);
    }
    if (busy[server] < service.capacity(now)) {
      start(a);
    } else if (queues[server].size() < service.queueLimit) {
      queues[server].add(a);
    } else {
      over(a); // the queue is full: refused at once
      after(call, call.call.answered(sent, false));
    }
  }

  private void over(Attempt a) {
    a.over = true;
    a.call.flying.remove(a);
  }

  private void start(Attempt a) {
    busy[a.server]++;
    double mean = service.meanServiceSeconds;
    double s = service.exponential ? -Math.log(1 - serverRandom.nextDouble()) * mean : mean;
    // Common random numbers: the same attempt of the same call is slow for every contender alike.
    if (service.slowFraction > 0
        && unit(mix(seed ^ 0x510L, a.call.client, a.call.number, a.number))
            < service.slowFraction) {
      s = service.slowSeconds;
    }
    push(clock.now + Math.max(1, (long) (s * SECOND)), SERVED, a.call.client, a.call, a, 0);
  }

  private void startQueued(int server) {
    while (busy[server] < service.capacity(clock.now) && !queues[server].isEmpty()) {
      start(queues[server].poll());
    }
  }

  private void served(Attempt a) {
    if (a.server >= 0) {
      busy[a.server]--;
      startQueued(a.server);
    }
    if (a.over) return; // the client left: the work was wasted
    over(a);
    // Common random numbers: the same attempt of the same call fails for every contender alike.
    double rate = a.server < 0 ? service.otherFailureRate : service.failureRate;
    boolean failing =
        a.server < 0
            || (clock.now >= service.failingFromNanos && clock.now < service.failingUntilNanos);
    boolean ok = !failing || unit(mix(seed, a.call.client, a.call.number, a.number)) >= rate;
    after(a.call, a.call.call.answered(a.sent, ok));
  }

  private void timedOut(Attempt a) {
    if (a.over) return;
    over(a);
    result.timeouts[second(clock.now)]++;
    after(a.call, a.call.call.failed(a.sent, new Timeout(), Failure.TIMEOUT));
  }

  private void after(CallState call, Next next) {
    if (next == Next.DROP) return; // another attempt in flight answers for the call
    // The round is over: its hedge timer is stale, and the attempts still in flight are canceled.
    call.round++;
    for (Attempt loser : call.flying) loser.over = true;
    call.flying.clear();
    if (next == Next.WAIT) {
      push(clock.now + call.call.waitNanos(), STEP, call.client, call, null, 0);
    } else if (next == Next.DONE) {
      finish(call);
    } else {
      throw new AssertionError("the driver answers an outcome with wait or done");
    }
  }

  static long mix(long seed, long a, long b, long c) {
    long z =
        seed * 0x9E3779B97F4A7C15L
            + a * 0xBF58476D1CE4E5B9L
            + b * 0x94D049BB133111EBL
            + c * 0x2545F4914F6CDD1DL;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  static double unit(long bits) {
    return (bits >>> 11) * 0x1.0p-53;
  }
}
