package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 37: {@link RetryPolicy#explain()} states the worst case in words and numbers, and its
 * numbers are the waits a call actually draws with jitter off, on both drivers.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class ExplainTest extends ScriptedTest {

  ExplainTest(Driver driver) {
    this.driver = driver;
  }

  /** The seed's policy: base 1 s, ×2, 5 retries, no cap (the longest maxDelay there is). */
  private RetryPolicy.Builder seed() {
    return quietRetry()
        .baseDelay(Duration.ofSeconds(1))
        .multiplier(2)
        .maxRetries(5)
        .maxDelay(Duration.ofHours(24));
  }

  @Test
  void theSeedsPolicyWaits31Seconds() {
    assertThat(seed().build().explain())
        .contains(
            "Worst case: 6 attempts (the first and 5 retries).",
            "each at most: 1 + 2 + 4 + 8 + 16 = 31 s of waiting",
            "No deadline");
  }

  @Test
  void theDefaultPolicyWaits1point4Seconds() {
    assertThat(RetryPolicy.builder().build().explain())
        .contains(
            "Worst case: 4 attempts (the first and 3 retries).",
            "each at most: 0.2 + 0.4 + 0.8 = 1.4 s of waiting",
            "Full jitter draws each from 0 to its cap",
            "Retry-After replaces a wait: up to 60 s each");
  }

  @Test
  void itsNumbersAreTheWaitsDrawnWithJitterOff() throws IOException {
    for (RetryPolicy.Builder builder :
        List.of(seed(), quietRetry(), quietRetry().maxRetries(7).maxDelay(Duration.ofSeconds(3)))) {
      RetryPolicy policy = builder.jitter(Jitter.NONE).retryBudget(RetryBudget.unlimited()).build();
      int before = time.sleeps().size();
      script.thenAlways(503);
      code(driver.calls(policy, script, time), get());
      List<Duration> drawn = time.sleeps().subList(before, time.sleeps().size());
      long[] explained = PolicyExplanation.longestWaitsNanos(policy.settings, 64);
      assertThat(drawn)
          .containsExactlyElementsOf(Arrays.stream(explained).mapToObj(Duration::ofNanos).toList());
      long total = drawn.stream().mapToLong(Duration::toNanos).sum();
      assertThat(PolicyExplanation.totalWaitNanos(policy.settings)).isEqualTo(total);
      assertThat(policy.explain())
          .contains(" = " + PolicyExplanation.seconds(total) + " s of waiting");
    }
  }

  @Test
  void withAClientsTimeoutsItAddsUpTheAttemptsOrNamesWhatBoundsTheCall() {
    OkHttpClient client =
        new OkHttpClient.Builder()
            .connectTimeout(1, TimeUnit.SECONDS)
            .writeTimeout(2, TimeUnit.SECONDS)
            .readTimeout(3, TimeUnit.SECONDS)
            .build();
    assertThat(seed().build().explain(client))
        .contains(
            "connect 1 s + write 2 s + read 3 s = 6 s",
            "a call takes up to 6 × 6 + 31 = 67 s.",
            "No deadline or call timeout bounds it.");
    assertThat(seed().deadline(Duration.ofSeconds(3)).build().explain(client))
        .endsWith("The deadline of 3 s bounds the whole call, attempts and waits.");
    OkHttpClient withCallTimeout = client.newBuilder().callTimeout(2, TimeUnit.SECONDS).build();
    assertThat(seed().deadline(Duration.ofSeconds(3)).build().explain(withCallTimeout))
        .endsWith("The client's call timeout of 2 s bounds the whole call.");
  }

  @Test
  void manyRetriesAreSummedNotListed() {
    String text = quietRetry().maxRetries(Integer.MAX_VALUE).build().explain();
    assertThat(text)
        .contains(
            "0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 6.4 + 10 + 10 + … (2147483639 more, up to 10 s each)");
    assertThat(RetryPolicy.builder().maxRetries(0).build().explain())
        .startsWith("Worst case: 1 attempt (no retry).");
  }

  @Test
  void decorrelatedJitterGrowsThreeTimesTheLast() {
    assertThat(quietRetry().jitter(Jitter.DECORRELATED).build().explain())
        .contains("0.6 + 1.8 + 5.4 = 7.8 s of waiting", "decorrelated jitter");
  }
}
