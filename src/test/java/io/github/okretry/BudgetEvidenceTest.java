package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The default budget's evidence rule ({@code RetryBudget.Builder#failureStreak}, docs/semantics.md
 * "A fleet of processes") on both drivers: a retry after an error that finds no evidence that
 * retrying works when it is decided waits its backoff and asks again before it is sent; if there
 * is still none, the call ends after that one wait, nothing more sent.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class BudgetEvidenceTest extends ScriptedTest {

  BudgetEvidenceTest(Driver driver) {
    this.driver = driver;
  }

  /** Fake time and seams, the event log, and the default budget (unlike {@link #retry()}). */
  RetryPolicy.Builder defaults() {
    return RetryPolicy.builder()
        .timeSource(time)
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)::millis)
        .random(new SplittableRandom(1)::nextLong)
        .listener(events);
  }

  @Test
  void aFreshClientsFirstErrorCostsOneBackoffAndGetsALocalResponseStandingForTheClosedOne() throws IOException {
    script.status(503).thenAlways(200);
    Call.Factory client = client(defaults());
    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.message()).isEqualTo("Not retried by okretry: no sign yet that retrying works (retry budget)");
      assertThat(r.body().string()).isEmpty();
    }
    assertThat(script.attempts()).as("nothing sent after the wait").isEqualTo(1);
    assertThat(script.closed(1)).as("the real response was closed for the wait").isTrue();
    assertThat(time.sleeps()).as("exactly one wait, the first retry's backoff").hasSize(1)
        .allMatch(d -> d.compareTo(Duration.ofMillis(200)) <= 0);
    assertThat(events.lines()).containsExactly("start 1", "retry 1 HTTP 503", "gaveUp 1 BUDGET_EXHAUSTED HTTP 503");
  }

  @Test
  void aFreshClientsFirstExceptionIsThrownAsItIsAfterTheWait() {
    ConnectException refused = new ConnectException("refused");
    script.fail(refused).thenAlways(200);
    Throwable thrown = catchThrowable(() -> client(defaults()).newCall(get()).execute());
    assertThat(thrown).isSameAs(refused);
    assertThat(thrown.getSuppressed()).isEmpty();
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).hasSize(1);
  }

  @Test
  void onceACallSucceededAtOnceErrorsAreRetriedAndTheirFailuresKept() throws IOException {
    ConnectException first = new ConnectException("first");
    script.status(200).fail(first).status(503).status(200);
    Call.Factory client = client(defaults());
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(4);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  @Test
  void aRetryAfterOnA503IsHonouredWithoutEvidence() throws IOException {
    script.status(503, "Retry-After", "1").status(200);
    assertThat(code(client(defaults()), get())).as("the server said when: it is alive").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(2);
  }

  @Test
  void aFirstAttemptSuccessDuringTheWaitLetsTheRetryGo() {
    RetryPolicy policy = defaults().build();
    Request request = get();
    LogicalCall a = LogicalCall.start(policy, request, 0);
    Attempt attempt = PacingHooksTest.send(a);
    Step wait = a.ended(attempt, PacingHooksTest.response(request, 503, null), null, 0);
    assertThat(wait.kind()).as("no evidence yet: it waits anyway").isEqualTo(Step.Kind.WAIT);
    time.advance(Duration.ofNanos(wait.waitNanos()));
    LogicalCall b = LogicalCall.start(policy, request, 0);
    assertThat(b.ended(PacingHooksTest.send(b), PacingHooksTest.response(request, 200, null), null, 0).kind())
        .isEqualTo(Step.Kind.RETURN);
    assertThat(a.next(null).kind()).as("b's first attempt succeeded meanwhile").isEqualTo(Step.Kind.SEND);
  }

  @Test
  void aCancelDuringTheWaitKeepsTheHeldFailureAsSuppressed() throws IOException {
    RetryPolicy policy = defaults().build();
    Request request = get();
    LogicalCall call = LogicalCall.start(policy, request, 0);
    ConnectException refused = new ConnectException("refused");
    assertThat(call.ended(PacingHooksTest.send(call), null, refused, 0).kind()).isEqualTo(Step.Kind.WAIT);
    IOException canceled = new IOException("Canceled");
    Step end = call.next(canceled);
    assertThat(end.failure()).isSameAs(canceled);
    assertThat(canceled.getSuppressed()).containsExactly(refused);
  }
}
