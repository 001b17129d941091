package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The public {@link RetryPolicy} value, its builders, and the drivers made from it. */
@Tag("unit")
class RetryPolicyTest {

  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;

  final FakeTime time = new FakeTime();
  final Script script = new Script();

  static Request get() {
    return new Request.Builder().url("http://example.test/a").build();
  }

  OkHttpClient client(RetryInterceptor retry) {
    return new OkHttpClient.Builder().addInterceptor(retry).addInterceptor(script).build();
  }

  @Nested
  class Settings {
    @Test
    void defaultsInNanoseconds() {
      RetryPolicy p = RetryPolicy.create();
      assertThat(p.maxRetries()).isEqualTo(3);
      assertThat(p.baseDelayNanos()).isEqualTo(200 * MS);
      assertThat(p.maxDelayNanos()).isEqualTo(10 * S);
      assertThat(p.multiplier()).isEqualTo(2.0);
      assertThat(p.jitter()).isEqualTo(Jitter.FULL);
      assertThat(p.deadlineNanos()).as("0 means none, as OkHttp's timeouts").isZero();
      assertThat(p.maxRetryAfterNanos()).isEqualTo(60 * S);
      assertThat(p.retryAfterSpread()).isEqualTo(0.5);
      assertThat(p.retryStatuses()).containsExactly(429, 503);
      assertThat(p.idempotencyKeyHeader()).isEqualTo("Idempotency-Key");
      assertThat(p.listener()).isSameAs(RetryListener.NONE);
      assertThat(p.originWideRetryAfter()).isFalse();
      assertThat(p.retryBudget().isUnlimited()).isFalse();
      assertThat(p.toString()).contains("maxRetries=3", "retryStatuses=[429, 503]");
    }

    @Test
    void timeUnitAndDurationFormsSetTheSameNanoseconds() {
      RetryPolicy units = RetryPolicy.builder()
          .baseDelay(1500, TimeUnit.MICROSECONDS).maxDelay(3, TimeUnit.SECONDS)
          .deadline(2, TimeUnit.MINUTES).maxRetryAfter(90, TimeUnit.SECONDS).build();
      RetryPolicy durations = RetryPolicy.builder()
          .baseDelay(Duration.ofNanos(1_500_000)).maxDelay(Duration.ofSeconds(3))
          .deadline(Duration.ofMinutes(2)).maxRetryAfter(Duration.ofSeconds(90)).build();
      for (RetryPolicy p : List.of(units, durations)) {
        assertThat(p.baseDelayNanos()).isEqualTo(1_500_000);
        assertThat(p.maxDelayNanos()).isEqualTo(3 * S);
        assertThat(p.deadlineNanos()).isEqualTo(120 * S);
        assertThat(p.maxRetryAfterNanos()).isEqualTo(90 * S);
      }
      assertThat(RetryPolicy.builder().deadline(1, TimeUnit.HOURS).noDeadline().build().deadlineNanos()).isZero();
      assertThat(RetryPolicy.builder().deadline(24, TimeUnit.HOURS).build().deadlineNanos())
          .as("24 hours is the longest allowed").isEqualTo(TimeUnit.HOURS.toNanos(24));
    }

    @Test
    void timeUnitFormRejectsBadValuesNamingThem() {
      assertThatThrownBy(() -> RetryPolicy.builder().baseDelay(0, TimeUnit.SECONDS))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("baseDelay must be positive: 0 SECONDS");
      assertThatThrownBy(() -> RetryPolicy.builder().maxDelay(-3, TimeUnit.MILLISECONDS))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("maxDelay must be positive: -3 MILLISECONDS");
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(25, TimeUnit.HOURS))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("deadline must be at most 24 hours: 25 HOURS");
      assertThatThrownBy(() -> RetryPolicy.builder().maxRetryAfter(Long.MAX_VALUE, TimeUnit.DAYS))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRetryAfter");
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(1, null))
          .isInstanceOf(NullPointerException.class).hasMessageContaining("deadline");
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(Duration.ofHours(24).plusNanos(1)))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("deadline must be at most PT24H: PT24H0.000000001S");
      assertThatThrownBy(() -> RetryOverrides.builder().deadline(0, TimeUnit.SECONDS))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deadline");
      assertThatThrownBy(() -> RetryPolicy.builder().retryOnResponse(null)).isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().retryOnException(null)).isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().retryBudget(null)).isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().retryOnStatus((int[]) null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void buildTakesASnapshotAndVariationsShareTheBudget() {
      RetryPolicy.Builder builder = RetryPolicy.builder().maxRetries(1).retryOnStatus(502);
      RetryPolicy first = builder.build();
      builder.maxRetries(7).retryOnStatus(504);
      RetryPolicy second = builder.build();
      assertThat(first.maxRetries()).isEqualTo(1);
      assertThat(first.retryStatuses()).containsExactly(429, 502, 503);
      assertThat(second.retryStatuses()).containsExactly(429, 502, 503, 504);
      assertThat(second.retryBudget()).as("each build() of a builder without a budget gets its own")
          .isNotSameAs(first.retryBudget());
      RetryPolicy variation = first.toBuilder().deadline(3, TimeUnit.SECONDS).build();
      assertThat(variation.retryBudget()).isSameAs(first.retryBudget());
      assertThat(variation.maxRetries()).isEqualTo(1);
      assertThat(first.deadlineNanos()).isZero();
      assertThatThrownBy(() -> first.retryStatuses().add(500)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void interceptorAndFactoryShareTheirPolicy() {
      RetryPolicy policy = RetryPolicy.builder().maxRetries(5).build();
      RetryInterceptor retry = RetryInterceptor.create(policy);
      assertThat(retry.policy()).isSameAs(policy);
      assertThat(retry.toBuilder().build().policy().retryBudget()).isSameAs(policy.retryBudget());
      assertThat(retry.toString()).contains("maxRetries=5");
      try (RetryingCallFactory calls = RetryingCallFactory.create(new OkHttpClient(), policy)) {
        assertThat(calls.policy).isSameAs(policy);
      }
      try (RetryingCallFactory calls = RetryingCallFactory.create(new OkHttpClient(), retry)) {
        assertThat(calls.policy).isSameAs(policy);
      }
      assertThatThrownBy(() -> RetryInterceptor.create(null)).isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryingCallFactory.create(new OkHttpClient(), (RetryPolicy) null))
          .isInstanceOf(NullPointerException.class).hasMessageContaining("policy");
      assertThatThrownBy(() -> RetryingCallFactory.create(null, policy))
          .isInstanceOf(NullPointerException.class).hasMessageContaining("client");
    }

    @SuppressWarnings("deprecation")
    @Test
    void deprecatedInterceptorGettersReportThePolicy() {
      RetryInterceptor r = RetryInterceptor.builder().maxRetries(2).baseDelay(7, TimeUnit.MILLISECONDS)
          .maxDelay(9, TimeUnit.SECONDS).multiplier(3).jitter(Jitter.EQUAL).deadline(4, TimeUnit.SECONDS)
          .maxRetryAfter(5, TimeUnit.SECONDS).retryOnStatus(500).idempotencyKeyHeader("X-Key").build();
      assertThat(r.maxRetries()).isEqualTo(2);
      assertThat(r.baseDelay()).isEqualTo(Duration.ofMillis(7));
      assertThat(r.maxDelay()).isEqualTo(Duration.ofSeconds(9));
      assertThat(r.multiplier()).isEqualTo(3.0);
      assertThat(r.jitter()).isEqualTo(Jitter.EQUAL);
      assertThat(r.deadline()).contains(Duration.ofSeconds(4));
      assertThat(r.maxRetryAfter()).isEqualTo(Duration.ofSeconds(5));
      assertThat(r.retryStatuses()).containsExactly(429, 500, 503);
      assertThat(r.idempotencyKeyHeader()).isEqualTo("X-Key");
      assertThat(RetryInterceptor.create().deadline()).isEmpty();
    }

    @Test
    void overridesReportWhatTheySetAndNullOtherwise() {
      RetryOverrides o = RetryOverrides.builder().maxRetries(2).deadline(1500, TimeUnit.MILLISECONDS).build();
      assertThat(o.maxRetries()).isEqualTo(2);
      assertThat(o.deadlineNanos()).isEqualTo(1500 * MS);
      assertThat(o).isEqualTo(RetryOverrides.builder().maxRetries(2).deadline(Duration.ofMillis(1500)).build());
      assertThat(RetryOverrides.builder().build().maxRetries()).isNull();
      assertThat(RetryOverrides.builder().build().deadlineNanos()).isNull();
      assertThat(o.toString()).isEqualTo("RetryOverrides{maxRetries=2, deadlineNanos=1500000000}");
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
      assertThat(budget.tryWithdraw(0)).as("a new budget starts full: make room for a deposit").isTrue();
      double before = budget.availableTokens();
      script.status(404);
      try (Response r = client(RetryInterceptor.builder().timeSource(time).retryBudget(budget).build())
          .newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(404);
      }
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(budget.availableTokens() - before).as("a first-attempt success deposits").isEqualTo(0.5);
      assertThat(time.sleeps()).isEmpty();
    }

    @Test
    void aFailedFirstAttemptContinuesAsAnyCallWould() throws IOException {
      script.status(503).fail(new ConnectException("refused")).status(200);
      RetryInterceptor retry = RetryInterceptor.builder().timeSource(time).jitter(Jitter.NONE)
          .baseDelay(100, TimeUnit.MILLISECONDS).build();
      try (Response r = client(retry).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      assertThat(time.sleepMillis()).containsExactly(100L, 200L);
    }

    @Test
    void aFirstExceptionIsRetriedAndKeptAsSuppressed() {
      ConnectException first = new ConnectException("one");
      ConnectException second = new ConnectException("two");
      script.fail(first).fail(second);
      RetryInterceptor retry = RetryInterceptor.builder().timeSource(time).maxRetries(1).build();
      assertThatThrownBy(() -> client(retry).newCall(get()).execute())
          .isSameAs(second)
          .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(first));
    }

    @Test
    void aResponsePredicateIsStillAsked() throws IOException {
      script.status(500).status(200);
      RetryInterceptor retry = RetryInterceptor.builder().timeSource(time)
          .retryOnResponse(r -> r.code() == 418).retryOnResponse(r -> r.code() == 500).build();
      try (Response r = client(retry).newCall(get()).execute()) {
        assertThat(r.code()).as("the second predicate matched: predicates add up").isEqualTo(200);
      }
      assertThat(script.attempts()).isEqualTo(2);
    }

    @Test
    void aThrowingPredicateEndsTheCallWithAnIOException() {
      script.status(200);
      IllegalStateException bug = new IllegalStateException("bug");
      RetryInterceptor retry = RetryInterceptor.builder().timeSource(time)
          .retryOnResponse(r -> { throw bug; }).build();
      assertThatThrownBy(() -> client(retry).newCall(get()).execute())
          .isInstanceOf(IOException.class).hasCause(bug);
      assertThat(script.returned().get(0).body()).isInstanceOfSatisfying(Script.TrackingBody.class,
          body -> assertThat(body.closed).as("the unread response is closed").isTrue());
    }
  }

  @Nested
  class ListenerDelays {
    @Test
    void theLongFormReachesListenersWrittenForTheDurationForm() throws IOException {
      List<Duration> delays = new ArrayList<>();
      RetryListener durationForm = new RetryListener() {
        @Override
        public void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
          delays.add(delay);
        }
      };
      script.status(503).status(200);
      client(RetryInterceptor.builder().timeSource(time).jitter(Jitter.NONE).listener(durationForm).build())
          .newCall(get()).execute().close();
      assertThat(delays).containsExactly(Duration.ofMillis(200));
    }

    @Test
    void overridingTheLongFormReplacesTheBridge() throws IOException {
      List<Long> nanos = new ArrayList<>();
      List<Duration> durations = new ArrayList<>();
      RetryListener longForm = new RetryListener() {
        @Override
        public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
          nanos.add(delayNanos);
        }

        @Override
        public void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
          durations.add(delay);
        }
      };
      script.status(503).status(200);
      client(RetryInterceptor.builder().timeSource(time).jitter(Jitter.NONE).listener(longForm).build())
          .newCall(get()).execute().close();
      assertThat(nanos).containsExactly(200 * MS);
      assertThat(durations).isEmpty();
    }
  }
}
