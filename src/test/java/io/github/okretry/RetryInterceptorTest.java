package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The blocking driver's loop, on fake time with scripted outcomes: the first attempt at once, waits
 * only after a failure, at most {@code maxRetries + 1} attempts, the last failure returned as it is
 * with no final wait; the first attempt a call makes without per-call state; and any valid policy
 * taken.
 */
@Tag("unit")
class RetryInterceptorTest extends ScriptedTest {

  @Nested
  class TheLoop {
    @Test
    void firstSuccessIsOneCallAndNoWait() throws IOException {
      script.status(200);
      try (Response r = client(retry()).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(time.sleeps()).isEmpty();
      assertThat(events.lines()).containsExactly("start 1", "succeeded 1 HTTP 200");
    }

    @Test
    void failTwiceThenSucceedIsThreeCallsAndTwoWaits() throws IOException {
      script.status(503).fail(new SocketTimeoutException("timeout")).status(200);
      try (Response r = client(retry()).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(200);
        assertThat(r.body().string()).isEqualTo("attempt 3");
      }
      assertThat(script.attempts()).isEqualTo(3);
      assertThat(time.sleeps()).hasSize(2);
      assertThat(events.lines())
          .containsExactly(
              "start 1",
              "retry 1 HTTP 503",
              "start 2",
              "retry 2 SocketTimeoutException: timeout",
              "start 3",
              "succeeded 3 HTTP 200");
    }

    @Test
    void maxRetriesZeroIsOneCall() throws IOException {
      script.status(503);
      try (Response r = client(retry().maxRetries(0)).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(503);
      }
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(time.sleeps()).isEmpty();
      assertThat(events.lines()).containsExactly("start 1", "gaveUp 1 RETRIES_EXHAUSTED HTTP 503");
    }

    @Test
    void retryLimitReturnsLastFailureWithoutAFinalWait() throws IOException {
      script.status(503).status(503).status(503).status(429);
      try (Response r = client(retry().maxRetries(3)).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(429);
        assertThat(r.body().string()).isEqualTo("attempt 4"); // the last response, body readable
      }
      assertThat(script.attempts()).isEqualTo(4);
      assertThat(time.sleeps()).hasSize(3);
      // every retried response was closed before the wait; the returned one was left open
      for (int n = 1; n <= 3; n++) {
        assertThat(script.closed(n)).as("response %d closed", n).isTrue();
      }
    }
  }

  /**
   * A call that needs nothing before its first attempt (no deadline, gate, listener or send to
   * track) makes that attempt without per-call state; what follows a failure must not differ.
   */
  @Nested
  class StatelessFirstAttempt {
    @Test
    void successDepositsIntoTheBudgetAndReturnsAtOnce() throws IOException {
      RetryBudget budget = RetryBudget.builder().percentCanRetry(0.5).build();
      assertThat(RetryBudgetTest.withdraw(budget, 0))
          .as("a new budget starts full: make room for a deposit")
          .isTrue();
      double before = budget.availableTokens();
      script.status(404);
      try (Response r =
          script
              .client(
                  RetryInterceptor.create(
                      RetryPolicy.builder().timeSource(time).retryBudget(budget).build()))
              .newCall(get())
              .execute()) {
        assertThat(r.code()).isEqualTo(404);
      }
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(budget.availableTokens() - before)
          .as("a first-attempt success deposits")
          .isEqualTo(0.5);
      assertThat(time.sleeps()).isEmpty();
    }

    @Test
    void aFailedFirstAttemptContinuesAsAnyCallWould() throws IOException {
      script.status(503).fail(new ConnectException("refused")).status(200);
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .timeSource(time)
                  .jitter(Jitter.NONE)
                  .baseDelay(100, TimeUnit.MILLISECONDS)
                  .build());
      try (Response r = script.client(retry).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      assertThat(time.sleepMillis()).containsExactly(100L, 200L);
    }

    @Test
    void aFirstExceptionIsRetriedAndKeptAsSuppressed() {
      ConnectException first = new ConnectException("one");
      ConnectException second = new ConnectException("two");
      script.fail(first).fail(second);
      RetryInterceptor retry =
          RetryInterceptor.create(RetryPolicy.builder().timeSource(time).maxRetries(1).build());
      assertThatThrownBy(() -> script.client(retry).newCall(get()).execute())
          .isSameAs(second)
          .satisfies(e -> assertThat(EarlierFailures.of(e)).containsExactly(first));
    }

    @Test
    void aResponsePredicateIsStillAsked() throws IOException {
      script.status(500).status(200);
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .timeSource(time)
                  .retryOnResponse(r -> r.code() == 418)
                  .retryOnResponse(r -> r.code() == 500)
                  .build());
      try (Response r = script.client(retry).newCall(get()).execute()) {
        assertThat(r.code()).as("the second predicate matched: predicates add up").isEqualTo(200);
      }
      assertThat(script.attempts()).isEqualTo(2);
    }

    @Test
    void aThrowingPredicateEndsTheCallWithAnIOException() {
      script.status(200);
      IllegalStateException bug = new IllegalStateException("bug");
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .timeSource(time)
                  .retryOnResponse(
                      r -> {
                        throw bug;
                      })
                  .build());
      assertThatThrownBy(() -> script.client(retry).newCall(get()).execute())
          .isInstanceOf(IOException.class)
          .hasCause(bug);
      assertThat(script.closed(1)).as("the unread response is closed").isTrue();
    }
  }

  /**
   * Hedging is the factory's: no valid policy is refused by the interceptor, not even one a hedging
   * factory runs.
   */
  @Nested
  class AnyPolicy {
    @Test
    void theInterceptorTakesEveryPolicyEvenOneAHedgingFactoryRuns() throws IOException {
      RetryPolicy policy =
          RetryPolicy.builder()
              .timeSource(time)
              .maxRetries(2)
              .deadline(5, TimeUnit.SECONDS)
              .retryOnStatus(500)
              .originWideRetryAfter(true)
              .quotaPacing(QuotaPacing.PROBE)
              .build();
      script.status(500).status(200);
      try (RetryingCallFactory hedged =
          RetryingCallFactory.create(new OkHttpClient(), policy, HedgingPolicy.adaptive())) {
        RetryInterceptor retry = RetryInterceptor.create(policy);
        try (Response r = script.client(retry).newCall(get()).execute()) {
          assertThat(r.code()).isEqualTo(200);
        }
        assertThat(hedged.policy).isSameAs(policy);
      }
      assertThat(script.attempts()).isEqualTo(2);
    }
  }
}
