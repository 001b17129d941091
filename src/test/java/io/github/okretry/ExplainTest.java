package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.Durations;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link RetryPolicy#explain()} states the worst case in short lines, the binding figure first
 * (issue 37; issue 43: it understated the worst case and buried the answer), and its numbers are
 * the waits a call actually draws with jitter off, or a server's {@code Retry-After} at the
 * ceiling, on both drivers. One test per claim of the text.
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

  /** A client with connect 1 s, write 2 s and read 3 s: 6 s for an attempt that times out once. */
  private static OkHttpClient client() {
    return new OkHttpClient.Builder()
        .connectTimeout(1, TimeUnit.SECONDS)
        .writeTimeout(2, TimeUnit.SECONDS)
        .readTimeout(3, TimeUnit.SECONDS)
        .build();
  }

  private static List<String> lines(String text) {
    return List.of(text.split("\n"));
  }

  @Test
  void theSeedsPolicyWaits31SecondsOfBackoff() {
    assertThat(lines(seed().build().explain()))
        .contains(
            "Attempts: up to 6 (the first and 5 retries).",
            "Backoff waits, each at most: 1 + 2 + 4 + 8 + 16 = 31 s of waiting"
                + " (×2 from 1 s, capped at 86400 s; Full jitter draws each from 0 to its cap).");
  }

  @Test
  void theDefaultPolicyWaits1point4SecondsOfBackoff() {
    assertThat(RetryPolicy.builder().build().explain())
        .contains(
            "Attempts: up to 4 (the first and 3 retries).",
            "each at most: 0.2 + 0.4 + 0.8 = 1.4 s of waiting",
            "Full jitter draws each from 0 to its cap");
  }

  /** The first line is the answer: the deadline, or the shorter call timeout, at worst. */
  @Test
  void itLeadsWithTheBindingFigure() {
    RetryPolicy fiveSeconds = seed().deadline(Duration.ofSeconds(5)).build();
    assertThat(lines(fiveSeconds.explain()).get(0))
        .isEqualTo("At worst 5 s: the deadline bounds the whole call, attempts and waits.");
    assertThat(lines(fiveSeconds.explain(client())).get(0))
        .isEqualTo("At worst 5 s: the deadline bounds the whole call, attempts and waits.");
    OkHttpClient withCallTimeout = client().newBuilder().callTimeout(2, TimeUnit.SECONDS).build();
    assertThat(lines(fiveSeconds.explain(withCallTimeout)).get(0))
        .isEqualTo("At worst 2 s: the client's call timeout bounds the whole call.");
    assertThat(lines(seed().build().explain(withCallTimeout)).get(0))
        .isEqualTo("At worst 2 s: the client's call timeout bounds the whole call.");
  }

  /**
   * Without a deadline or call timeout nothing bounds the call, and the first line says so; the
   * figure it gives counts every attempt timing out, every wait at the longer of its backoff and
   * {@code maxRetryAfter}, and a quota's hold before each attempt.
   */
  @Test
  void withoutABoundItSaysSoAndAddsUpEveryPart() {
    // 6 × 6 s; waits max(1, 2, 4, 8, 16 s; 60 s) = 5 × 60 s; holds 6 × 60 s
    assertThat(lines(seed().build().explain(client())).get(0))
        .isEqualTo(
            "At worst: no bound. No deadline or call timeout bounds the call. If each attempt is"
                + " one request that times out once: 6 × 6 s + 300 s of waits + 360 s of quota"
                + " holds = 696 s.");
    assertThat(lines(seed().quotaPacing(QuotaPacing.OFF).build().explain(client())).get(0))
        .endsWith("6 × 6 s + 300 s of waits = 336 s.");
    assertThat(lines(seed().build().explain()).get(0))
        .isEqualTo(
            "At worst: no bound set. No deadline: the attempts take what the client's timeouts"
                + " allow (explain(client) adds them up), the waits and holds up to 660 s.");
    OkHttpClient noReadTimeout = client().newBuilder().readTimeout(0, TimeUnit.SECONDS).build();
    assertThat(seed().build().explain(noReadTimeout))
        .startsWith("At worst: no bound. No deadline or call timeout bounds the call, and this")
        .contains("Each attempt: connect 1 s, write 2 s, read none: no bound.");
  }

  /** A server's Retry-After replaces a wait up to maxRetryAfter: each wait counts the longer. */
  @Test
  void eachWaitCountsMaxRetryAfterWhereItIsLonger() {
    assertThat(RetryPolicy.builder().build().explain())
        .contains(
            "Retry-After: a server wait replaces a backoff, up to 60 s each (maxRetryAfter), so the"
                + " waits come to up to 180 s; a longer one ends the call.");
    // caps 100, 200 and 400 s against a ceiling of 150 s: 150 + 200 + 400
    assertThat(
            quietRetry()
                .baseDelay(Duration.ofSeconds(100))
                .maxDelay(Duration.ofSeconds(1000))
                .maxRetries(3)
                .maxRetryAfter(Duration.ofSeconds(150))
                .build()
                .explain())
        .contains("so the waits come to up to 750 s;");
  }

  /** The waits it states are the ones a server's Retry-After at the ceiling makes a call wait. */
  @Test
  void itsRetryAfterSumIsWhatAServerAtTheCeilingImposes() throws IOException {
    RetryPolicy policy =
        quietRetry()
            .jitter(Jitter.NONE)
            .retryAfterSpread(0)
            .maxRetryAfter(Duration.ofSeconds(2))
            .retryBudget(RetryBudget.unlimited())
            .quotaPacing(QuotaPacing.OFF)
            .build();
    script.status(503, "Retry-After", "2").status(503, "Retry-After", "2");
    script.status(503, "Retry-After", "2").thenAlways(503);
    code(driver.calls(policy, script, time), get());
    long waited = time.sleeps().stream().mapToLong(Duration::toNanos).sum();
    assertThat(waited).isEqualTo(TimeUnit.SECONDS.toNanos(6));
    assertThat(policy.explain()).contains("so the waits come to up to 6 s;");
  }

  /**
   * A published quota may hold each attempt, and the text counts it; with pacing off it does not.
   */
  @Test
  void itCountsAQuotasHoldBeforeEachAttempt() {
    assertThat(RetryPolicy.builder().build().explain())
        .contains(
            "Quotas: a spent quota the server published may hold each attempt up to 60 s of"
                + " pacing before it goes (quotaPacing), 240 s in all.");
    assertThat(RetryPolicy.builder().quotaPacing(QuotaPacing.OFF).build().explain())
        .doesNotContain("Quotas:");
    assertThat(RetryPolicy.builder().originWideRetryAfter(true).build().explain())
        .contains(
            "Origin gate: a Retry-After to any call may hold each attempt up to 60 s of pacing"
                + " too");
  }

  /** What an attempt takes: the client's timeouts, per operation, afresh for each follow-up. */
  @Test
  void itSaysFollowUpsGetTheTimeoutsAfresh() {
    assertThat(lines(seed().build().explain(client())))
        .contains(
            "Each attempt: connect 1 s + write 2 s + read 3 s = 6 s if its request times out"
                + " once. Each timeout is per operation: a server that trickles bytes holds a"
                + " request longer. Each redirect or auth follow-up (OkHttp makes up to 20) gets"
                + " them afresh.");
    assertThat(seed().deadline(Duration.ofSeconds(3)).build().explain())
        .endsWith("Timeouts: explain(client) adds up the client's and checks them against it.");
  }

  /**
   * A timeout at or above the call's bound (or none) leaves a server that stalls one attempt: the
   * README's client (OkHttp's 10 s defaults) with a 5 s deadline gets the warning, right after the
   * figure.
   */
  @Test
  void itWarnsWhenATimeoutLeavesAStalledAttemptNoTimeToRetry() {
    RetryPolicy fiveSeconds = RetryPolicy.builder().deadline(5, TimeUnit.SECONDS).build();
    assertThat(lines(fiveSeconds.explain(new OkHttpClient())).get(1))
        .isEqualTo(
            "Warning: the connect, write and read timeouts (10 s, 10 s, 10 s) are not below the"
                + " deadline (5 s): a server that stalls keeps the first attempt to the end, and no"
                + " retry is made. Keep them well below, say 1.25 s (the deadline over 4"
                + " attempts).");
    OkHttpClient readAtTheBound =
        client()
            .newBuilder()
            .readTimeout(5, TimeUnit.SECONDS)
            .callTimeout(5, TimeUnit.SECONDS)
            .build();
    assertThat(RetryPolicy.builder().build().explain(readAtTheBound))
        .contains("Warning: the read timeout (5 s) is not below the call timeout (5 s)");
    OkHttpClient noRead = client().newBuilder().readTimeout(0, TimeUnit.SECONDS).build();
    assertThat(fiveSeconds.explain(noRead)).contains("Warning: the read timeout (none)");
    assertThat(fiveSeconds.explain(client())).doesNotContain("Warning");
    assertThat(
            quietRetry()
                .maxRetries(0)
                .deadline(Duration.ofSeconds(5))
                .build()
                .explain(new OkHttpClient()))
        .as("one attempt is all it has anyway")
        .doesNotContain("Warning");
  }

  /** Short lines, not one paragraph: the one that ran 581 characters is now seven lines. */
  @Test
  void itSpeaksInShortLines() {
    String text =
        RetryPolicy.builder().deadline(5, TimeUnit.SECONDS).build().explain(new OkHttpClient());
    assertThat(lines(text))
        .hasSizeGreaterThanOrEqualTo(6)
        .allSatisfy(line -> assertThat(line).hasSizeLessThan(300));
    assertThat(lines(text).get(0)).hasSizeLessThan(80);
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
      Backoff backoff = policy.rules.backoff();
      List<Duration> explained = new ArrayList<>();
      for (int n = 1; n <= policy.settings.maxRetries; n++) {
        explained.add(Duration.ofNanos(backoff.longestNanos(n)));
      }
      assertThat(drawn).containsExactlyElementsOf(explained);
      long total = drawn.stream().mapToLong(Duration::toNanos).sum();
      assertThat(backoff.longestTotalNanos(policy.settings.maxRetries, 0)).isEqualTo(total);
      assertThat(policy.explain()).contains(" = " + Durations.seconds(total) + " s of waiting");
    }
  }

  @Test
  void manyRetriesAreSummedNotListed() {
    String text = quietRetry().maxRetries(Integer.MAX_VALUE).build().explain();
    assertThat(text)
        .contains(
            "0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 6.4 + 10 + 10 + … (2147483639 more, up to 10 s each)"
                + " = more than 9223372036 s of waiting");
    assertThat(RetryPolicy.builder().maxRetries(0).build().explain())
        .contains("Attempts: 1 (no retry).")
        .doesNotContain("Backoff waits", "Retry-After:");
  }

  @Test
  void decorrelatedJitterGrowsThreeTimesTheLast() {
    assertThat(quietRetry().jitter(Jitter.DECORRELATED).build().explain())
        .contains("0.6 + 1.8 + 5.4 = 7.8 s of waiting", "decorrelated jitter");
  }
}
