package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import okhttp3.Call;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a logical call pays into its {@link RetryBudget} and the successes it reports
 * (docs/semantics.md, "Retry budget"), on both drivers: only a first attempt's success deposits; a
 * retry's success lets retries go again too.
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
    RetryBudget budget = RetryBudget.builder().maxTokens(10).minRetriesPerSecond(0).build();
    script.status(503).status(503).status(200).status(200);
    Call.Factory client = client(retry().retryBudget(budget));
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens())
        .as("two retries took a token each; the one that succeeded got its back, and earns nothing")
        .isEqualTo(9.0);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens())
        .as("a first attempt's success deposits 0.2")
        .isEqualTo(9.2);
  }

  @Test
  void aRetrysSuccessIsEvidenceForTheNextRetry() throws IOException {
    // maxRetries(1): one retry since the last success. The third call's retry is allowed only
    // because the second call's retry succeeded.
    RetryBudget budget = RetryBudget.builder().build();
    script
        .status(200)
        .fail(new ConnectException("first"))
        .status(200)
        .fail(new ConnectException("second"))
        .status(200);
    Call.Factory client = client(retry().retryBudget(budget).maxRetries(1));
    assertThat(code(client, get())).as("a call succeeded at once").isEqualTo(200);
    assertThat(code(client, get())).as("retried: its one retry since that success").isEqualTo(200);
    assertThat(code(client, get())).as("retried: the retry's success counts too").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(5);
    assertThat(events.lines("gaveUp")).isEmpty();
  }
}
