package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 30 items 6 and 7 for one call at a time, on both drivers and fake time: a retried refusal
 * without {@code Retry-After} whose published quota is spent waits for that quota's reset as if it
 * were its {@code Retry-After} (within {@code maxRetryAfter}, the deadline and the spread), not for
 * the backoff; and a bucket GitHub names ({@code X-RateLimit-Resource: core}) holds the paths it
 * covers, not only the one that reported it. The crowd: {@link GitHubLimitsTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class QuotaResetRetryTest extends ScriptedTest {

  QuotaResetRetryTest(Driver driver) {
    this.driver = driver;
  }

  static final String DATE =
      DateTimeFormatter.RFC_1123_DATE_TIME.format(NOW.atZone(ZoneOffset.UTC));

  /**
   * GitHub's primary rate limit as a 403 (or 200) sends it: epoch reset, {@code Date}, no {@code
   * Retry-After}.
   */
  static String[] github(int remaining, long resetInSeconds, String resource) {
    return new String[] {
      "X-RateLimit-Limit",
      "10",
      "X-RateLimit-Remaining",
      Integer.toString(remaining),
      "X-RateLimit-Used",
      Integer.toString(10 - remaining),
      "X-RateLimit-Reset",
      Long.toString(NOW.getEpochSecond() + resetInSeconds),
      "X-RateLimit-Resource",
      resource,
      "Date",
      DATE,
    };
  }

  static String[] with(String[] headers, String... more) {
    String[] all = java.util.Arrays.copyOf(headers, headers.length + more.length);
    System.arraycopy(more, 0, all, headers.length, more.length);
    return all;
  }

  /**
   * What GitHub's docs ask of a client: retry a 403 that carries Retry-After or says the quota is
   * spent.
   */
  RetryPolicy.Builder githubClient() {
    return retry()
        .retryAfterSpread(0)
        .maxRetryAfter(Duration.ofSeconds(10))
        .retryOnResponse(
            r ->
                r.code() == 403
                    && (r.header("Retry-After") != null
                        || "0".equals(r.header("X-RateLimit-Remaining"))));
  }

  static Request get(String path) {
    return new Request.Builder().url("http://example.test" + path).build();
  }

  int code(Call.Factory client, String path) throws IOException {
    try (Response r = client.newCall(get(path)).execute()) {
      return r.code();
    }
  }

  // ---- item 6: the reset as the retry's Retry-After ----------------------------------------

  @Test
  void aRefused403WhoseQuotaIsSpentWaitsForItsResetNotForTheBackoff() throws IOException {
    script.status(403, github(0, 2, "core")).status(200, github(9, 2, "core"));
    assertThat(code(client(githubClient()), "/issues/1")).isEqualTo(200);
    // Before: the backoff (Full Jitter under 200 ms), then the pacer's hold for the rest.
    assertThat(time.sleepMillis().get(0))
        .as("the retry's own wait: to the reset")
        .isEqualTo(2_000L);
    assertThat(total(time.sleepMillis()))
        .as("then at most this process's offset past it")
        .isBetween(2_000L, 2_050L);
  }

  /** A spent quota whose reset is 0 in each header family that can say so (issue 35). */
  static String[][] resetZero() {
    return new String[][] {
      {"RateLimit", "\"default\";r=0;t=0"},
      {"X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "0"},
      github(0, 0, "core"),
      {"X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "0.000"},
    };
  }

  @Test
  void aDeadServersFiveHundredsCountWhateverQuotaTheyClaimIsSpent() throws IOException {
    // A 503 that waits out a spent quota's reset counts half, as one with Retry-After does: only a
    // 4xx's wait is a working server pacing this client (issue 35 review: 4.00 requests a call).
    script.thenAlways(Script.response(503, okhttp3.Headers.of(github(0, 2, "core"))));
    Call.Factory client = client(retry().retryAfterSpread(0));
    for (int i = 0; i < 5; i++) assertThat(code(client, "/a")).isEqualTo(503);
    assertThat(script.attempts())
        .as("4 + 4 (six halves), then one a call: held")
        .isEqualTo(4 + 4 + 1 + 1 + 1);
  }

  @Test
  void aResetOfZeroIsNoResetTheBackoffAppliesAndTheRetriesCount() throws IOException {
    // Floored whole seconds: 0 is "within the second", not "now". Read as now, a crowd retried at
    // once, 4 requests a call; as no reset, a 429 is retried as one without quota headers.
    for (String[] headers : resetZero()) {
      script.thenAlways(Script.response(429, okhttp3.Headers.of(headers)));
      Call.Factory client = client(retry().retryAfterSpread(0).jitter(Jitter.NONE));
      int before = script.attempts();
      int slept = time.sleepMillis().size();
      assertThat(code(client, "/a")).isEqualTo(429);
      assertThat(time.sleepMillis().subList(slept, slept + 3))
          .as("the backoff, not 0: %s", java.util.Arrays.toString(headers))
          .containsExactly(200L, 400L, 800L);
      assertThat(code(client, "/a")).isEqualTo(429);
      assertThat(script.attempts() - before)
          .as("counted: one call's retries, then held and not sent")
          .isEqualTo(4 + 1);
    }
  }

  static long total(List<Long> sleeps) {
    return sleeps.stream().mapToLong(Long::longValue).sum();
  }

  @Test
  void a429WithASpentIetfQuotaAndNoRetryAfterWaitsItsT() throws IOException {
    script.status(429, "RateLimit", "\"default\";r=0;t=3").status(200);
    assertThat(code(client(retry().retryAfterSpread(0)), "/a")).isEqualTo(200);
    assertThat(time.sleepMillis().get(0)).isEqualTo(3_000L);
    assertThat(total(time.sleepMillis())).isBetween(3_000L, 3_050L);
  }

  @Test
  void theResetIsSpreadUpwardAsARetryAfterIs() throws IOException {
    script.status(403, github(0, 2, "core")).status(200);
    assertThat(code(client(githubClient().retryAfterSpread(0.5)), "/issues/1")).isEqualTo(200);
    assertThat(time.sleepMillis().get(0)).isBetween(2_000L, 3_000L);
  }

  @Test
  void theLatestResetOfTheSpentQuotasIsWaitedFor() throws IOException {
    script
        .status(429, "RateLimit", "\"hour\";r=0;t=4, \"minute\";r=5;t=9, \"second\";r=0;t=1")
        .status(200);
    assertThat(code(client(retry().retryAfterSpread(0)), "/a")).isEqualTo(200);
    assertThat(time.sleepMillis().get(0)).as("hour's: minute's is not spent").isEqualTo(4_000L);
  }

  @Test
  void aResetPastMaxRetryAfterEndsTheCallAtOnceWithTheRefusal() throws IOException {
    script.status(403, github(0, 30, "core")).thenAlways(403);
    assertThat(code(client(githubClient()), "/issues/1")).isEqualTo(403);
    // Before: three backoff retries, each sent because the quota's 30 s did not fit the 10 s
    // ceiling, each refused again.
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("RETRY_AFTER_TOO_LONG");
  }

  @Test
  void aResetPastTheDeadlineEndsTheCallAtOnce() throws IOException {
    script.status(403, github(0, 5, "core")).thenAlways(403);
    assertThat(code(client(githubClient().deadline(Duration.ofSeconds(3))), "/issues/1"))
        .isEqualTo(403);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("DEADLINE_EXCEEDED");
  }

  @Test
  void retryAfterTakesPrecedenceOverTheReset() throws IOException {
    script.status(403, with(github(0, 3, "core"), "Retry-After", "1")).status(200);
    assertThat(code(client(githubClient()), "/issues/1")).isEqualTo(200);
    assertThat(time.sleepMillis().get(0)).isEqualTo(1_000L);
  }

  @ParameterizedTest(name = "RateLimit: {0}")
  @ValueSource(strings = {"\"default\";r=1;t=3", "\"default\";r=0"})
  void aQuotaNotSpentOrWithoutAResetLeavesTheBackoff(String rateLimit) throws IOException {
    script.status(429, "RateLimit", rateLimit).status(200);
    assertThat(code(client(retry().retryAfterSpread(0)), "/a")).isEqualTo(200);
    // Full Jitter's first cap; a spent quota without a reset is then asked again after 50 ms at
    // most.
    assertThat(time.sleepMillis().get(0)).isLessThanOrEqualTo(200L);
    assertThat(total(time.sleepMillis())).isLessThanOrEqualTo(250L);
  }

  @Test
  void offReadsNoReset() throws IOException {
    script.status(403, github(0, 2, "core")).status(200);
    assertThat(code(client(githubClient().quotaPacing(QuotaPacing.OFF)), "/issues/1"))
        .isEqualTo(200);
    assertThat(time.sleepMillis())
        .singleElement()
        .satisfies(ms -> assertThat(ms).isLessThanOrEqualTo(200L));
  }

  @Test
  void a429WaitingForItsResetCostsHalfATokenAsARetryAfterDoes() throws IOException {
    RetryBudget budget = RetryBudget.builder().build();
    script
        .status(429, "RateLimit", "\"default\";r=0;t=1")
        .status(429, "RateLimit", "\"default\";r=0;t=1")
        .status(200);
    assertThat(code(client(retry().retryAfterSpread(0).retryBudget(budget)), "/a")).isEqualTo(200);
    assertThat(budget.availableTokens())
        .as("half for the retry that met the limit again; the one that succeeded is paid back")
        .isEqualTo(99.5);
  }

  // ---- item 7: a named bucket covers the paths of its origin ------------------------------

  @Test
  void aSpentCoreBucketHoldsACallToAnotherPathUntilItsReset() throws IOException {
    script.status(200, github(0, 2, "core")).status(200, github(9, 2, "core"));
    Call.Factory client = client(githubClient());
    assertThat(code(client, "/issues/0")).isEqualTo(200);
    assertThat(code(client, "/repos/o/r/pulls")).isEqualTo(200);
    // Before: sent at once, since the bucket gated only /issues/0.
    List<Long> sleeps = time.sleepMillis();
    assertThat(sleeps)
        .as("held to the reset, plus this process's offset of at most 50 ms")
        .hasSize(1);
    assertThat(sleeps.get(0)).isBetween(2_000L, 2_050L);
  }

  @Test
  void aSpentSearchBucketHoldsSearchesButNotTheCorePaths() throws IOException {
    script
        .status(200, github(5, 2, "core"))
        .status(200, github(0, 8, "search"))
        .status(200, github(4, 2, "core"))
        .status(200, github(9, 8, "search"));
    Call.Factory client = client(githubClient());
    assertThat(code(client, "/issues/0")).isEqualTo(200);
    assertThat(code(client, "/search/issues")).isEqualTo(200);
    assertThat(code(client, "/issues/1")).isEqualTo(200);
    assertThat(time.sleepMillis()).as("core is not held by search").isEmpty();
    assertThat(code(client, "/search/repositories")).isEqualTo(200);
    assertThat(time.sleepMillis())
        .as("a search path goes by search")
        .singleElement()
        .satisfies(ms -> assertThat(ms).isBetween(8_000L, 8_050L));
  }
}
