package io.github.okretry.sim;

import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.Backoff.Jitter;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The AWS Architecture Blog's "Exponential Backoff And Jitter" experiment as a deterministic
 * discrete-event simulation, with the waits drawn by okretry's own {@link Backoff}.
 *
 * <p>N clients start at t = 0, and each must win one optimistic-concurrency write on a single row:
 * it reads the row's version, then writes with that version; the write succeeds only if the version
 * is still the same (and bumps it). Each message leg (client→server or server→client) takes |N(10
 * ms, 2 ms)|. A client whose write failed waits the strategy's delay before its next read. "Writes"
 * counts every write that reached the server (the work); "completion" is when the last client
 * learned its write succeeded. Everything is a function of the seed.
 *
 * <p>Shared by the JUnit test that guards the qualitative result and the bench program that
 * publishes the full table and chart.
 */
public final class JitterSimulation {

  /** How a client waits after a failed write. */
  public enum Strategy {
    /** Read again at once. */
    NO_BACKOFF(null),
    /** Exponential backoff, no jitter ({@link Jitter#NONE}). */
    EXPONENTIAL(Jitter.NONE),
    FULL_JITTER(Jitter.FULL),
    EQUAL_JITTER(Jitter.EQUAL),
    DECORRELATED_JITTER(Jitter.DECORRELATED);

    public final Jitter jitter; // null: no backoff

    Strategy(Jitter jitter) {
      this.jitter = jitter;
    }
  }

  /** Base and cap of the backoff, mean and standard deviation of one message leg. */
  public record Config(long baseNanos, long capNanos, double legMeanNanos, double legSdNanos) {
    /** The blog's setting: base 5 ms, cap 2 s, legs of |N(10 ms, 2 ms)|. */
    public static final Config AWS = new Config(5_000_000L, 2_000_000_000L, 10e6, 2e6);
  }

  /** One run: when the last client finished, the mean finish time, and the writes made. */
  public record Run(long completionNanos, double meanClientNanos, long writes) {}

  /** Means over {@code runs} seeded runs for one strategy and N. */
  public record Summary(
      Strategy strategy,
      int clients,
      int runs,
      double completionMillis,
      double meanClientMillis,
      double writes) {}

  private static final int READ_AT_SERVER = 0;
  private static final int READ_REPLY = 1;
  private static final int WRITE_AT_SERVER = 2;
  private static final int WRITE_OK = 3;
  private static final int WRITE_FAILED = 4;

  private JitterSimulation() {}

  public static Summary summarize(
      Strategy strategy, int clients, int runs, long seed, Config config) {
    double completion = 0;
    double meanClient = 0;
    double writes = 0;
    for (int r = 0; r < runs; r++) {
      Run run = run(strategy, clients, runSeed(seed, clients, r), config);
      completion += run.completionNanos();
      meanClient += run.meanClientNanos();
      writes += run.writes();
    }
    return new Summary(
        strategy, clients, runs, completion / runs / 1e6, meanClient / runs / 1e6, writes / runs);
  }

  /** The same seed for every strategy at a given (N, run), so they face comparable draws. */
  static long runSeed(long seed, int clients, int run) {
    return seed * 0x9E3779B97F4A7C15L + clients * 1_000_003L + run;
  }

  public static Run run(Strategy strategy, int clients, long seed, Config config) {
    SplittableRandom random = new SplittableRandom(seed);
    Backoff backoff =
        strategy.jitter == null
            ? null
            : new Backoff(config.baseNanos(), config.capNanos(), 2.0, strategy.jitter);
    EventQueue events = new EventQueue(clients * 4);
    long[] readVersion = new long[clients];
    int[] failures = new int[clients];
    long[] previousDelay = new long[clients];
    Arrays.fill(previousDelay, config.baseNanos());

    for (int c = 0; c < clients; c++) events.add(leg(random, config), c, READ_AT_SERVER);

    long version = 0;
    long writes = 0;
    long last = 0;
    double finishSum = 0;
    int finished = 0;
    while (finished < clients) {
      long now = events.peekTime();
      int client = events.peekClient();
      int type = events.peekType();
      events.poll();
      switch (type) {
        case READ_AT_SERVER:
          readVersion[client] = version;
          events.add(now + leg(random, config), client, READ_REPLY);
          break;
        case READ_REPLY:
          events.add(now + leg(random, config), client, WRITE_AT_SERVER);
          break;
        case WRITE_AT_SERVER:
          writes++;
          boolean ok = readVersion[client] == version;
          if (ok) version++;
          events.add(now + leg(random, config), client, ok ? WRITE_OK : WRITE_FAILED);
          break;
        case WRITE_OK:
          finished++;
          finishSum += now;
          last = now;
          break;
        case WRITE_FAILED:
          int retry = ++failures[client];
          long delay =
              backoff == null
                  ? 0
                  : backoff.delayNanos(retry, previousDelay[client], random::nextLong);
          previousDelay[client] = delay;
          events.add(now + delay + leg(random, config), client, READ_AT_SERVER);
          break;
        default:
          throw new AssertionError(type);
      }
    }
    return new Run(last, finishSum / clients, writes);
  }

  private static long leg(SplittableRandom random, Config config) {
    return (long) Math.abs(config.legMeanNanos() + config.legSdNanos() * random.nextGaussian());
  }

  /** A binary min-heap of (time, sequence) → (client, type) on primitive arrays. */
  private static final class EventQueue {
    private long[] time;
    private long[] seq;
    private int[] client;
    private int[] type;
    private int size;
    private long nextSeq;

    EventQueue(int capacity) {
      time = new long[capacity];
      seq = new long[capacity];
      client = new int[capacity];
      type = new int[capacity];
    }

    void add(long t, int c, int ty) {
      if (size == time.length) {
        int n = size * 2;
        time = Arrays.copyOf(time, n);
        seq = Arrays.copyOf(seq, n);
        client = Arrays.copyOf(client, n);
        type = Arrays.copyOf(type, n);
      }
      int i = size++;
      long s = nextSeq++; // ties (rare) resolve in insertion order: deterministic
      while (i > 0) {
        int parent = (i - 1) >>> 1;
        if (!less(t, s, time[parent], seq[parent])) break;
        move(parent, i);
        i = parent;
      }
      set(i, t, s, c, ty);
    }

    long peekTime() {
      return time[0];
    }

    int peekClient() {
      return client[0];
    }

    int peekType() {
      return type[0];
    }

    void poll() {
      int last = --size;
      long t = time[last];
      long s = seq[last];
      int c = client[last];
      int ty = type[last];
      int i = 0;
      while (true) {
        int child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && less(time[child + 1], seq[child + 1], time[child], seq[child])) {
          child++;
        }
        if (!less(time[child], seq[child], t, s)) break;
        move(child, i);
        i = child;
      }
      if (size > 0) set(i, t, s, c, ty);
    }

    private static boolean less(long t1, long s1, long t2, long s2) {
      return t1 < t2 || (t1 == t2 && s1 < s2);
    }

    private void move(int from, int to) {
      set(to, time[from], seq[from], client[from], type[from]);
    }

    private void set(int i, long t, long s, int c, int ty) {
      time[i] = t;
      seq[i] = s;
      client[i] = c;
      type[i] = ty;
    }
  }
}
