package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The deadline, on fake time: each attempt's timeouts shrink to the time left; OkHttp's {@code
 * callTimeout} is a deadline too; a wait (backoff or {@code Retry-After}) that would end past the
 * deadline is not started. Per-request deadlines: {@link RetryOverridesTest}. Real time and
 * sockets: {@link DeadlineIntegrationTest} and {@link CallTimeoutTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class DeadlineTest extends ScriptedTest {

  DeadlineTest(Driver driver) {
    this.driver = driver;
  }

  OkHttpClient track(OkHttpClient.Builder builder) {
    return LeakCheck.track(builder.build());
  }

  @Nested
  class AttemptTimeouts {
    @Test
    void eachAttemptsTimeoutsShrinkToTheTimeLeft() throws IOException {
      script.fail(new SocketTimeoutException("timeout")).status(200);
      OkHttpClient c =
          track(
              script
                  .clientBuilder(
                      retry()
                          .jitter(Jitter.NONE)
                          .baseDelay(Duration.ofMillis(400))
                          .deadline(Duration.ofSeconds(2))
                          .build())
                  .connectTimeout(Duration.ofSeconds(10))
                  .readTimeout(
                      Duration.ZERO) // "none" must become the time left, never stay unbounded
                  .writeTimeout(Duration.ofMillis(500)));
      c.newCall(get()).execute().close();
      List<Script.Seen> seen = script.seen();
      assertThat(seen.get(0)).isEqualTo(new Script.Seen(seen.get(0).request(), 2000, 2000, 500));
      assertThat(seen.get(1)).isEqualTo(new Script.Seen(seen.get(1).request(), 1600, 1600, 500));
    }

    @Test
    void aShorterTimeoutStaysAndEveryLongerOneShrinks() throws IOException {
      script.status(503).status(200);
      OkHttpClient c =
          track(
              script
                  .clientBuilder(
                      quietRetry().jitter(Jitter.NONE).deadline(Duration.ofMillis(1000)).build())
                  .connectTimeout(Duration.ofMillis(800))
                  .readTimeout(Duration.ZERO)
                  .writeTimeout(Duration.ofMillis(5000)));
      assertThat(code(c, get())).isEqualTo(200);
      List<Script.Seen> seen = script.seen();
      assertThat(seen.get(0))
          .isEqualTo(
              new Script.Seen(
                  seen.get(0).request(), 800, 1000, 1000)); // 0 = none becomes the time left
      assertThat(seen.get(1))
          .isEqualTo(new Script.Seen(seen.get(1).request(), 800, 800, 800)); // 200 ms slept
      assertThat(time.sleepMillis()).containsExactly(200L);
    }

    @Test
    void noDeadlineLeavesTimeoutsAlone() throws IOException {
      script.status(200);
      track(script.clientBuilder(retry().build()).readTimeout(Duration.ZERO))
          .newCall(get())
          .execute()
          .close();
      assertThat(script.seen().get(0).readTimeoutMillis()).isZero();
    }
  }

  @Nested
  class CallTimeout {
    @Test
    void boundsTheDeadlineWhenItIsShorter() throws IOException {
      script.status(200);
      OkHttpClient c =
          track(
              script
                  .clientBuilder(retry().deadline(Duration.ofSeconds(30)).build())
                  .callTimeout(Duration.ofMillis(1500)));
      c.newCall(get()).execute().close();
      assertThat(script.seen().get(0).readTimeoutMillis()).isEqualTo(1500);
    }

    @Test
    void isADeadlineForARetryAfterToo() throws IOException {
      script.status(503, "Retry-After", "5");
      OkHttpClient c =
          track(script.clientBuilder(quietRetry().build()).callTimeout(Duration.ofSeconds(2)));
      assertThat(code(c, get())).isEqualTo(503); // 5 s does not fit in 2 s: returned at once
      assertThat(time.sleeps()).isEmpty();
    }

    /**
     * OkHttp's call timeout fired and canceled the attempt (the script does what it does): the
     * deadline on both drivers, not a cancel. CallTimeoutTest runs the real timer.
     */
    @Test
    void anAttemptCanceledOnceTheCallTimeoutHasPassedEndsAtTheDeadline() {
      script.then(
          (chain, attempt) -> {
            time.advance(Duration.ofMillis(800));
            chain.call().cancel();
            throw new IOException("Canceled");
          });
      Call call = client(retry()).newCall(get());
      call.timeout().timeout(700, TimeUnit.MILLISECONDS);
      assertThatThrownBy(call::execute).isInstanceOf(SocketTimeoutException.class);
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(events.lines("gaveUp"))
          .singleElement()
          .asString()
          .startsWith("gaveUp 1 DEADLINE_EXCEEDED ");
    }

    @Test
    void aTimeoutShrinksToTheTimeLeftAndNoneMeansTheTimeLeft() {
      assertThat(AttemptSettings.shrink(0, 5)).isEqualTo(5);
      assertThat(AttemptSettings.shrink(10, 5)).isEqualTo(5);
      assertThat(AttemptSettings.shrink(3, 5)).isEqualTo(3);
    }
  }

  @Nested
  class WaitsPastTheDeadline {
    @Test
    void aBackoffThatWouldEndPastTheDeadlineIsNotStarted() {
      IOException timeout = new SocketTimeoutException("timeout");
      script.fail(new SocketTimeoutException("first")).fail(timeout).status(200);
      RetryPolicy.Builder b =
          retry()
              .jitter(Jitter.NONE)
              .baseDelay(Duration.ofMillis(600))
              .deadline(Duration.ofSeconds(1));
      assertThatThrownBy(() -> client(b).newCall(get()).execute()).isSameAs(timeout);
      assertThat(time.sleepMillis())
          .containsExactly(600L); // the second wait (1200 ms) would overrun
      assertThat(events.lines())
          .contains("gaveUp 2 DEADLINE_EXCEEDED SocketTimeoutException: timeout");
    }

    /**
     * An attempt that fails exactly when the deadline passes (its timeouts were shrunk to end
     * there) gives up for the deadline, even when it was the last attempt allowed anyway: the
     * deadline is what ended it.
     */
    @Test
    void anAttemptThatFailsExactlyAtTheDeadlineGivesUpForTheDeadline() {
      SocketTimeoutException timeout = new SocketTimeoutException("timeout");
      script.then(
          (chain, attempt) -> {
            time.advance(Duration.ofSeconds(1));
            throw timeout;
          });
      RetryPolicy.Builder b = retry().maxRetries(0).deadline(Duration.ofSeconds(1));
      assertThatThrownBy(() -> client(b).newCall(get()).execute()).isSameAs(timeout);
      assertThat(events.lines("gaveUp"))
          .containsExactly("gaveUp 1 DEADLINE_EXCEEDED SocketTimeoutException: timeout");
    }

    @Test
    void aRetryAfterPastTheDeadlineReturnsTheResponseAtOnce() throws IOException {
      script.status(429, "Retry-After", "5");
      try (Response r = client(retry().deadline(Duration.ofSeconds(3))).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(429);
      }
      assertThat(time.sleeps()).isEmpty();
      assertThat(events.lines()).contains("gaveUp 1 DEADLINE_EXCEEDED HTTP 429");
    }
  }
}
