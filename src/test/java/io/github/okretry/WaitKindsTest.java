package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 45 item 3: where the time a call waited went, on both drivers on fake time: {@link
 * RetryOutcome#waitedNanos()} split into backoff, server wait, pacing and budget, each in the
 * summary line by the same word.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class WaitKindsTest extends ScriptedTest {

  private static final long SECOND = Duration.ofSeconds(1).toNanos();

  WaitKindsTest(Driver driver) {
    this.driver = driver;
  }

  /** No listener, no jitter: backoffs of 1, 2, 4 s; a Retry-After as the server says. */
  private Call.Factory quiet() {
    return client(
        quietRetry().jitter(Jitter.NONE).retryAfterSpread(0).baseDelay(Duration.ofSeconds(1)));
  }

  @Test
  void aBackoffIsBackoff() throws IOException {
    script.status(503).status(503).status(200);
    try (Response response = quiet().newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.backoffNanos()).isEqualTo(3 * SECOND);
      assertThat(outcome.serverWaitNanos()).isZero();
      assertThat(outcome.pacingNanos()).isZero();
      assertThat(outcome.budgetNanos()).isZero();
      assertThat(outcome.waitedNanos()).isEqualTo(3 * SECOND);
      assertThat(outcome)
          .hasToString(
              "RetryOutcome{after 3 attempts: SUCCEEDED (3 requests, waited 3 s: backoff 3 s,"
                  + " processed, no key)}");
    }
  }

  @Test
  void aRetryAfterIsTheServersWait() throws IOException {
    script.status(503).status(429, "Retry-After", "5").status(200);
    try (Response response = quiet().newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.backoffNanos()).as("after the 503").isEqualTo(SECOND);
      assertThat(outcome.serverWaitNanos()).as("after the 429").isEqualTo(5 * SECOND);
      assertThat(outcome.pacingNanos()).isZero();
      assertThat(outcome.budgetNanos()).isZero();
      assertThat(outcome.waitedNanos()).isEqualTo(6 * SECOND);
      assertThat(outcome)
          .hasToString(
              "RetryOutcome{after 3 attempts: SUCCEEDED (3 requests, waited 6 s: backoff 1 s +"
                  + " server wait 5 s, processed, no key)}");
    }
  }

  @Test
  void aTurnAtAClosedOriginIsPacing() throws IOException {
    script.status(503, "Retry-After", "99999999").status(200);
    Call.Factory client =
        client(
            quietRetry()
                .jitter(Jitter.NONE)
                .retryAfterSpread(0)
                .originWideRetryAfter(true)
                .maxRetryAfter(Duration.ofSeconds(2)));
    // Too long: returned at once, but it closes the origin for 2 s
    try (Response first = client.newCall(get()).execute()) {
      assertThat(RetryOutcome.of(first).waitedNanos()).isZero();
    }
    try (Response response = client.newCall(get()).execute()) {
      assertThat(response.code()).isEqualTo(200);
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.pacingNanos()).isEqualTo(2 * SECOND);
      assertThat(outcome.backoffNanos()).isZero();
      assertThat(outcome.serverWaitNanos()).isZero();
      assertThat(outcome.budgetNanos()).isZero();
      assertThat(outcome.waitedNanos()).isEqualTo(2 * SECOND);
      assertThat(outcome.toString()).contains("waited 2 s: pacing 2 s,");
    }
  }

  @Test
  void aRetryTheBudgetSkippedIsBudget() {
    script.thenAlwaysFail(n -> new SocketTimeoutException("timeout " + n));
    Call.Factory client = quiet();
    // One call's retries: the origin is seen to fail, the next call's retries are skipped
    catchThrowableOfType(SocketTimeoutException.class, () -> client.newCall(get()).execute());
    SocketTimeoutException e =
        catchThrowableOfType(SocketTimeoutException.class, () -> client.newCall(get()).execute());
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
    assertThat(outcome.attempts()).isEqualTo(1);
    // Its first backoff is waited as any; the retry at its end, and each after it, skipped
    assertThat(outcome.backoffNanos()).isEqualTo(SECOND);
    assertThat(outcome.budgetNanos()).isGreaterThanOrEqualTo(6 * SECOND);
    assertThat(outcome.serverWaitNanos()).isZero();
    assertThat(outcome.pacingNanos()).isZero();
    assertThat(outcome.waitedNanos()).isEqualTo(outcome.backoffNanos() + outcome.budgetNanos());
    assertThat(e.getSuppressed()[e.getSuppressed().length - 1].getMessage())
        .contains(" s: backoff 1 s + budget ");
  }

  @Test
  void aFirstAttemptSuccessWaitedNothing() throws IOException {
    script.status(200);
    try (Response response = quiet().newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.waitedNanos()).isZero();
      assertThat(outcome.toString()).contains("waited 0 s, processed");
    }
  }
}
