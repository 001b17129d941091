package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How one logical call meets its origin's published quota, on fake time, through {@link
 * LogicalCall} as both drivers use it: a call to an origin that never published one keeps the
 * stateless path; a spent quota holds the next call until its reset; a wait that does not fit is
 * not imposed; {@code Retry-After} wins; {@code OFF} reads nothing; {@code PROBE} holds a crowd on
 * a fresh origin until its first answer, each call no longer than it could wait.
 */
@Tag("unit")
class QuotaHooksTest {

  static final long MS = 1_000_000L;
  static final String SPENT = "\"default\";r=0;t=2";

  final FakeTime time = new FakeTime();

  /** {@code deadline} null for none (then a call's first attempt can be made without state). */
  RetryPolicy policy(QuotaPacing pacing, Duration deadline) {
    RetryPolicy.Builder b =
        RetryPolicy.builder()
            .timeSource(time)
            .retryAfterSpread(0)
            .maxRetries(3)
            .maxRetryAfter(Duration.ofSeconds(5))
            .quotaPacing(pacing);
    if (deadline != null) b.deadline(deadline);
    return b.build();
  }

  static final Request GET = new Request.Builder().url("https://api.test/items").build();

  static Response response(int code, String rateLimit, String retryAfter) {
    Response.Builder b =
        new Response.Builder()
            .request(GET)
            .protocol(Protocol.HTTP_1_1)
            .code(code)
            .message("x")
            .body(ResponseBody.create("", (MediaType) null));
    if (rateLimit != null) b.header("RateLimit", rateLimit);
    if (retryAfter != null) b.header("Retry-After", retryAfter);
    return b.build();
  }

  /** A call answered {@code response} at once: without state if the interceptor makes it so. */
  static void success(RetryPolicy policy, Response response) {
    LogicalCall call = LogicalCall.open(policy, GET, 0);
    if (call == null) {
      assertThat(LogicalCall.firstEnded(policy, GET, policy.time.nanoTime(), response, null, 0))
          .as("a success ends it")
          .isNull();
    } else {
      assertThat(call.ended(PacingHooksTest.send(call), response, null, 0)).isSameAs(Step.RETURN);
    }
  }

  @Test
  void anOriginThatNeverPublishesAQuotaKeepsTheStatelessPathAndNoState() {
    RetryPolicy policy = RetryPolicy.builder().timeSource(time).build();
    for (int i = 0; i < 3; i++) {
      assertThat(LogicalCall.open(policy, GET, 0)).as("stateless").isNull();
      success(policy, response(200, null, null));
    }
    assertThat(policy.originGate.size()).isZero();
    assertThat(policy.originGate.pacesQuotas()).isFalse();
  }

  @Test
  void aSpentQuotaOnAStatelessSuccessHoldsTheNextCallUntilItsResetNeverBefore() {
    RetryPolicy policy = policy(QuotaPacing.PUBLISHED, null);
    assertThat(LogicalCall.open(policy, GET, 0)).as("stateless").isNull();
    success(policy, response(200, SPENT, null));
    LogicalCall next = LogicalCall.open(policy, GET, 0);
    assertThat(next).as("a quota is known: the next call carries its state").isNotNull();
    Step step = next.next(null);
    assertThat(step.kind()).isEqualTo(Step.Kind.WAIT);
    // The reset, plus this process's offset of at most one interval (50 ms without q and w).
    assertThat(step.waitNanos()).isBetween(2_000 * MS, 2_050 * MS);
    time.advance(Duration.ofNanos(step.waitNanos()));
    assertThat(next.next(null).kind()).isEqualTo(Step.Kind.SEND);
  }

  @Test
  void aWaitLongerThanHalfTheTimeLeftIsNotImposed() {
    RetryPolicy policy = policy(QuotaPacing.PUBLISHED, Duration.ofSeconds(3));
    success(policy, response(200, SPENT, null));
    LogicalCall next = LogicalCall.open(policy, GET, 0);
    assertThat(next.next(null).kind())
        .as("2 s of 3 s left: it goes, the server decides")
        .isEqualTo(Step.Kind.SEND);
  }

  @Test
  void retryAfterTakesPrecedenceOverTheQuotasReset() {
    RetryPolicy policy = policy(QuotaPacing.PUBLISHED, Duration.ofSeconds(20));
    LogicalCall call = LogicalCall.start(policy, GET, 0);
    Attempt attempt = PacingHooksTest.send(call);
    Step wait = call.ended(attempt, response(429, "\"default\";r=0;t=1", "3"), null, 0);
    assertThat(wait.waitNanos()).as("Retry-After, not t").isEqualTo(3_000 * MS);
    time.advance(Duration.ofSeconds(3));
    Step step = call.next(null);
    // The quota's reset is the Retry-After's; only this process's offset may follow it.
    if (step.kind() == Step.Kind.WAIT) {
      assertThat(step.waitNanos()).isLessThanOrEqualTo(50 * MS);
      time.advance(Duration.ofNanos(step.waitNanos()));
      step = call.next(null);
    }
    assertThat(step.kind()).isEqualTo(Step.Kind.SEND);
  }

  @Test
  void offReadsNothing() {
    RetryPolicy policy = policy(QuotaPacing.OFF, Duration.ofSeconds(20));
    success(policy, response(200, SPENT, null));
    assertThat(policy.originGate.size()).isZero();
    LogicalCall call = LogicalCall.start(policy, GET, 0);
    Attempt attempt = PacingHooksTest.send(call);
    assertThat(call.ended(attempt, response(200, SPENT, null), null, 0)).isSameAs(Step.RETURN);
    assertThat(policy.originGate.size()).isZero();
  }

  @Test
  void probeHoldsACrowdOnAFreshOriginUntilItsFirstAnswer() {
    RetryPolicy policy = policy(QuotaPacing.PROBE, Duration.ofSeconds(20));
    LogicalCall first = LogicalCall.open(policy, GET, 0);
    assertThat(first).as("probing: every call carries its state").isNotNull();
    Attempt attempt = PacingHooksTest.send(first);
    LogicalCall second = LogicalCall.open(policy, GET, 0);
    Step held = second.next(null);
    assertThat(held.kind()).isEqualTo(Step.Kind.WAIT);
    assertThat(held.waitNanos()).isEqualTo(5 * MS);
    time.advance(Duration.ofMillis(5));
    assertThat(first.ended(attempt, response(200, null, null), null, 0)).isSameAs(Step.RETURN);
    assertThat(second.next(null).kind())
        .as("no quota: the origin is free")
        .isEqualTo(Step.Kind.SEND);
  }

  /**
   * Issue 30 item 4: a probe's hold is one wait, however often the held call asks again. Five calls
   * asking every 5 ms behind a first answer that does not come go together at half their 1 s (each
   * 5 ms wait fitting alone, they were held to their deadline before, and failed unsent).
   */
  @Test
  void aProbesHoldEndsAtHalfTheTimeLeftHoweverOftenTheCrowdAsks() {
    RetryPolicy policy = policy(QuotaPacing.PROBE, Duration.ofSeconds(1));
    LogicalCall first = LogicalCall.open(policy, GET, 0);
    Attempt probe = PacingHooksTest.send(first);
    long start = time.nanoTime();
    List<LogicalCall> crowd = new ArrayList<>();
    for (int i = 0; i < 5; i++) crowd.add(LogicalCall.open(policy, GET, 0));
    Map<Integer, Long> sentAfterMillis = new TreeMap<>();
    while (sentAfterMillis.size() < crowd.size() && time.nanoTime() - start < 2_000 * MS) {
      long shortest = Long.MAX_VALUE;
      for (int i = 0; i < crowd.size(); i++) {
        if (sentAfterMillis.containsKey(i)) continue;
        Step step = crowd.get(i).next(null);
        assertThat(step.kind())
            .as("call " + i + " at " + (time.nanoTime() - start) / MS + " ms")
            .isIn(Step.Kind.WAIT, Step.Kind.SEND);
        if (step.kind() == Step.Kind.SEND) sentAfterMillis.put(i, (time.nanoTime() - start) / MS);
        else shortest = Math.min(shortest, step.waitNanos());
      }
      if (shortest != Long.MAX_VALUE) time.advance(Duration.ofNanos(shortest));
    }
    assertThat(sentAfterMillis.values())
        .as("each sent, after half its 1 s")
        .hasSize(5)
        .containsOnly(500L);
    assertThat(first.ended(probe, response(200, null, null), null, 0)).isSameAs(Step.RETURN);
  }
}
