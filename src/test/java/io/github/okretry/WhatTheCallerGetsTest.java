package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the caller gets when a call ends on a failure: the last exception as it was thrown, the
 * earlier ones as its suppressed (bounded: the first 3, the last 5, one marker for the rest); a
 * predicate that throws ends the call with an IOException carrying it; a bug below okretry reaches
 * the caller as it is. The last response returned with its body open, every retried one closed:
 * {@link RetryInterceptorTest}. The bounded list itself: {@code internal/FailureHistoryTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class WhatTheCallerGetsTest extends ScriptedTest {

  WhatTheCallerGetsTest(Driver driver) {
    this.driver = driver;
  }

  @Nested
  class SuppressedHistory {
    @Test
    void theLastExceptionCarriesEarlierOnesAsSuppressed() {
      IOException first = new ConnectException("refused");
      IOException second = new SocketTimeoutException("timeout");
      IOException last = new SocketTimeoutException("timeout again");
      script.fail(first).fail(second).fail(last);
      assertThatThrownBy(() -> client(retry().maxRetries(2)).newCall(get()).execute())
          .isSameAs(last)
          .satisfies(e -> assertThat(EarlierFailures.of(e)).containsExactly(first, second));
      assertThat(time.sleeps()).hasSize(2);
    }

    /**
     * Every attempt fails with a new, numbered exception; on fake time 50 000 retries take a
     * second.
     */
    static IOException failAfter(int maxRetries) {
      Script server =
          new Script().thenAlwaysFail(attempt -> new SocketTimeoutException("timeout " + attempt));
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .timeSource(new FakeTime())
                  .maxRetries(maxRetries)
                  .maxDelay(Duration.ofMillis(1))
                  .retryBudget(RetryBudget.unlimited())
                  .build());
      List<IOException> thrown = new ArrayList<>();
      assertThatThrownBy(() -> server.client(retry).newCall(get()).execute())
          .isInstanceOf(SocketTimeoutException.class)
          .satisfies(e -> thrown.add((IOException) e));
      assertThat(server.attempts()).isEqualTo(maxRetries + 1);
      return thrown.get(0);
    }

    static List<String> messages(Throwable[] suppressed) {
      List<String> out = new ArrayList<>();
      for (Throwable t : suppressed) out.add(t.getMessage());
      return out;
    }

    @Test
    void fiftyThousandRetriesLeaveNineSuppressed() {
      IOException last = failAfter(50_000);
      assertThat(last).hasMessage("timeout 50001");
      assertThat(messages(EarlierFailures.of(last)))
          .containsExactly(
              "timeout 1",
              "timeout 2",
              "timeout 3",
              "okretry: 49992 earlier failures omitted (failures 4 to 49995); the first 3 and the"
                  + " last 5 are kept",
              "timeout 49996",
              "timeout 49997",
              "timeout 49998",
              "timeout 49999",
              "timeout 50000");
      assertThat(last.getSuppressed()[3]).isInstanceOf(IOException.class);
      assertThat(last.getSuppressed()[3].getStackTrace()).isEmpty();
    }

    @Test
    void upToEightEarlierFailuresAreAllKeptWithoutAMarker() {
      assertThat(messages(EarlierFailures.of(failAfter(8))))
          .containsExactly(
              "timeout 1",
              "timeout 2",
              "timeout 3",
              "timeout 4",
              "timeout 5",
              "timeout 6",
              "timeout 7",
              "timeout 8");
      assertThat(messages(EarlierFailures.of(failAfter(9))))
          .containsExactly(
              "timeout 1",
              "timeout 2",
              "timeout 3",
              "okretry: 1 earlier failure omitted (failure 4); the first 3 and the last 5 are kept",
              "timeout 5",
              "timeout 6",
              "timeout 7",
              "timeout 8",
              "timeout 9");
    }
  }

  /** As docs/semantics.md says: the predicate's exception is the cause, never thrown as it is. */
  /**
   * Issue 43, item 4: an interceptor below okretry that throws one shared instance (a Kotlin {@code
   * object}, a cached exception, an HTTP/2 connection's failure shared by its streams). The first
   * call that ends with it marks it; each later one gets a fresh IOException with the shared one as
   * its cause, carrying its own history and outcome, so the shared instance does not grow and no
   * call reads another's outcome.
   */
  @Nested
  class SharedInstance {
    @Test
    void aSharedExceptionCarriesOneCallsOutcomeAndLaterCallsGetTheirOwn() {
      IOException shared = new IOException("shared");
      script.thenAlways(
          (chain, attempt) -> {
            throw attempt % 2 == 1 ? new SocketTimeoutException("timeout " + attempt) : shared;
          });
      var calls = client(quietRetry().maxRetries(1).retryBudget(RetryBudget.unlimited()));
      List<Throwable> thrown = new ArrayList<>();
      for (int i = 0; i < 3; i++) thrown.add(catchThrowable(() -> calls.newCall(get()).execute()));
      assertThat(thrown.get(0)).isSameAs(shared);
      long summaries =
          java.util.Arrays.stream(shared.getSuppressed())
              .filter(RetryOutcome.Summary.class::isInstance)
              .count();
      assertThat(summaries).as("the first call's summary only").isEqualTo(1);
      assertThat(shared.getSuppressed()).as("the first call's timeout and summary").hasSize(2);
      for (Throwable later : thrown.subList(1, 3)) {
        assertThat(later).isNotSameAs(shared).isInstanceOf(IOException.class).hasCause(shared);
        assertThat(later).hasMessage("java.io.IOException: shared");
        assertThat(EarlierFailures.of(later))
            .as("its own earlier failure")
            .singleElement()
            .satisfies(e -> assertThat(e).isInstanceOf(SocketTimeoutException.class));
        assertThat(RetryOutcome.of(later)).isNotNull();
        assertThat(RetryOutcome.of(later)).isNotSameAs(RetryOutcome.of(shared));
        assertThat(RetryOutcome.of(later).attempts()).isEqualTo(2);
      }
      assertThat(RetryOutcome.of(thrown.get(1))).isNotSameAs(RetryOutcome.of(thrown.get(2)));
    }
  }

  @Nested
  class ThrowingPredicates {
    @Test
    void aThrowingResponsePredicateOnTheFirstAttemptReachesTheCallerAndClosesTheResponse() {
      script.status(500);
      RetryPolicy.Builder b =
          retry()
              .retryOnResponse(
                  r -> {
                    throw new IllegalStateException("predicate bug");
                  });
      assertThatThrownBy(() -> client(b).newCall(get()).execute())
          .isInstanceOf(IOException.class)
          .hasMessageContaining("retryOnResponse predicate threw")
          .hasRootCauseMessage("predicate bug");
      assertThat(script.closed(1)).isTrue();
    }

    @Test
    void
        aThrowingPredicateEndsTheCallWithAnIOExceptionCarryingItAsCauseAndEarlierFailuresAsSuppressed() {
      IOException timeout = new SocketTimeoutException("timeout");
      IOException odd = new IOException("odd"); // not retried by default, so the predicate is asked
      script.fail(timeout).fail(odd);
      RetryPolicy.Builder onException =
          retry()
              .retryOnException(
                  e -> {
                    throw new IllegalStateException("predicate bug");
                  });
      assertThatThrownBy(() -> client(onException).newCall(get()).execute())
          .isExactlyInstanceOf(IOException.class)
          .hasMessage("okretry: the retryOnException predicate threw")
          .hasCauseExactlyInstanceOf(IllegalStateException.class)
          .satisfies(e -> assertThat(EarlierFailures.of(e)).containsExactly(odd, timeout));

      IOException refused = new ConnectException("refused");
      script.fail(refused).status(500);
      RetryPolicy.Builder onResponse =
          retry()
              .retryOnResponse(
                  r -> {
                    throw new IllegalStateException("predicate bug");
                  });
      assertThatThrownBy(() -> client(onResponse).newCall(get()).execute())
          .isExactlyInstanceOf(IOException.class)
          .hasMessage("okretry: the retryOnResponse predicate threw")
          .hasCauseExactlyInstanceOf(IllegalStateException.class)
          .satisfies(e -> assertThat(EarlierFailures.of(e)).containsExactly(refused));
      assertThat(events.lines("gaveUp")).hasSize(2);
    }
  }

  @Nested
  class BugsBelow {
    @Test
    void aRuntimeExceptionFromBelowReachesTheCallerAsItIs() {
      script.raise(new IllegalStateException("a bug below"));
      assertThatThrownBy(() -> client(quietRetry()).newCall(get()).execute())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("a bug below");
    }

    /**
     * Kotlin code below (an interceptor, a request body) may throw a checked exception it never
     * declared. The blocking driver hands the caller that exception, on the first attempt or on a
     * retry (a ClassCastException once replaced it); the async one OkHttp's report of it to a
     * callback, as OkHttp does for any throw below an enqueued call. One onGaveUp either way.
     */
    @ParameterizedTest(name = "after {0} refusal(s)")
    @ValueSource(ints = {0, 1})
    void aCheckedExceptionFromBelowReachesTheCallerAsItIs(int refusals) {
      Exception checked = new Exception("checked, thrown undeclared by Kotlin below");
      for (int i = 0; i < refusals; i++) script.status(503);
      script.raise(checked);
      Throwable thrown =
          catchThrowable(() -> client(quietRetry().listener(events)).newCall(get()).execute());
      if (driver == Driver.BLOCKING) {
        assertThat(thrown).isSameAs(checked);
      } else {
        assertThat(thrown)
            .isExactlyInstanceOf(IOException.class)
            .hasMessageStartingWith("canceled due to ")
            .hasCause(checked);
      }
      assertThat(events.lines("gaveUp"))
          .hasSize(1)
          .allMatch(line -> line.contains("NOT_RETRYABLE"));
      assertThat(script.seen()).hasSize(refusals + 1);
    }
  }
}
