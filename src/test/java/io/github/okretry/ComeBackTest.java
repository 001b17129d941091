package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 45 item 2: when a call ends because the server asked for a wait okretry would not make, its
 * outcome says the instant to come back at, on the wall clock, on both drivers; none otherwise. The
 * clock is fixed at {@link #NOW} and time is fake: the instant is NOW plus what was asked.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class ComeBackTest extends ScriptedTest {

  private static final long NOW_MILLIS = NOW.toEpochMilli();

  ComeBackTest(Driver driver) {
    this.driver = driver;
  }

  private RetryOutcome outcomeOf(Call.Factory client) throws IOException {
    try (Response response = client.newCall(get()).execute()) {
      return RetryOutcome.of(response);
    }
  }

  @Test
  void aRetryAfterLongerThanMaxRetryAfter() throws IOException {
    script.status(429, "Retry-After", "3600");
    RetryOutcome outcome = outcomeOf(client(retry().maxRetryAfter(Duration.ofMinutes(2))));
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRY_AFTER_TOO_LONG);
    assertThat(outcome.comeBackAtMillis()).isEqualTo(NOW_MILLIS + 3_600_000L);
    assertThat(outcome.toString()).contains(", come back at 2026-01-01T01:00:00.000Z, ");
  }

  @Test
  void aDateIsMeasuredAgainstTheServersClockNotThisOnes() throws IOException {
    // The server's clock is 10 s ahead: it asks for an hour from its now, an hour from ours
    script.status(
        503,
        "Retry-After",
        "Thu, 01 Jan 2026 01:00:10 GMT",
        "Date",
        "Thu, 01 Jan 2026 00:00:10 GMT");
    RetryOutcome outcome = outcomeOf(client(retry()));
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRY_AFTER_TOO_LONG);
    assertThat(outcome.comeBackAtMillis()).isEqualTo(NOW_MILLIS + 3_600_000L);
  }

  @Test
  void aHostileValueIsClampedToADay() throws IOException {
    script.status(503, "Retry-After", "99999999999");
    RetryOutcome outcome = outcomeOf(client(retry()));
    assertThat(outcome.comeBackAtMillis()).isEqualTo(NOW_MILLIS + Duration.ofDays(1).toMillis());
  }

  @Test
  void aSpentQuotaPastTheDeadline() throws IOException {
    script.status(429, "RateLimit", "\"default\";r=0;t=30");
    RetryOutcome outcome = outcomeOf(client(retry().deadline(Duration.ofSeconds(3))));
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
    assertThat(outcome.comeBackAtMillis()).isEqualTo(NOW_MILLIS + 30_000L);
  }

  @Test
  void anOriginThatThrottlesTheNextCall() throws IOException {
    script.status(503, "Retry-After", "99999999").status(200);
    Call.Factory client =
        client(retry().originWideRetryAfter(true).maxRetryAfter(Duration.ofSeconds(2)));
    outcomeOf(client); // too long: returned at once, and the origin closed for 2 s
    // A call with 1 s to live cannot wait the 2 s
    Request hurried =
        get()
            .newBuilder()
            .tag(
                RetryOverrides.class,
                RetryOverrides.builder().deadline(Duration.ofSeconds(1)).build())
            .build();
    RetryOutcome outcome;
    try (Response response = client.newCall(hurried).execute()) {
      outcome = RetryOutcome.of(response);
    }
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.ORIGIN_THROTTLED);
    assertThat(outcome.attempts()).isZero();
    assertThat(outcome.comeBackAtMillis()).isEqualTo(NOW_MILLIS + 2_000L);
  }

  @Test
  void noneWhenTheServerNamedNone() throws IOException {
    script.thenAlways(503);
    RetryOutcome outcome = outcomeOf(client(retry()));
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(outcome.comeBackAtMillis()).isNull();
    assertThat(outcome.toString()).doesNotContain("come back");
  }
}
