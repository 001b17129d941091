package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 45, its last item: when the budget ends a call ({@code NO_RECENT_SUCCESS}, {@code
 * BUDGET_EXHAUSTED}), its outcome says when the origin last answered, as far as the budget knows,
 * on both drivers; null where it does not. Time is fake and the wall clock moves with it from
 * {@link #NOW}: the origin answers at NOW + 1 s (a 503, a backoff of 1 s, a 200).
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class LastAnsweredTest extends ScriptedTest {

  private static final long NOW_MILLIS = NOW.toEpochMilli();

  private final long startNanos = time.nanoTime();

  LastAnsweredTest(Driver driver) {
    this.driver = driver;
  }

  /** No jitter, waits of 1, 2, 3 s, and a wall clock that moves with fake time. */
  private RetryPolicy.Builder policy() {
    return retry()
        .clock(() -> NOW_MILLIS + (time.nanoTime() - startNanos) / 1_000_000L)
        .jitter(Jitter.NONE)
        .baseDelay(Duration.ofSeconds(1))
        .maxDelay(Duration.ofSeconds(3));
  }

  private static RetryOutcome outcomeOf(Call.Factory client) throws IOException {
    try (Response response = client.newCall(get()).execute()) {
      return RetryOutcome.of(response);
    }
  }

  @Test
  void anOriginThatAnsweredThenFailedEverything() throws IOException {
    script.status(503).status(200).thenAlways(503);
    Call.Factory client = client(policy());
    assertThat(outcomeOf(client).giveUpReason()).isNull(); // answered at NOW + 1 s
    RetryOutcome exhausted = outcomeOf(client);
    assertThat(exhausted.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(exhausted.lastAnsweredAtMillis()).as("not the budget's end").isNull();
    RetryOutcome outcome = outcomeOf(client);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
    assertThat(outcome.lastAnsweredAtMillis()).isEqualTo(NOW_MILLIS + 1_000L);
    assertThat(outcome.toString()).contains(", origin last answered at 2026-01-01T00:00:01.000Z, ");
  }

  @Test
  void aBudgetThatCannotPay() throws IOException {
    script.status(503).status(200).thenAlways(503);
    RetryBudget budget = RetryBudget.builder().maxTokens(1).minRetriesPerSecond(0).build();
    Call.Factory client = client(policy().retryBudget(budget));
    assertThat(outcomeOf(client).giveUpReason()).isNull(); // its retry's token given back
    RetryOutcome outcome = outcomeOf(client);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.BUDGET_EXHAUSTED);
    assertThat(outcome.attempts()).isEqualTo(2);
    assertThat(outcome.lastAnsweredAtMillis()).isEqualTo(NOW_MILLIS + 1_000L);
  }

  @Test
  void noneOnceTheOriginWentLongerThanTheMemoryWithoutFailing() throws IOException {
    script.status(503).status(200).thenAlways(503);
    Call.Factory client = client(policy());
    outcomeOf(client);
    time.advance(Duration.ofSeconds(31)); // an answer now would go untold: nothing failed lately
    outcomeOf(client);
    RetryOutcome outcome = outcomeOf(client);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
    assertThat(outcome.lastAnsweredAtMillis()).isNull();
    assertThat(outcome.toString()).doesNotContain("last answered");
  }

  @Test
  void noneForAnAnswerBeforeAnyFailure() throws IOException {
    // A success while nothing failed costs nothing, so it is not noted either
    script.status(200).thenAlways(503);
    Call.Factory client = client(policy());
    outcomeOf(client);
    outcomeOf(client);
    RetryOutcome outcome = outcomeOf(client);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
    assertThat(outcome.lastAnsweredAtMillis()).isNull();
  }
}
