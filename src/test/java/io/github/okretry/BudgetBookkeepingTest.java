package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a logical call pays into its {@link RetryBudget} and the evidence its outcomes give or use
 * (docs/semantics.md, "Retry budget" and "A fleet of processes"), on both drivers: only a first
 * attempt's success deposits; a retry's success is evidence too; a retry that waited for evidence
 * keeps its failure for the final exception once it is sent, and its held response is closed
 * when the origin gate throttles it instead.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class BudgetBookkeepingTest extends ScriptedTest {

  BudgetBookkeepingTest(Driver driver) {
    this.driver = driver;
  }

  @Test
  void onlyAFirstAttemptsSuccessPaysIntoTheBudget() throws IOException {
    RetryBudget budget = RetryBudget.builder().maxTokens(10).minRetriesPerSecond(0).failureStreak(0).build();
    script.status(503).status(200).status(200);
    Call.Factory client = client(retry().retryBudget(budget));
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens()).as("the retry took a token; its success earns nothing").isEqualTo(9.0);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens()).as("a first attempt's success deposits 0.2").isEqualTo(9.2);
  }

  @Test
  void aRetrysSuccessIsEvidenceForTheNextRetry() throws IOException {
    // At most one retry after an error since the last success: the second call's retry is
    // allowed only because the first call's retry succeeded.
    RetryBudget budget = RetryBudget.builder().failureStreak(1).build();
    script.status(200)
        .fail(new ConnectException("first")).status(200)
        .fail(new ConnectException("second")).status(200);
    Call.Factory client = client(retry().retryBudget(budget));
    assertThat(code(client, get())).as("evidence: a call succeeded at once").isEqualTo(200);
    assertThat(code(client, get())).as("retried, counted into the streak").isEqualTo(200);
    assertThat(code(client, get())).as("retried: the streak started again").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(5);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  @Test
  void aFailureHeldForEvidenceIsAttachedToTheFinalExceptionOnceItsRetryIsSent() {
    ConnectException first = new ConnectException("first");
    ConnectException last = new ConnectException("last");
    script.fail(first).status(200).fail(last);
    Call.Factory client = client(retry().retryBudget(RetryBudget.create()).maxRetries(1));
    time.duringNextWait(() -> anotherCallSucceeds(client));
    Throwable thrown = catchThrowable(() -> client.newCall(get()).execute());
    assertThat(thrown).as("the retry went, and failed too").isSameAs(last);
    assertThat(thrown.getSuppressed()).as("the held failure joined the history").containsExactly(first);
    assertThat(events.lines("gaveUp")).containsExactly("gaveUp 2 RETRIES_EXHAUSTED ConnectException: last");
  }

  @Test
  void aResponseHeldForEvidenceIsClosedWhenTheOriginGateThrottlesTheRetry() throws IOException {
    // The call's 503 finds no evidence: held through the wait. Meanwhile one call succeeds
    // (evidence) and another gets a Retry-After of 30 s, which closes the origin for longer
    // than the call has left: it ends at the gate with a local response, its 503 closed.
    script.status(503).status(200).status(503, "Retry-After", "30");
    Call.Factory client =
        client(retry().retryBudget(RetryBudget.create()).originWideRetryAfter(true).deadline(Duration.ofSeconds(5)));
    time.duringNextWait(() -> {
      anotherCallSucceeds(client);
      anotherCallSucceeds(client);
    });
    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.message()).isEqualTo("Throttled locally by okretry: origin asked to wait");
    }
    assertThat(script.attempts()).isEqualTo(3);
    assertThat(script.closed(1)).as("the held 503").isTrue();
    assertThat(events.lines("gaveUp")).contains("gaveUp 1 ORIGIN_THROTTLED HTTP 503 (origin)");
  }

}
