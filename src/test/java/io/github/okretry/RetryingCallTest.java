package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code RetryingCall.execute()} under a policy that does not hedge (one OkHttp call through the
 * factory's interceptor, on fake time): what it takes from the {@link Call} it is (its timeout and
 * deadline, its event listeners) and when it reports {@code isCanceled()}, as a plain OkHttp call
 * does: once its timeout fired, not after any other failure.
 */
@Tag("unit")
class RetryingCallTest extends ScriptedTest {

  RetryingCallFactory factory(RetryPolicy.Builder policy) {
    return RetryingCallFactory.create(
        LeakCheck.track(new OkHttpClient.Builder().addInterceptor(script).build()), policy.build());
  }

  /** Retries after 1 s, then 3 s: a call allowed 3 s has time for the first retry only. */
  RetryPolicy.Builder oneThenThreeSeconds() {
    return retry().jitter(Jitter.NONE).baseDelay(1, TimeUnit.SECONDS).multiplier(3);
  }

  @Test
  void executeIsBoundedByTheCallsTimeout() throws IOException {
    script.status(503).status(503).thenAlways(200);
    try (RetryingCallFactory calls = factory(oneThenThreeSeconds())) {
      Call call = calls.newCall(get());
      call.timeout().timeout(3, TimeUnit.SECONDS);
      try (var response = call.execute()) {
        assertThat(response.code()).as("the second 503, given up on").isEqualTo(503);
      }
    }
    assertThat(time.sleepMillis()).containsExactly(1000L);
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("DEADLINE_EXCEEDED");
  }

  @Test
  void executeIsBoundedByTheCallsDeadline() throws IOException {
    script.status(503).status(503).thenAlways(200);
    try (RetryingCallFactory calls = factory(oneThenThreeSeconds())) {
      Call call = calls.newCall(get());
      call.timeout().deadline(3, TimeUnit.SECONDS);
      try (var response = call.execute()) {
        assertThat(response.code()).isEqualTo(503);
      }
    }
    assertThat(time.sleepMillis()).containsExactly(1000L);
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("DEADLINE_EXCEEDED");
  }

  @Test
  void executeRunsWithTheCallsEventListeners() throws IOException {
    script.thenAlways(200);
    List<String> seen = new ArrayList<>();
    try (RetryingCallFactory calls = factory(retry())) {
      Call call = calls.newCall(get());
      call.addEventListener(
          new EventListener() {
            @Override
            public void callStart(Call c) {
              seen.add("callStart");
            }
          });
      call.execute().close();
      assertThat(call.isCanceled()).isFalse();
    }
    assertThat(seen).containsExactly("callStart");
  }

  @Test
  void aFailureIsNotACancelWhenNoTimeoutFired() {
    script.thenAlwaysFail(n -> new ConnectException("refused " + n));
    try (RetryingCallFactory calls = factory(retry().jitter(Jitter.NONE).maxRetries(1))) {
      Call unbounded = calls.newCall(get());
      assertThatThrownBy(unbounded::execute).isInstanceOf(ConnectException.class);
      assertThat(unbounded.isCanceled()).as("no timeout set").isFalse();

      Call withTime = calls.newCall(get());
      withTime.timeout().timeout(1, TimeUnit.HOURS);
      withTime.timeout().deadline(1, TimeUnit.HOURS);
      assertThatThrownBy(withTime::execute).isInstanceOf(ConnectException.class);
      assertThat(withTime.isCanceled()).as("an hour left").isFalse();
    }
    // The second call's failure comes after one call's worth of retries with no success since.
    assertThat(events.lines("gaveUp"))
        .containsExactly(
            "gaveUp 2 RETRIES_EXHAUSTED ConnectException: refused 2",
            "gaveUp 1 NO_RECENT_SUCCESS ConnectException: refused 3");
  }

  @Test
  void aCallWhoseTimeoutRanOutReportsCanceled() {
    script.thenAlwaysFail(n -> new ConnectException("refused " + n));
    try (RetryingCallFactory calls =
        factory(retry().jitter(Jitter.NONE).baseDelay(1, TimeUnit.SECONDS))) {
      Call call = calls.newCall(get());
      call.timeout().timeout(1, TimeUnit.NANOSECONDS);
      assertThatThrownBy(call::execute).isInstanceOf(IOException.class);
      assertThat(call.isCanceled()).as("timed out, as a plain OkHttp call reports it").isTrue();
    }
  }

  @Test
  void aCallThatRanOutOfOkretrysOwnDeadlineReportsCanceledAsEnqueueDoes() {
    // The first attempt takes 2.5 s of the policy's 3 s: the 1 s wait for a retry does not fit.
    script.thenAlways(
        (chain, n) -> {
          time.advance(java.time.Duration.ofMillis(2500));
          throw new ConnectException("refused " + n);
        });
    try (RetryingCallFactory calls =
        factory(
            retry()
                .jitter(Jitter.NONE)
                .baseDelay(1, TimeUnit.SECONDS)
                .deadline(3, TimeUnit.SECONDS))) {
      Call call = calls.newCall(get());
      assertThatThrownBy(call::execute).hasMessage("refused 1");
      assertThat(call.isCanceled())
          .as("ran out of time, as LogicalCall decided; no call timeout set")
          .isTrue();
    }
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("DEADLINE_EXCEEDED");
  }
}
