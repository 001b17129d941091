package io.github.okretry;

import static io.github.okretry.internal.RetryAfterValues.IMF_FIXDATE;
import static io.github.okretry.internal.RetryAfterValues.anyValue;
import static io.github.okretry.internal.RetryAfterValues.count;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.RetryAfterValues;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * How long okretry waits between attempts, on fake time: exponential backoff with its jitter kinds,
 * a server's {@code Retry-After} (seconds or a date, capped by {@code maxRetryAfter}, never
 * shortened, spread only upward), and a property over hostile headers. The pure pieces are {@code
 * internal/BackoffTest}, {@code internal/RetryAfterTest} and {@code RetryRulesTest}; waits that do
 * not fit the deadline are {@link DeadlineTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class DelaysTest extends ScriptedTest {

  DelaysTest(Driver driver) {
    this.driver = driver;
  }

  @Nested
  class Backoff {
    @Test
    void withoutJitterBaseOneSecondCapThreeWaitsOneTwoThreeThree() throws IOException {
      script.status(503).status(503).status(503).status(503).status(200);
      RetryPolicy.Builder b =
          retry()
              .jitter(Jitter.NONE)
              .baseDelay(Duration.ofSeconds(1))
              .maxDelay(Duration.ofSeconds(3))
              .maxRetries(4);
      client(b).newCall(get()).execute().close();
      assertThat(time.sleepMillis()).containsExactly(1000L, 2000L, 3000L, 3000L);
    }

    @Test
    void fullJitterKeepsEveryWaitWithinThatRetrysCap() throws IOException {
      for (int i = 0; i < 10; i++) script.status(503);
      script.status(200);
      RetryPolicy.Builder b =
          retry().baseDelay(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(2)).maxRetries(10);
      client(b).newCall(get()).execute().close();
      List<Duration> sleeps = time.sleeps();
      assertThat(sleeps).hasSize(10);
      for (int n = 1; n <= 10; n++) {
        long cap = Math.min(100L << (n - 1), 2000L);
        assertThat(sleeps.get(n - 1)).isBetween(Duration.ZERO, Duration.ofMillis(cap));
      }
      assertThat(sleeps).as("jittered, not the cap every time").doesNotHaveDuplicates();
    }

    @Test
    void decorrelatedJitterDoesNotGrowFromARetryAfter() throws IOException {
      script.status(503, "Retry-After", "50").status(503).status(200);
      RetryPolicy.Builder b =
          retry()
              .jitter(Jitter.DECORRELATED)
              .baseDelay(Duration.ofMillis(100))
              .maxDelay(Duration.ofSeconds(60))
              .retryAfterSpread(0);
      client(b).newCall(get()).execute().close();
      assertThat(time.sleeps()).hasSize(2);
      assertThat(time.sleeps().get(0)).isEqualTo(Duration.ofSeconds(50));
      // drawn from [base, 3 × base], not from [base, 3 × 50 s]
      assertThat(time.sleeps().get(1)).isBetween(Duration.ofMillis(100), Duration.ofMillis(300));
    }
  }

  @Nested
  class RetryAfterHeader {
    @Test
    void secondsOverrideTheBackoff() throws IOException {
      script.status(429, "Retry-After", "7").status(200);
      client(retry().retryAfterSpread(0)).newCall(get()).execute().close();
      assertThat(time.sleepMillis()).containsExactly(7000L);
    }

    @Test
    void aDateIsReadAgainstTheResponsesDateHeader() throws IOException {
      script
          .status(
              503,
              "Retry-After",
              "Thu, 01 Jan 2026 00:00:12 GMT",
              "Date",
              "Thu, 01 Jan 2026 00:00:10 GMT")
          .status(200);
      client(retry().retryAfterSpread(0)).newCall(get()).execute().close();
      assertThat(time.sleepMillis()).containsExactly(2000L);
    }

    @Test
    void anInvalidValueFallsBackToTheBackoff() throws IOException {
      script.status(503, "Retry-After", "soon").status(200);
      client(retry().jitter(Jitter.NONE).baseDelay(Duration.ofMillis(250)))
          .newCall(get())
          .execute()
          .close();
      assertThat(time.sleepMillis()).containsExactly(250L);
    }

    @Test
    void overTheCeilingTheResponseIsReturnedAtOnce() throws IOException {
      script.status(503, "Retry-After", "3600");
      try (Response r =
          client(retry().maxRetryAfter(Duration.ofMinutes(2))).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(503);
        assertThat(r.header("Retry-After")).isEqualTo("3600");
      }
      assertThat(time.sleeps()).isEmpty();
      assertThat(events.lines()).contains("gaveUp 1 RETRY_AFTER_TOO_LONG HTTP 503");
    }

    /**
     * The origin gate ({@link OriginWideRetryAfterTest}) is capped by {@code maxRetryAfter} too.
     */
    @Test
    void aHostileValueClosesTheOriginNoLongerThanMaxRetryAfter() throws IOException {
      script.status(503, "Retry-After", "99999999").status(200);
      Call.Factory c =
          client(retry().originWideRetryAfter(true).maxRetryAfter(Duration.ofSeconds(2)));
      c.newCall(get()).execute().close(); // too long: returned at once, but closes the origin
      assertThat(time.sleeps()).isEmpty();
      try (Response r = c.newCall(get()).execute()) {
        assertThat(r.code())
            .isEqualTo(200); // waited out the 2 s the origin stays closed, not 99999999 s
      }
      assertThat(time.sleeps()).singleElement().isEqualTo(Duration.ofSeconds(2));
      assertThat(script.attempts()).isEqualTo(2);
    }
  }

  @Nested
  class RetryAfterSpread {
    @Test
    void byDefaultUpToHalfAgainButNeverPastTheDeadline() throws IOException {
      for (int i = 0; i < 10; i++) script.status(503, "Retry-After", "2");
      script.status(200);
      client(retry().maxRetries(10)).newCall(get()).execute().close();
      assertThat(time.sleeps())
          .hasSize(10)
          .allSatisfy(d -> assertThat(d).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(3)));

      FakeTime t2 = new FakeTime();
      Script s2 = new Script().status(503, "Retry-After", "2").status(200);
      s2.client(retry().timeSource(t2).deadline(Duration.ofMillis(2100)).build())
          .newCall(get())
          .execute()
          .close();
      assertThat(t2.sleeps())
          .singleElement()
          .satisfies(d -> assertThat(d).isBetween(Duration.ofSeconds(2), Duration.ofMillis(2100)));
    }

    @Test
    void onlyUpward() throws IOException {
      for (int i = 0; i < 20; i++) script.status(503, "Retry-After", "1");
      script.status(200);
      client(retry().maxRetries(20).retryAfterSpread(0.5)).newCall(get()).execute().close();
      assertThat(time.sleeps())
          .hasSize(20)
          .allSatisfy(d -> assertThat(d).isBetween(Duration.ofSeconds(1), Duration.ofMillis(1500)));
      assertThat(time.sleeps()).doesNotHaveDuplicates();
    }
  }

  /**
   * The interceptor, fed seeded hostile {@code Retry-After} headers by a script (no sockets, so
   * thousands of calls take a second): each attempt answers 503 with random Retry-After fields,
   * eventually 200. The recorded sleeps must respect every bound: never longer than {@code
   * maxRetryAfter} (or {@code maxDelay} for computed waits), never shorter than a valid
   * Retry-After, and never past the deadline.
   */
  @Nested
  class Properties {
    @AfterAll
    static void printCounts() {
      Diagnostics.println("Retry-After properties: " + RetryAfterValues.COUNTS);
    }

    @TestFactory
    Stream<DynamicTest> theInterceptorNeverSleepsPastTheBounds() {
      return SeededProperties.forSeeds(
          "interceptor",
          r -> {
            for (int i = 0; i < 20; i++) runOneCall(r);
          });
    }
  }

  static void runOneCall(SplittableRandom r) {
    Clock clock = RetryAfterValues.clock(r);
    FakeTime time = new FakeTime();
    Duration maxRetryAfter = Duration.ofMillis(r.nextLong(1, 10_000));
    Duration maxDelay = Duration.ofMillis(r.nextLong(1, 5_000));
    // At least 1 s: the waits run on fake time, but a deadline's watch on an attempt in flight is
    // okio's real timer (DeadlineWatch), and a few ms of real time can pass on a loaded machine.
    Duration deadline = r.nextInt(4) == 0 ? null : Duration.ofMillis(r.nextLong(1_000, 20_000));
    double spread = r.nextInt(3) == 0 ? 0 : r.nextDouble();
    int maxRetries = r.nextInt(0, 6);
    List<Duration> scheduled = new java.util.ArrayList<>();
    SplittableRandom serverRandom = r.split();
    RetryPolicy.Builder b =
        RetryPolicy.builder()
            // every sleep is followed by an attempt
            .timeSource(time)
            .clock(clock::millis)
            .random(r.split()::nextLong)
            .maxRetries(maxRetries)
            .maxDelay(maxDelay)
            .maxRetryAfter(maxRetryAfter)
            .retryAfterSpread(spread)
            .listener(
                new RetryListener() {
                  @Override
                  public void onRetryScheduled(
                      Request request, int attempt, String reason, long delayNanos) {
                    scheduled.add(Duration.ofNanos(delayNanos));
                  }
                });
    if (deadline != null) b.deadline(deadline);
    Script server =
        new Script()
            .thenAlways(
                (chain, attempt) -> {
                  Headers.Builder hb = new Headers.Builder();
                  int fields = serverRandom.nextInt(0, 4);
                  for (int f = 0; f < fields; f++) {
                    hb.addUnsafeNonAscii("Retry-After", anyValue(serverRandom, clock));
                  }
                  if (serverRandom.nextInt(4) == 0) {
                    hb.add(
                        "Date",
                        IMF_FIXDATE.format(
                            clock.instant().plusSeconds(serverRandom.nextLong(-60, 60))));
                  }
                  boolean ok = serverRandom.nextInt(6) == 0;
                  return new Response.Builder()
                      .request(chain.request())
                      .protocol(Protocol.HTTP_1_1)
                      .code(ok ? 200 : 503)
                      .message(ok ? "OK" : "Unavailable")
                      .headers(hb.build())
                      .build();
                });
    OkHttpClient client = server.client(b.build());
    String config =
        "maxRetries="
            + maxRetries
            + " maxDelay="
            + maxDelay
            + " maxRetryAfter="
            + maxRetryAfter
            + " deadline="
            + deadline
            + " spread="
            + spread;
    Response last;
    try {
      last = client.newCall(new Request.Builder().url("http://example.invalid/").build()).execute();
    } catch (IOException e) {
      throw new AssertionError("the script never fails, so the call must not: " + config, e);
    }
    last.close();
    List<Response> sent = server.returned();
    List<Duration> sleeps = time.sleeps();
    String what =
        config
            + " responses "
            + sent.stream().map(x -> x.code() + " " + x.headers("Retry-After")).toList()
            + " sleeps "
            + sleeps;
    assertThat(sleeps).as(what).isEqualTo(scheduled).hasSize(sent.size() - 1);
    assertThat(sent.size()).as(what).isLessThanOrEqualTo(maxRetries + 1);
    assertThat(last.body())
        .as(what + ": the last response as it came")
        .isSameAs(sent.get(sent.size() - 1).body());
    long total = 0;
    for (int k = 0; k < sleeps.size(); k++) {
      long sleep = sleeps.get(k).toNanos();
      long retryAfter = RetryAfter.delayNanos(sent.get(k), clock::millis);
      if (retryAfter == RetryAfter.ABSENT) {
        assertThat(sleep).as(what).isBetween(0L, maxDelay.toNanos());
        count("interceptor:backoff-sleeps");
      } else {
        assertThat(sleep).as(what).isBetween(retryAfter, maxRetryAfter.toNanos());
        count("interceptor:retry-after-sleeps");
      }
      total += sleep;
    }
    if (deadline != null) assertThat(total).as(what).isLessThan(deadline.toNanos());
    // A call that stopped on a 503 did so for a reason the bounds explain.
    if (last.code() == 503) {
      long retryAfter = RetryAfter.delayNanos(last, clock::millis);
      boolean exhausted = sent.size() == maxRetries + 1;
      boolean tooLong = retryAfter > maxRetryAfter.toNanos();
      boolean pastDeadline = deadline != null; // the next wait would not have fit
      assertThat(exhausted || tooLong || pastDeadline).as(what).isTrue();
      count(
          tooLong
              ? "interceptor:gave-up-retry-after-too-long"
              : exhausted ? "interceptor:gave-up-exhausted" : "interceptor:gave-up-deadline");
    } else {
      count("interceptor:succeeded");
    }
  }
}
