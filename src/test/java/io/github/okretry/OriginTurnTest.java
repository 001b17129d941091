package io.github.okretry;

import static io.github.okretry.PacingHooksTest.response;
import static io.github.okretry.PacingHooksTest.send;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A call's standing with its origin ({@link OriginTurn}), driven through {@link LogicalCall} on
 * fake time: a paced retry whose turn would come past its latest time gives up for what set that
 * time (docs/semantics.md, "Retry-After" rule 5 and the GiveUpReason table); a call the gate
 * throttles gives back the turn it held and gets a local response standing for the origin's; an
 * attempt that ends, however, is no longer in flight for its origin's quota.
 */
@Tag("unit")
class OriginTurnTest {

  static final long MS = 1_000_000L;
  static final long FAR = PacingHooksTest.FAR;
  static final String ORIGIN = PacingHooksTest.ORIGIN;

  final FakeTime time = new FakeTime();
  final Request request = PacingHooksTest.get("https://a.test/");

  /** Spread 0 (waits are exact), a 3 s ceiling on Retry-After, {@code deadline}. */
  RetryPolicy.Builder policy(Duration deadline) {
    return RetryPolicy.builder()
        .timeSource(time)
        .retryAfterSpread(0)
        .maxRetries(5)
        .maxRetryAfter(Duration.ofSeconds(3))
        .deadline(deadline);
  }

  /**
   * A call answered 429 with Retry-After: 1, waited that second, and asks behind a crowd with turns
   * far apart.
   */
  Step askBehindACrowd(RetryPolicy policy, LogicalCall call) {
    Step decision = call.ended(send(call), response(request, 429, "1"), null, 0);
    assertThat(decision.waitNanos()).as("the server's second, exactly").isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    long interval =
        PacingHooksTest.paceOrigin(policy.originGate, ORIGIN, time.nanoTime(), 8_000, true);
    assertThat(2 * interval)
        .as("its own turn, after the other call's, past both limits below")
        .isGreaterThan(3_000 * MS);
    return call.next(null);
  }

  @Test
  void aTurnPastTheRetryAfterCeilingGivesUpAsARetryAfterTooLong() {
    // No deadline to speak of: the latest it may go is maxRetryAfter (3 s) from the answer.
    RetryPolicy policy = policy(Duration.ofSeconds(60)).build();
    LogicalCall call = LogicalCall.start(policy, request, 0);
    Step step = askBehindACrowd(policy, call);
    assertThat(step.kind()).isEqualTo(Step.Kind.RETURN);
    Response local = step.responseOr(null);
    assertThat(local.code()).as("the origin's status, locally").isEqualTo(429);
    assertThat(call.gaveUpFor()).isEqualTo(GiveUpReason.RETRY_AFTER_TOO_LONG);
  }

  @Test
  void aTurnPastHalfTheTimeLeftGivesUpForTheDeadline() {
    // 4 s deadline: the 1 s Retry-After leaves 3 s, of which the wait may take half: 2.5 s.
    RetryPolicy policy = policy(Duration.ofSeconds(4)).build();
    LogicalCall call = LogicalCall.start(policy, request, 0);
    Step step = askBehindACrowd(policy, call);
    assertThat(step.kind()).isEqualTo(Step.Kind.RETURN);
    assertThat(step.responseOr(null).code()).isEqualTo(429);
    assertThat(call.gaveUpFor()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
  }

  @Test
  void aCallThrottledAtTheGateGivesBackTheTurnItHeld() {
    RetryPolicy policy = policy(Duration.ofSeconds(20)).originWideRetryAfter(true).build();
    LogicalCall call = LogicalCall.start(policy, request, 0);
    call.ended(send(call), response(request, 429, "1"), null, 0);
    time.advance(Duration.ofSeconds(1));
    long interval =
        PacingHooksTest.paceOrigin(policy.originGate, ORIGIN, time.nanoTime(), 320, true);
    assertThat(call.next(null).waitNanos())
        .as("its turn, after the other call's")
        .isEqualTo(2 * interval);
    // Meanwhile another call's answer closes the origin for 30 s, longer than this one may wait.
    long now = time.nanoTime();
    policy.originGate.close(request.url(), now, now + 30_000 * MS, 503);
    time.advance(Duration.ofNanos(2 * interval));
    Step step = call.next(null);
    assertThat(step.kind()).isEqualTo(Step.Kind.RETURN);
    assertThat(step.responseOr(null).code()).isEqualTo(503);
    assertThat(call.gaveUpFor()).isEqualTo(GiveUpReason.ORIGIN_THROTTLED);
    // Its turn, the last handed out, was given back: the next caller gets it.
    long later = time.nanoTime();
    assertThat(policy.originGate.reserve(ORIGIN, later, FAR, FAR)).isEqualTo(later);
  }

  @Test
  void theLocalResponseStandsForTheOriginsAnswer() throws IOException {
    for (long asked : new long[] {1_500_000_001L, 3_000 * MS}) {
      RetryPolicy policy =
          policy(Duration.ofSeconds(1)).originWideRetryAfter(true).clock(() -> 1_234L).build();
      long now = time.nanoTime();
      policy.originGate.close(request.url(), now, now + asked, 503);
      LogicalCall call = LogicalCall.start(policy, request, 0);
      Step step = call.next(null);
      assertThat(step.kind())
          .as("a wait longer than the deadline: nothing is sent")
          .isEqualTo(Step.Kind.RETURN);
      try (Response r = step.responseOr(null)) {
        assertThat(r.code()).isEqualTo(503);
        assertThat(r.protocol()).isEqualTo(Protocol.HTTP_1_1);
        assertThat(r.message()).isEqualTo("Throttled locally by okretry: origin asked to wait");
        assertThat(r.header("Retry-After"))
            .as("whole seconds, rounded up")
            .isEqualTo(asked == 3_000 * MS ? "3" : "2");
        assertThat(r.request()).isSameAs(request);
        assertThat(r.body().string()).isEmpty();
        assertThat(r.sentRequestAtMillis()).isEqualTo(1_234L);
        assertThat(r.receivedResponseAtMillis()).isEqualTo(1_234L);
      }
    }
  }

  @Test
  void aProbeThatFailsFreesTheCrowdWhetherItsFailureIsAnExceptionOrABugBelow() {
    for (Throwable failure :
        new Throwable[] {new SocketTimeoutException("timeout"), new IllegalStateException("bug")}) {
      RetryPolicy policy =
          RetryPolicy.builder()
              .timeSource(time)
              .maxRetries(0)
              .quotaPacing(QuotaPacing.PROBE)
              .build();
      LogicalCall first = LogicalCall.open(policy, request, 0);
      Attempt probe = send(first);
      LogicalCall second = LogicalCall.open(policy, request, 0);
      assertThat(second.next(null).kind())
          .as("held while the probe is in flight")
          .isEqualTo(Step.Kind.WAIT);
      assertThat(first.ended(probe, null, failure, 0).kind()).isEqualTo(Step.Kind.THROW);
      assertThat(second.next(null).kind())
          .as("after " + failure + ": nothing in flight holds it")
          .isEqualTo(Step.Kind.SEND);
    }
  }
}
