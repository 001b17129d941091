package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Step}, and a {@link LogicalCall} driven by hand on fake time with in-memory requests and
 * responses, as a simulator drives it: no OkHttp call, no driver. The sequence of steps is the
 * protocol both drivers follow.
 */
@Tag("unit")
class StepTest {
  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;

  final FakeTime time = new FakeTime();
  final Request get = new Request.Builder().url("https://a.test/x").build();

  RetryPolicy.Builder policy() {
    return RetryPolicy.builder()
        .timeSource(time)
        .jitter(Jitter.NONE)
        .baseDelay(Duration.ofMillis(100));
  }

  Response response(int code) {
    return new Response.Builder()
        .request(get)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("x")
        .body(ResponseBody.create("", (MediaType) null))
        .build();
  }

  /**
   * Drives {@code call} through {@code outcomes} (a Response or an IOException each), recording
   * every step.
   */
  List<String> drive(LogicalCall call, Object... outcomes) {
    List<String> steps = new ArrayList<>();
    int next = 0;
    Step step = call.next(null);
    while (true) {
      steps.add(step.toString());
      switch (step.kind()) {
        case SEND:
          Object outcome = outcomes[next++];
          step =
              outcome instanceof Response r
                  ? call.ended(Attempt.of(step), r, null, 0)
                  : call.ended(Attempt.of(step), null, (IOException) outcome, 0);
          break;
        case WAIT:
          time.advance(Duration.ofNanos(step.waitNanos()));
          step = call.next(null);
          break;
        default:
          return steps;
      }
    }
  }

  @Test
  void aRetriedCallIsSendWaitSendReturn() {
    LogicalCall call = LogicalCall.start(policy().build(), get, 0);
    assertThat(drive(call, response(503), response(200)))
        .containsExactly("SEND", "WAIT(" + 100 * MS + " ns)", "SEND", "RETURN");
  }

  @Test
  void theLastFailureIsThrownWithTheEarlierOnesSuppressed() {
    LogicalCall call = LogicalCall.start(policy().maxRetries(1).build(), get, 0);
    IOException first = new SocketTimeoutException("first");
    IOException last = new SocketTimeoutException("last");
    List<String> steps = drive(call, first, last);
    assertThat(steps).hasSize(4).startsWith("SEND", "WAIT(" + 100 * MS + " ns)", "SEND");
    assertThat(steps.get(3)).isEqualTo("THROW(" + last + ")");
    assertThat(EarlierFailures.of(last)).containsExactly(first);
  }

  @Test
  void aNonRetryableResponseAfterRetriesIsReturnedAsItIs() {
    LogicalCall call = LogicalCall.start(policy().maxRetries(1).build(), get, 0);
    assertThat(drive(call, response(503), response(503)))
        .as("out of retries: the last response, for the caller to read")
        .containsExactly("SEND", "WAIT(" + 100 * MS + " ns)", "SEND", "RETURN");
  }

  @Test
  void oneCancelPrecedenceForBothDrivers() {
    RetryPolicy p = policy().deadline(Duration.ofSeconds(1)).build();
    IOException canceled = new IOException("Canceled");
    // The watch fired: the deadline, whoever else canceled.
    LogicalCall a = LogicalCall.start(p, get, 0);
    assertThat(
            a.ended(
                    Attempt.of(a.next(null)),
                    null,
                    canceled,
                    Seen.WATCH_FIRED | Seen.CALLER_CANCELED | Seen.ATTEMPT_CANCELED)
                .failure())
        .isInstanceOf(SocketTimeoutException.class)
        .hasCause(canceled);
    // The caller's cancel, before the deadline, with a retryable response in hand.
    LogicalCall b = LogicalCall.start(p, get, 0);
    assertThat(
            b.ended(Attempt.of(b.next(null)), response(503), null, Seen.CALLER_CANCELED).failure())
        .hasMessage("Canceled");
    // Someone else canceled the attempt (not the caller) after a response arrived: ignored.
    LogicalCall c = LogicalCall.start(p, get, 0);
    assertThat(c.ended(Attempt.of(c.next(null)), response(503), null, Seen.ATTEMPT_CANCELED).kind())
        .isEqualTo(Step.Kind.WAIT);
    // An interrupt, with a response in hand.
    LogicalCall d = LogicalCall.start(p, get, 0);
    assertThat(d.ended(Attempt.of(d.next(null)), response(503), null, Seen.INTERRUPTED).failure())
        .isInstanceOf(InterruptedIOException.class);
  }

  @Test
  void aWaitEndedEarlyEndsTheCall() {
    LogicalCall call = LogicalCall.start(policy().build(), get, 0);
    IOException first = new SocketTimeoutException("first");
    assertThat(call.ended(Attempt.of(call.next(null)), null, first, 0).kind())
        .isEqualTo(Step.Kind.WAIT);
    IOException closed = new IOException("RetryingCallFactory is closed");
    Step step = call.next(closed);
    assertThat(step.failure()).isSameAs(closed);
    assertThat(EarlierFailures.of(closed)).containsExactly(first);
  }

  @Test
  void aBugBelowOkretryIsThrownAsItIs() {
    LogicalCall call = LogicalCall.start(policy().build(), get, 0);
    IllegalStateException bug = new IllegalStateException("bug");
    assertThat(call.ended(Attempt.of(call.next(null)), null, bug, 0).failure()).isSameAs(bug);
  }

  @Test
  void aCallWithNothingToTrackMakesItsFirstAttemptWithoutState() {
    RetryPolicy plain = policy().build();
    assertThat(LogicalCall.open(plain, get, 0)).isNull();
    assertThat(LogicalCall.firstEnded(plain, get, 0, response(200), null, 0)).isNull();
    LogicalCall after503 = LogicalCall.firstEnded(plain, get, 0, response(503), null, 0);
    assertThat(after503).isNotNull();
    assertThat(after503.next(null).toString())
        .as("the first step decides the attempt already made")
        .isEqualTo("WAIT(" + 100 * MS + " ns)");
    assertThat(LogicalCall.open(policy().deadline(Duration.ofSeconds(1)).build(), get, 0))
        .as("okretry's own deadline: the driver bounds the first attempt by it")
        .isNull();
    assertThat(LogicalCall.open(plain, get, S)).as("a call timeout").isNotNull();
  }

  @Test
  void aDeadlineRunsFromTheStartOfAFirstAttemptMadeWithoutState() {
    RetryPolicy p = policy().deadline(Duration.ofSeconds(1)).build();
    long start = time.nanoTime();
    time.advance(Duration.ofMillis(850));
    LogicalCall inTime = LogicalCall.firstEnded(p, get, start, response(503), null, 0);
    assertThat(inTime.next(null).toString())
        .as("150 ms left: the 100 ms wait fits")
        .isEqualTo("WAIT(" + 100 * MS + " ns)");
    time.advance(Duration.ofMillis(100));
    LogicalCall late = LogicalCall.firstEnded(p, get, start, response(503), null, 0);
    assertThat(late.next(null).kind()).as("50 ms left").isEqualTo(Step.Kind.RETURN);
    assertThat(late.gaveUpFor()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
  }

  @Test
  void aWaitMayBeZeroButNotNegative() {
    assertThat(Step.waitFor(0).kind()).isEqualTo(Step.Kind.WAIT);
    assertThat(Step.waitFor(0).waitNanos()).isZero();
    assertThatThrownBy(() -> Step.waitFor(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("waitNanos < 0: -1");
    assertThatThrownBy(() -> Step.RETURN.failure()).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> Attempt.of(Step.RETURN)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aLocalResponseIsReturnedInsteadOfTheOneInHand() {
    Response local = response(503);
    Step step = Step.returning(local);
    assertThat(step.kind()).isEqualTo(Step.Kind.RETURN);
    assertThat(step.responseOr(response(200))).isSameAs(local);
    assertThat(Step.RETURN.responseOr(local)).isSameAs(local);
    assertThat(step).hasToString("RETURN(local 503)");
  }
}
