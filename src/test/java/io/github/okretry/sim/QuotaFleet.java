package io.github.okretry.sim;

import io.github.okretry.QuotaPacing;
import io.github.okretry.RetryPolicy;
import io.github.okretry.SimulatedDriver;
import io.github.okretry.SimulatedDriver.Failure;
import io.github.okretry.SimulatedDriver.Next;
import io.github.okretry.internal.WallClock;
import java.time.Duration;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import okhttp3.Headers;

/**
 * Issue 20's "published quota" scenario as a deterministic discrete-event simulation on fake time:
 * {@code clients} processes (one okretry policy each: its own budget and origin table) each start
 * {@code callsEach} calls at once against one limiter of {@code perWindow} requests per fixed
 * 1-second window, which publishes {@code RateLimit-Policy: "default";q=20;w=1} and {@code
 * RateLimit: "default";r=N;t=T} on every answer (T whole seconds to the window's end, rounded up)
 * and answers the calls over the quota {@code 429} with {@code Retry-After: T}, as {@code
 * QuotaCrowdTest}'s limiter does in real time. Each call runs okretry's own per-call code through
 * {@link SimulatedDriver}; the network is a one-way delay of {@code 1 ms} plus an exponential
 * jitter of mean {@code 0.5 ms} (seeded); the window's phase against the crowd's start is drawn
 * from the seed, uniform in one window. Clients are CrowdTest's burst client ({@code
 * maxRetries(20)}, 20 s deadline, {@code maxRetryAfter} 5 s) with the quota pacing given.
 */
public final class QuotaFleet {

  static final long MS = 1_000_000L;
  static final long SECOND = 1_000_000_000L;
  static final String URL = "http://limited.test/";

  /** What ran. */
  public record Result(int calls, int succeeded, int attempts, int refused, long makespanNanos) {
    public double attemptsPerCall() {
      return attempts / (double) calls;
    }

    public double makespanSeconds() {
      return makespanNanos / 1e9;
    }
  }

  private static final class Clock implements io.github.okretry.internal.TimeSource {
    long now;

    @Override
    public long nanoTime() {
      return now;
    }

    @Override
    public void sleep(long nanos, okhttp3.Call call) {
      throw new UnsupportedOperationException("the simulator never sleeps");
    }
  }

  private record Event(
      long t, long seq, int kind, SimulatedDriver.Call call, int code, Headers headers)
      implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      return t != o.t ? Long.compare(t, o.t) : Long.compare(seq, o.seq);
    }
  }

  private static final int STEP = 0;
  private static final int ARRIVE = 1; // at the server
  private static final int ANSWER = 2; // back at the client

  private final int clients;
  private final int callsEach;
  private final int perWindow;
  private final long seed;
  private final Clock clock = new Clock();
  private final PriorityQueue<Event> events = new PriorityQueue<>();
  private final SplittableRandom network;
  final long phaseNanos;
  private long seq;
  private long window = Long.MIN_VALUE;
  private int used;
  private int attempts;
  private int refused;

  public QuotaFleet(int clients, int callsEach, int perWindow, long seed) {
    this.clients = clients;
    this.callsEach = callsEach;
    this.perWindow = perWindow;
    this.seed = seed;
    SplittableRandom r = new SplittableRandom(seed);
    this.phaseNanos = (long) (r.nextDouble() * SECOND);
    this.network = r.split();
  }

  /** Runs the crowd with {@code pacing}; a QuotaFleet runs once. */
  public Result run(QuotaPacing pacing) {
    WallClock wall = () -> 1_700_000_000_000L + clock.now / MS;
    int done = 0;
    int ok = 0;
    long last = 0;
    for (int c = 0; c < clients; c++) {
      SplittableRandom random = new SplittableRandom(seed * 1_000_003L + c);
      RetryPolicy.Builder b =
          RetryPolicy.builder()
              .maxRetries(20)
              .deadline(Duration.ofSeconds(20))
              .maxRetryAfter(Duration.ofSeconds(5))
              .quotaPacing(pacing);
      RetryPolicy policy = SimulatedDriver.seams(b, clock, wall, random::nextLong).build();
      SimulatedDriver driver = new SimulatedDriver(policy, URL, null, -1);
      for (int i = 0; i < callsEach; i++) push(0, STEP, driver.start(), 0, null);
    }
    while (!events.isEmpty()) {
      Event e = events.poll();
      clock.now = e.t();
      Next next;
      switch (e.kind()) {
        case STEP -> next = e.call().next();
        case ARRIVE -> {
          serve(e.call());
          continue;
        }
        case ANSWER -> next = e.call().answered(e.code(), e.headers(), Failure.THROTTLED);
        default -> throw new AssertionError(e.kind());
      }
      switch (next) {
        case SEND -> push(clock.now + delay(), ARRIVE, e.call(), 0, null);
        case WAIT -> push(clock.now + e.call().waitNanos(), STEP, e.call(), 0, null);
        case DONE -> {
          done++;
          if (e.call().succeeded()) ok++;
          last = clock.now;
        }
      }
    }
    if (done != clients * callsEach) {
      throw new AssertionError("calls left running: " + (clients * callsEach - done));
    }
    return new Result(done, ok, attempts, refused, last);
  }

  /** The limiter: {@code perWindow} per fixed 1 s window, the window's phase set by the seed. */
  private void serve(SimulatedDriver.Call call) {
    attempts++;
    long since = clock.now + phaseNanos;
    long w = since / SECOND;
    if (w != window) {
      window = w;
      used = 0;
    }
    boolean admitted = used < perWindow;
    if (admitted) used++;
    long t = ((w + 1) * SECOND - since + SECOND - 1) / SECOND;
    Headers.Builder h =
        new Headers.Builder()
            .add("RateLimit-Policy", "\"default\";q=" + perWindow + ";w=1")
            .add("RateLimit", "\"default\";r=" + (perWindow - used) + ";t=" + t);
    if (!admitted) {
      refused++;
      h.add("Retry-After", Long.toString(t));
    }
    push(clock.now + delay(), ANSWER, call, admitted ? 200 : 429, h.build());
  }

  private long delay() {
    return MS + (long) (-Math.log(1 - network.nextDouble()) * 0.5 * MS);
  }

  private void push(long t, int kind, SimulatedDriver.Call call, int code, Headers headers) {
    events.add(new Event(t, seq++, kind, call, code, headers));
  }
}
