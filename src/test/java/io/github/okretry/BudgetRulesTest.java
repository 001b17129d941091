package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A brand-new client with every default, and the budget's rule of one failing call's retries since
 * the last success (docs/semantics.md, "Retry budget"), on both drivers: the first table of issue
 * 29 and what bounds a client whose server keeps failing.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class BudgetRulesTest extends ScriptedTest {

  BudgetRulesTest(Driver driver) {
    this.driver = driver;
  }

  @Test
  void aNewClientThatFailsTwiceThenSucceedsMakesThreeCallsAndTwoWaits() throws IOException {
    script.status(503).status(503).status(200);
    try (Response r = client(retry()).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(script.attempts()).isEqualTo(3);
    assertThat(time.sleeps()).hasSize(2);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  @Test
  void aNewClientsFirstTimeoutIsTriedAgain() throws IOException {
    script.fail(new SocketTimeoutException("timeout")).status(200);
    assertThat(code(client(retry()), get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(2);
  }

  @Test
  void aNewClientThatAlwaysFailsWaitsOneTwoThreeThreeSecondsThenGetsTheLastFailure()
      throws IOException {
    script.status(503).thenAlways(503);
    RetryPolicy.Builder policy =
        retry()
            .maxRetries(4)
            .jitter(Jitter.NONE)
            .baseDelay(Duration.ofSeconds(1))
            .maxDelay(Duration.ofSeconds(3));
    try (Response r = client(policy).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.body().string()).isEqualTo("attempt 5");
    }
    assertThat(time.sleeps())
        .containsExactly(
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            Duration.ofSeconds(3),
            Duration.ofSeconds(3));
    assertThat(events.lines("gaveUp")).containsExactly("gaveUp 5 RETRIES_EXHAUSTED HTTP 503");
  }

  @Test
  void fiftyCallsOneAfterAnotherAgainstRandom503sAllGetThrough() throws IOException {
    // Half of all attempts fail at random; maxRetries(14): a call fails only if 15 in a row do.
    SplittableRandom server = new SplittableRandom(29);
    script.thenAlways(
        (chain, attempt) ->
            Script.response(server.nextBoolean() ? 503 : 200, Headers.of()).play(chain, attempt));
    Call.Factory client = client(retry().maxRetries(14));
    int through = 0;
    for (int i = 0; i < 50; i++) {
      if (code(client, get()) == 200) {
        through++;
      }
    }
    assertThat(through).isEqualTo(50);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  @Test
  void afterOneCallsRetriesWithoutASuccessTheNextFailureIsHeldThroughItsBackoffAndReturnedAsItCame()
      throws IOException {
    script.status(503).thenAlways(503);
    Call.Factory client =
        client(
            retry()
                .jitter(Jitter.NONE)
                .baseDelay(Duration.ofSeconds(1))
                .maxDelay(Duration.ofSeconds(3)));
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(script.attempts()).as("the first call's 3 retries").isEqualTo(4);
    assertThat(time.sleeps()).hasSize(3);
    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).as("the server's own response").isEqualTo(503);
      assertThatThrownBy(() -> r.body().string())
          .as("but no body is kept through the waits, and reading it says so")
          .isInstanceOf(IOException.class)
          .hasMessageContaining("body of this HTTP 503 was not kept");
    }
    assertThat(script.attempts())
        .as("one attempt: no retry sent, since no call to the origin succeeded")
        .isEqualTo(5);
    // Skipped: it waits as it would have without a budget (1, 2, 3 s, each attempt not sent
    // taken to fail as the last did, here at once), and a quarter of its base delay more at the
    // end, in case the origin answers a call meanwhile.
    assertThat(time.sleeps().subList(3, time.sleeps().size()))
        .containsExactly(
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            Duration.ofSeconds(3),
            Duration.ofMillis(250));
    assertThat(events.lines())
        .endsWith("start 1", "retry 1 HTTP 503", "gaveUp 1 NO_RECENT_SUCCESS HTTP 503");
  }

  @Test
  void aHeldRetryGoesOnceAnotherCallToItsOriginSucceeds() throws IOException {
    script
        .status(503)
        .status(503)
        .status(503)
        .status(503) // one call's retries, all failed
        .status(503) // the next call's first attempt: its retry is held
        .status(200) // another call, during the held wait: evidence
        .status(200); // the held retry, sent
    Call.Factory client = client(retry());
    assertThat(code(client, get())).isEqualTo(503);
    time.duringNextWait(() -> anotherCallSucceeds(client));
    assertThat(code(client, get())).as("held, then sent once the origin answered").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(7);
    assertThat(events.lines("gaveUp")).containsExactly("gaveUp 4 RETRIES_EXHAUSTED HTTP 503");
  }

  @Test
  void aSuccessLetsTheNextFailingCallRetryAgain() throws IOException {
    script
        .status(503)
        .status(503)
        .status(503)
        .status(503) // one call's retries, all failed
        .status(503) // held, never sent: no success since
        .status(200) // a success
        .status(503)
        .status(200); // retried again
    Call.Factory client = client(retry());
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(8);
  }

  @Test
  void aResponseThatIsNoSignOfAWorkingServerIsNoSuccess() throws IOException {
    // A 500 the policy does not retry is the caller's answer, not evidence that retrying works.
    script.status(503).status(503).status(503).status(503).status(500).status(503);
    Call.Factory client = client(retry());
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(code(client, get())).isEqualTo(500);
    assertThat(code(client, get())).as("still no success: not retried").isEqualTo(503);
    assertThat(script.attempts()).isEqualTo(6);
    assertThat(events.lines("gaveUp")).last().isEqualTo("gaveUp 1 NO_RECENT_SUCCESS HTTP 503");
  }

  @Test
  void aRetryThatWaitsOutARetryAfterCountsHalf() throws IOException {
    // Six Retry-After retries make one call's worth (maxRetries 3): two calls of three each.
    script.thenAlways(Script.response(503, Headers.of("Retry-After", "1")));
    Call.Factory client = client(retry());
    for (int i = 0; i < 3; i++) assertThat(code(client, get())).isEqualTo(503);
    assertThat(script.attempts()).as("4 + 4 + 1").isEqualTo(9);
    assertThat(events.lines("gaveUp"))
        .containsExactly(
            "gaveUp 4 RETRIES_EXHAUSTED HTTP 503",
            "gaveUp 4 RETRIES_EXHAUSTED HTTP 503",
            "gaveUp 1 NO_RECENT_SUCCESS HTTP 503");
  }

  @Test
  void aRateLimitersRefusalIsRetriedEvenAfterOneCallsRetriesWithoutASuccess() throws IOException {
    // A 429 with Retry-After is a working server pacing this client: its retry waits as told and
    // costs half a token, but is not counted (a burst meets a limiter's refusals after its
    // successes). A 503's is: unavailable.
    RetryBudget budget = RetryBudget.builder().build();
    script
        .status(503)
        .status(503)
        .status(503)
        .status(503) // one call's retries, none succeeded
        .status(429, "Retry-After", "1")
        .status(429, "Retry-After", "1")
        .status(200)
        .status(503, "Retry-After", "1")
        .status(200);
    Call.Factory client = client(retry().retryBudget(budget));
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(code(client, get())).as("throttled twice, then through").isEqualTo(200);
    assertThat(budget.availableTokens())
        .as("the retry that succeeded paid back")
        .isEqualTo(100 - 3 - 0.5);
    assertThat(code(client, get()))
        .as("a success since: a 503's Retry-After is honoured")
        .isEqualTo(200);
    assertThat(events.lines("gaveUp")).containsExactly("gaveUp 4 RETRIES_EXHAUSTED HTTP 503");
  }

  @Test
  void aWaitTheServerAskedForOnAnyStatusIsNotCounted() throws IOException {
    // GitHub's secondary rate limit: a 403 with Retry-After, retried by a user who asks for it.
    script
        .status(503)
        .status(503)
        .status(503)
        .status(503) // one call's retries, none succeeded
        .status(403, "Retry-After", "1")
        .status(403, "Retry-After", "1")
        .status(200);
    Call.Factory client = client(retry().retryOnStatus(403));
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(code(client, get())).as("paced by the server, not held").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(7);
  }

  @Test
  void theStrictRuleReturnsANewClientsFirstErrorAtOnceButHonoursARetryAfter() throws IOException {
    script
        .status(503)
        .status(503, "Retry-After", "1")
        .status(200)
        .fail(new ConnectException("refused"))
        .status(200);
    RetryBudget strict = RetryBudget.builder().retryBeforeFirstSuccess(false).build();
    Call.Factory client = client(retry().retryBudget(strict));
    assertThat(code(client, get())).as("no success yet: returned as it is").isEqualTo(503);
    assertThat(time.sleeps()).isEmpty();
    assertThat(code(client, get())).as("the server said when").isEqualTo(200);
    assertThat(code(client, get())).as("after a success, errors are retried").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(5);
    assertThat(events.lines("gaveUp")).containsExactly("gaveUp 1 NO_RECENT_SUCCESS HTTP 503");
  }

  @Test
  void whileFailuresAreRareARetryThatSucceedsIsFreeAndOneThatFailsCostsOne() throws IOException {
    RetryBudget budget = RetryBudget.builder().build();
    script
        .fail(new SocketTimeoutException("timeout"))
        .status(200) // a lossy link: a stall, then through
        .fail(new SocketTimeoutException("timeout"))
        .fail(new SocketTimeoutException("timeout"))
        .status(200)
        .fail(new ConnectException("refused"))
        .status(200);
    Call.Factory client = client(retry().retryBudget(budget));
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens()).as("paid back: it succeeded").isEqualTo(100.0);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens())
        .as("a timeout's retry that timed out: one token")
        .isEqualTo(99.0);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(budget.availableTokens()).isEqualTo(99.0);
  }

  @Test
  void whileFailuresAreCommonARetryAfterATimeoutCostsFourteenAndNothingIsPaidBack()
      throws IOException {
    RetryBudget budget = RetryBudget.builder().build();
    // An overload: a run of timeouts, until a third of the recent answers are failures (about 26).
    for (int i = 0; i < 30; i++) script.fail(new SocketTimeoutException("timeout"));
    script.status(200);
    Call.Factory client =
        client(retry().retryBudget(budget).maxRetries(40).maxDelay(Duration.ofMillis(1)));
    assertThat(code(client, get())).isEqualTo(200);
    double spent = 100.0 - budget.availableTokens();
    // Retries 1 to about 26 at one token each, the last few at fourteen, the one that succeeded
    // not paid back: failures are still common when it does.
    assertThat(spent).isBetween(24.0 + 14 * 3, 28.0 + 14 * 5);
  }

  @Test
  void aHeldCallCanceledDuringItsWaitThrowsWithTheFailureItHeld() {
    for (int i = 0; i < 4; i++) script.fail(new ConnectException("refused " + i));
    script.fail(new ConnectException("held one")).thenAlways(200);
    Call.Factory client = client(retry());
    assertThat(catchThrowable(() -> client.newCall(get()).execute()))
        .isInstanceOf(ConnectException.class);
    Call call = client.newCall(get());
    time.duringNextWait(call::cancel);
    Throwable thrown = catchThrowable(call::execute);
    assertThat(thrown).isInstanceOf(IOException.class).hasMessageContaining("Canceled");
    assertThat(thrown.getSuppressed())
        .as("the held failure rides on it, as a paid retry's does")
        .anySatisfy(s -> assertThat(s).hasMessage("held one"));
    assertThat(script.attempts()).isEqualTo(5);
  }

  @Test
  void aRetryCanceledDuringItsWaitCostsNothing() {
    RetryBudget budget = RetryBudget.builder().build();
    script.status(503).thenAlways(200);
    Call call = client(retry().retryBudget(budget)).newCall(get());
    time.duringNextWait(call::cancel);
    Throwable thrown = catchThrowable(call::execute);
    assertThat(thrown).isInstanceOf(IOException.class).hasMessageContaining("Canceled");
    assertThat(budget.availableTokens()).as("never sent, given back").isEqualTo(100.0);
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void aRetryTheOriginGateThrottlesAfterItsWaitCostsNothing() throws IOException {
    // During the wait before the call's retry, another call's 503 closes the origin for 30 s,
    // longer than the call has left: it ends at the gate with a local response, nothing sent,
    // and the token its retry was paid is given back.
    RetryBudget budget = RetryBudget.builder().build();
    script.status(503).status(503, "Retry-After", "30");
    Call.Factory client =
        client(
            retry().retryBudget(budget).originWideRetryAfter(true).deadline(Duration.ofSeconds(5)));
    time.duringNextWait(() -> anotherCallSucceeds(client));
    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.message()).isEqualTo("Throttled locally by okretry: origin asked to wait");
    }
    assertThat(script.attempts()).isEqualTo(2);
    assertThat(budget.availableTokens()).isEqualTo(100.0);
    assertThat(events.lines("gaveUp")).contains("gaveUp 1 ORIGIN_THROTTLED HTTP 503 (origin)");
  }

  @Test
  void aSkippedCallWhoseDeadlineRunsOutEndsDeadlineExceededNoLaterThanItsDeadline()
      throws IOException {
    // Two policies on one budget: the first spends its origin's count, the second's call is
    // skipped until its deadline cannot fit another wait. Each attempt takes 300 ms, so a skipped
    // attempt is taken to fail as slowly.
    RetryBudget budget = RetryBudget.builder().build();
    script.thenAlways(
        (chain, attempt) -> {
          time.advance(Duration.ofMillis(300));
          return Script.response(503, Headers.of()).play(chain, attempt);
        });
    RetryPolicy.Builder slow =
        retry()
            .retryBudget(budget)
            .jitter(Jitter.NONE)
            .baseDelay(Duration.ofSeconds(1))
            .maxDelay(Duration.ofSeconds(3));
    assertThat(code(client(slow), get())).isEqualTo(503);
    assertThat(script.attempts()).isEqualTo(4);
    int before = time.sleeps().size();
    long startNanos = time.nanoTime();
    Duration deadline = Duration.ofMillis(3_500);
    Call.Factory bounded = client(slow.deadline(deadline));
    try (Response r = bounded.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(RetryOutcome.of(r).giveUpReason()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
    }
    List<Duration> waits = time.sleeps().subList(before, time.sleeps().size());
    assertThat(waits)
        .as("its retry's wait, then one skipped (2 s and the 300 ms its attempt took, cut to fit)")
        .hasSize(2);
    assertThat(waits.stream().reduce(Duration.ZERO, Duration::plus))
        .as("its waits: %s", waits)
        .isLessThanOrEqualTo(deadline);
    assertThat(time.nanoTime() - startNanos)
        .as("its attempt and its waits")
        .isLessThanOrEqualTo(deadline.toNanos());
    assertThat(script.attempts()).as("nothing sent after its first attempt").isEqualTo(5);
    assertThat(events.lines("gaveUp")).last().asString().startsWith("gaveUp 1 DEADLINE_EXCEEDED");
  }

  @Test
  void aSkippedCallsLastRetryGoesWhenAnotherCallToItsOriginSucceedsDuringTheGraceWait()
      throws IOException {
    RetryBudget budget = RetryBudget.builder().build();
    script
        .status(503)
        .status(503)
        .status(503)
        .status(503) // one call's retries, all failed
        .status(503) // the next call's first attempt: its retries are skipped
        .status(200) // another call, during the last wait, a moment past the backoff
        .status(200); // the last retry, sent
    Call.Factory client =
        client(
            retry()
                .retryBudget(budget)
                .jitter(Jitter.NONE)
                .baseDelay(Duration.ofSeconds(1))
                .maxDelay(Duration.ofSeconds(3)));
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(budget.availableTokens()).isEqualTo(97.0);
    int before = time.sleeps().size();
    duringWait(4, () -> anotherCallSucceeds(client));
    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).isEqualTo("attempt 7");
      assertThat(RetryOutcome.of(r).attempts()).as("its first and its last").isEqualTo(2);
    }
    assertThat(time.sleeps().subList(before, time.sleeps().size()))
        .as("its backoff, then a quarter of its base delay, during which the origin answered")
        .containsExactly(
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            Duration.ofSeconds(3),
            Duration.ofMillis(250));
    assertThat(script.attempts()).isEqualTo(7);
    assertThat(budget.availableTokens())
        .as("the other call's deposit; the retry that went paid 1 and, succeeding, got it back")
        .isCloseTo(97.2, within(1e-9));
    assertThat(events.lines("gaveUp")).containsExactly("gaveUp 4 RETRIES_EXHAUSTED HTTP 503");
  }

  @Test
  void afterItsOriginFailedEverythingForTwoSchedulesANewCallsFailureEndsAtOnceWithItsBody()
      throws IOException {
    script.status(503).thenAlways(503);
    Call.Factory client = client(retry());
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(script.attempts()).as("one call's retries").isEqualTo(4);
    // Nothing answered since: 3 s after its first failure, more than two 1.4 s schedules.
    time.advance(Duration.ofSeconds(3));
    int waits = time.sleeps().size();
    try (Response r = client.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.body().string()).as("the response in hand, body and all").isEqualTo("attempt 5");
      RetryOutcome outcome = RetryOutcome.of(r);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
      assertThat(outcome.attempts()).isEqualTo(1);
    }
    assertThat(time.sleeps()).as("no wait at all").hasSize(waits);
    assertThat(script.attempts()).as("1 request").isEqualTo(5);
    assertThat(events.lines("gaveUp")).last().isEqualTo("gaveUp 1 NO_RECENT_SUCCESS HTTP 503");
  }

  @Test
  void aDeadPathBesideALivePathGetsOneRequestPerCallOnceItsFirstCallsRetriesFailed()
      throws IOException {
    // One origin: /dead fails everything, every other path answers. The live path's successes
    // end the origin's streak, not the dead path's.
    script.thenAlways(
        (chain, attempt) ->
            Script.response(
                    chain.request().url().encodedPath().equals("/dead") ? 503 : 200, Headers.of())
                .play(chain, attempt));
    Request dead = new Request.Builder().url("http://example.test/dead").build();
    Call.Factory client = client(retry());
    assertThat(code(client, get())).isEqualTo(200);
    duringEveryWait(() -> anotherCallSucceeds(client));
    for (int i = 0; i < 3; i++) assertThat(code(client, dead)).isEqualTo(503);
    time.takeDuringNextWait();
    assertThat(requestsTo("/dead"))
        .as("the first call's 3 retries, then 1 request a call")
        .isEqualTo(4 + 1 + 1);
    assertThat(requestsTo("/a"))
        .as("every live call sent once")
        .isEqualTo(1 + time.sleeps().size());
    assertThat(script.returned().stream().filter(r -> r.code() == 200).count())
        .isEqualTo(requestsTo("/a"));
    assertThat(events.lines("gaveUp"))
        .containsExactly(
            "gaveUp 4 RETRIES_EXHAUSTED HTTP 503",
            "gaveUp 1 NO_RECENT_SUCCESS HTTP 503",
            "gaveUp 1 NO_RECENT_SUCCESS HTTP 503");
  }

  @Test
  void nothingIsPaidForARetrySkipped() throws IOException {
    RetryBudget budget = RetryBudget.builder().build();
    script.status(503).thenAlways(503);
    Call.Factory client = client(retry().retryBudget(budget));
    assertThat(code(client, get())).isEqualTo(503);
    assertThat(budget.availableTokens()).as("3 retries paid as they left").isEqualTo(97.0);
    List<Double> duringItsWaits = new ArrayList<>();
    duringEveryWait(() -> duringItsWaits.add(budget.availableTokens()));
    assertThat(code(client, get())).isEqualTo(503);
    time.takeDuringNextWait();
    assertThat(script.attempts()).as("its retries skipped").isEqualTo(5);
    assertThat(duringItsWaits).hasSize(4).containsOnly(97.0);
    assertThat(budget.availableTokens()).as("nothing paid, nothing to give back").isEqualTo(97.0);
  }

  /**
   * A regression test (found while issue 42's budget was written): a retry that waits out a 503's
   * {@code Retry-After} of more than 30 s (the default {@code maxRetryAfter} is 60 s) finds its
   * origin forgotten and opens a new streak when it leaves, and its success must end it (it did
   * not: {@code OriginStreaks.succeeded} returned early, as nothing had failed within the memory).
   * The next blip's call then sees that streak's half and its start 4 s back, and its third retry
   * was refused at the decision as if the origin had failed everything for two schedules: 3
   * requests and the 503 ({@code NO_RECENT_SUCCESS}), where a call after a success gets its 3
   * retries and the 200.
   */
  @Test
  void aBlipAfterALongRetryAfterThatSucceededGetsItsRetries() throws IOException {
    script
        .status(503, "Retry-After", "45")
        .status(200) // its retry, 45 s later
        .status(503)
        .status(503)
        .status(503)
        .status(200); // a blip 4 s later: the third retry answers
    Call.Factory client = client(retry().retryAfterSpread(0));
    assertThat(code(client, get())).isEqualTo(200);
    time.advance(Duration.ofSeconds(4));
    assertThat(code(client, get())).as("a call after a success gets its 3 retries").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(6);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  /** Runs {@code r} once the {@code n}-th wait from now has begun (1: the next). */
  private void duringWait(int n, Runnable r) {
    time.duringNextWait(n == 1 ? r : () -> duringWait(n - 1, r));
  }

  /** Runs {@code r} in every wait from now on, until {@code time.takeDuringNextWait()}. */
  private void duringEveryWait(Runnable r) {
    time.duringNextWait(
        () -> {
          r.run();
          duringEveryWait(r);
        });
  }

  private long requestsTo(String path) {
    return script.requests().stream().filter(q -> q.url().encodedPath().equals(path)).count();
  }

  /**
   * A regression test (a review of issue 42's budget): {@code /p5154}'s path slot was its origin's
   * own, so each of its retries counted twice on one slot and the third was skipped; a new client
   * that fails three times and then succeeds gets its success on every path.
   */
  @Test
  void aNewClientThatFailsThreeTimesThenSucceedsGetsItsSuccessOnEveryPath() throws IOException {
    for (String path : new String[] {"/p5154", "/p5464", "/p10910", "/p5155"}) {
      script.status(503).status(503).status(503).status(200);
      Request r = new Request.Builder().url("http://example.test" + path).build();
      assertThat(code(client(retry()), r)).as(path).isEqualTo(200);
    }
  }
}
