package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 30 items 6 and 7 for a crowd, on fake time: 30 calls at once through one policy against a
 * GitHub-like limiter (10 requests per 2 s window per bucket, {@code X-RateLimit-*} with an epoch
 * reset and {@code Date}, {@code X-RateLimit-Resource}, a 403 when spent), driven through {@link
 * LogicalCall} exactly as both drivers drive it: ask before each attempt, send, decide on the
 * answer. Each leg of each request takes 1 to 5 ms (seeded), so answers overtake one another. Exact
 * and instant; {@code -Dokretry.printTables=true} prints the numbers. The same runs against a real
 * MockWebServer on both drivers: {@link GitHubLimitsTest}.
 */
@Tag("unit")
class GitHubCrowdTest {

  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;

  /** 2026-01-01T00:00:00.400Z: windows do not start on a whole second, as GitHub's do not. */
  static final long EPOCH_MILLIS = 1_767_225_600_400L;

  /** How the limiter says a bucket is spent. */
  enum Shape {
    /** GitHub's primary rate limit: {@code X-RateLimit-*}, a 403 without {@code Retry-After}. */
    GITHUB,
    /** The same without {@code X-RateLimit-Resource}. */
    GITHUB_WITHOUT_RESOURCE,
    /**
     * A per-user quota in the IETF fields ({@code pk}), which okretry keys to the path that
     * reported it, and a 429 without {@code Retry-After}: no pacer holds a retry on another path,
     * only its own wait does.
     */
    IETF_PARTITION
  }

  static final class Sim {
    final CrowdPacingScenariosTest.SimTime time = new CrowdPacingScenariosTest.SimTime();
    final RetryPolicy policy;
    final Shape shape;
    final SplittableRandom legs;
    final Map<String, long[]> windows = new HashMap<>(); // bucket -> {start nanos, used}
    final PriorityQueue<long[]> events =
        new PriorityQueue<>(
            (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    final List<Caller> callers = new ArrayList<>();
    long sequence;
    int requests;
    int refused;
    int sendsBeforeFirstAnswer;
    boolean answeredOnce;

    static final int ASK = 0;
    static final int ARRIVE = 1;
    static final int ANSWER = 2;

    Sim(QuotaPacing pacing, Shape shape, long seed) {
      this.shape = shape;
      this.legs = new SplittableRandom(seed);
      SplittableRandom draws = new SplittableRandom(seed * 31 + 7);
      this.policy =
          RetryPolicy.builder()
              .timeSource(time)
              .clock(() -> EPOCH_MILLIS + time.nanos / MS)
              .random(draws::nextLong)
              .quotaPacing(pacing)
              .maxRetryAfter(Duration.ofSeconds(10))
              .retryOnResponse(
                  r ->
                      r.code() == 403
                          && (r.header("Retry-After") != null
                              || "0".equals(r.header("X-RateLimit-Remaining"))))
              .build();
    }

    final class Caller {
      final Request request;
      LogicalCall logical;
      Attempt attempt;
      Response answer;
      int sent;
      boolean ok;
      long endNanos = -1;

      Caller(String path) {
        this.request = new Request.Builder().url("https://api.github.test" + path).build();
      }
    }

    void call(String path) {
      call(path, 0);
    }

    /** A call to {@code path} that starts at {@code atNanos}. */
    void call(String path, long atNanos) {
      Caller c = new Caller(path);
      callers.add(c);
      schedule(atNanos, ASK, c);
    }

    private void schedule(long at, int kind, Caller c) {
      events.add(new long[] {at, sequence++, kind, callers.indexOf(c)});
    }

    private long leg() {
      return MS + legs.nextLong(4 * MS + 1);
    }

    void run() {
      while (!events.isEmpty()) {
        long[] e = events.poll();
        time.nanos = e[0];
        Caller c = callers.get((int) e[3]);
        switch ((int) e[2]) {
          case ASK -> ask(c);
          case ARRIVE -> arrive(c);
          case ANSWER -> answer(c);
          default -> throw new AssertionError();
        }
      }
    }

    private void ask(Caller c) {
      if (c.logical == null) c.logical = LogicalCall.start(policy, c.request, 0);
      Step step = c.logical.next(null);
      switch (step.kind()) {
        case WAIT -> schedule(time.nanos + step.waitNanos(), ASK, c);
        case SEND -> {
          if (!answeredOnce) sendsBeforeFirstAnswer++;
          c.attempt = Attempt.of(step);
          schedule(time.nanos + leg(), ARRIVE, c);
        }
        default -> c.endNanos = time.nanos; // ended without sending
      }
    }

    private void arrive(Caller c) {
      requests++;
      c.sent++;
      c.answer = limit(c.attempt.request());
      if (c.answer.code() != 200) refused++;
      schedule(time.nanos + leg(), ANSWER, c);
    }

    private void answer(Caller c) {
      answeredOnce = true;
      Step d = c.logical.ended(c.attempt, c.answer, null, 0);
      if (d.kind() == Step.Kind.WAIT) {
        schedule(time.nanos + d.waitNanos(), ASK, c);
        return;
      }
      c.endNanos = time.nanos;
      c.ok = d.kind() == Step.Kind.RETURN && c.answer.code() == 200;
    }

    /**
     * 10 per 2 s window per bucket, the window starting at its first request, as GitHub's hour
     * does.
     */
    private Response limit(Request request) {
      String path = request.url().encodedPath();
      String bucket = path.startsWith("/search/") ? "search" : "core";
      long[] w = windows.computeIfAbsent(bucket, b -> new long[] {time.nanos, 0});
      if (time.nanos - w[0] >= 2 * S) {
        w[0] = time.nanos;
        w[1] = 0;
      }
      boolean admitted = w[1] < 10;
      if (admitted) w[1]++;
      long remaining = 10 - w[1];
      long nowMillis = EPOCH_MILLIS + time.nanos / MS;
      long endMillis = EPOCH_MILLIS + (w[0] + 2 * S) / MS;
      Response.Builder b =
          new Response.Builder()
              .request(request)
              .protocol(Protocol.HTTP_1_1)
              .message("x")
              .body(ResponseBody.create("", (MediaType) null))
              .header(
                  "Date",
                  DateTimeFormatter.RFC_1123_DATE_TIME.format(
                      Instant.ofEpochMilli(nowMillis).atZone(ZoneOffset.UTC)));
      if (shape == Shape.IETF_PARTITION) {
        long t = (endMillis - nowMillis + 999) / 1000; // whole seconds, rounded up
        b.header("RateLimit-Policy", "\"user\";q=10;w=2;pk=:dXNlcg==:")
            .header("RateLimit", "\"user\";r=" + remaining + ";t=" + t + ";pk=:dXNlcg==:");
        return b.code(admitted ? 200 : 429).build();
      }
      b.header("X-RateLimit-Limit", "10")
          .header("X-RateLimit-Remaining", Long.toString(remaining))
          .header("X-RateLimit-Used", Long.toString(w[1]))
          .header("X-RateLimit-Reset", Long.toString((endMillis + 999) / 1000));
      if (shape == Shape.GITHUB) b.header("X-RateLimit-Resource", bucket);
      return b.code(admitted ? 200 : 403).build();
    }

    long ok() {
      return callers.stream().filter(c -> c.ok).count();
    }

    long makespanMillis() {
      return callers.stream().mapToLong(c -> c.endNanos).max().orElse(0) / MS;
    }
  }

  /** 30 calls at once, to /issues/0 … /issues/29 (or 30 times /issues), over seeds 1 to 5. */
  static List<Sim> crowds(QuotaPacing pacing, Shape shape, boolean distinctPaths) {
    List<Sim> runs = new ArrayList<>();
    for (long seed = 1; seed <= 5; seed++) {
      Sim sim = new Sim(pacing, shape, seed);
      for (int i = 0; i < 30; i++) sim.call(distinctPaths ? "/issues/" + i : "/issues");
      sim.run();
      CrowdPacingScenariosTest.print(
          "%s %s %s paths, seed %d: %d/30 through, %d requests (%d refused), %d ms",
          pacing,
          shape,
          distinctPaths ? "30" : "one",
          seed,
          sim.ok(),
          sim.requests,
          sim.refused,
          sim.makespanMillis());
      runs.add(sim);
    }
    return runs;
  }

  @Test
  void probingACoreBucketOnThirtyPathsSendsAboutOneRequestPerCall() {
    // Issue 30 item 7: 59 requests (30 refused) before, against 30 without the Resource header.
    for (Sim sim : crowds(QuotaPacing.PROBE, Shape.GITHUB, true)) {
      assertThat(sim.ok()).isEqualTo(30);
      assertThat(sim.requests).isLessThanOrEqualTo(33);
    }
  }

  @Test
  void probingWithoutTheResourceHeaderIsNoBetter() {
    for (Sim sim : crowds(QuotaPacing.PROBE, Shape.GITHUB_WITHOUT_RESOURCE, true)) {
      assertThat(sim.ok()).isEqualTo(30);
      assertThat(sim.requests).isLessThanOrEqualTo(33);
    }
  }

  @Test
  void byDefaultTheFirstBurstIsRefusedOnceAndEveryRetryWaitsForTheReset() {
    // Issue 30's GitHub run: before, retried on the backoff to paths the bucket did not gate,
    // 10 or 11 of 30 through (20 ended with the 403 within a second). All 30 go before any answer
    // (10 admitted, 20 refused once: 50 requests); no retry is refused again. Issue 36 item 4's
    // target of 40 would hold the crowd's first attempts for the first answer: that is PROBE's,
    // opt-in, since a first attempt runs at once (README).
    for (Sim sim : crowds(QuotaPacing.PUBLISHED, Shape.GITHUB, true)) {
      assertThat(sim.ok()).isEqualTo(30);
      assertThat(sim.requests).isLessThanOrEqualTo(50);
    }
  }

  @Test
  void aRetryThatNoPacerHoldsWaitsForTheResetItself() {
    // A per-user quota okretry keys to each path: only the 429's own reset holds its retry.
    for (Sim sim : crowds(QuotaPacing.PUBLISHED, Shape.IETF_PARTITION, true)) {
      assertThat(sim.ok()).isEqualTo(30);
      assertThat(sim.requests)
          .as("30, then 20 retries at the reset, 10 at the next")
          .isLessThanOrEqualTo(60);
    }
  }

  /**
   * Issue 36 item 4: a crowd still leaving when the first answer comes (30 calls 0.2 to 0.5 ms
   * apart, each leg 1 to 5 ms). Only calls sent before it may be refused, beyond the 10 it admits;
   * the quota it publishes holds the rest, counting those in flight, where before they went on top
   * to be refused (gap 0.3 ms, seed 1: 13 sent before the first answer, 7 refused, 37 requests).
   */
  @Test
  void byDefaultTheFirstAnswerHoldsTheCallsNotYetSent() {
    for (long gapMicros : new long[] {200, 300, 500}) {
      for (long seed = 1; seed <= 5; seed++) {
        Sim sim = new Sim(QuotaPacing.PUBLISHED, Shape.GITHUB, seed);
        for (int i = 0; i < 30; i++) sim.call("/issues/" + i, i * gapMicros * 1_000);
        sim.run();
        CrowdPacingScenariosTest.print(
            "PUBLISHED GITHUB, 30 calls %d us apart, seed %d: %d/30 through, %d requests (%d"
                + " refused), %d sent before the first answer, %d ms",
            gapMicros,
            seed,
            sim.ok(),
            sim.requests,
            sim.refused,
            sim.sendsBeforeFirstAnswer,
            sim.makespanMillis());
        assertThat(sim.ok()).isEqualTo(30);
        assertThat(sim.refused)
            .as(
                "gap %d us, seed %d: only those sent before the first answer, beyond its 10",
                gapMicros, seed)
            .isEqualTo(Math.max(0, sim.sendsBeforeFirstAnswer - 10));
      }
    }
  }
}
