package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The blocking driver's loop ({@link BlockingLoop}) on fake time: an attempt made with the call's
 * state and okretry's own deadline is retried when it fails in time (its deadline watch stopped,
 * not fired), and an {@code execute()} of a {@link RetryingCallFactory} that is closed before or
 * during a wait throws {@code IOException("RetryingCallFactory is closed")} (its {@code close()}
 * Javadoc).
 */
@Tag("unit")
class BlockingLoopTest extends ScriptedTest {

  @Test
  void anAttemptThatFailsBeforeItsDeadlineIsRetriedNotTakenForTheDeadline() throws IOException {
    // The first attempt is made without state; the second, with it, under a deadline watch.
    script.fail(new ConnectException("first")).fail(new ConnectException("second")).status(200);
    assertThat(code(client(retry().deadline(Duration.ofSeconds(10))), get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(3);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  RetryingCallFactory factory() {
    OkHttpClient client =
        LeakCheck.track(new OkHttpClient.Builder().addInterceptor(script).build());
    return RetryingCallFactory.create(client, retry().build(), new FakeScheduler(time));
  }

  @Test
  void anExecuteOfAFactoryClosedBeforeItsWaitThrowsThatItIsClosed() {
    script.status(503).thenAlways(200);
    RetryingCallFactory calls = factory();
    calls.close();
    assertThatThrownBy(() -> calls.newCall(get()).execute())
        .isInstanceOf(IOException.class)
        .hasMessage("RetryingCallFactory is closed");
    assertThat(script.attempts()).as("the attempt in flight finished; no retry").isEqualTo(1);
    assertThat(time.sleeps()).as("no wait begun").isEmpty();
  }

  @Test
  void anExecuteWhoseFactoryIsClosedDuringTheWaitThrowsThatItIsClosedNotACancel() {
    script.status(503).thenAlways(200);
    RetryingCallFactory calls = factory();
    time.duringNextWait(calls::close);
    assertThatThrownBy(() -> calls.newCall(get()).execute())
        .isInstanceOf(IOException.class)
        .hasMessage("RetryingCallFactory is closed");
    assertThat(script.attempts()).isEqualTo(1);
  }

  /**
   * A first attempt made without state ({@link LogicalCall#open}) decides as one made with it (a
   * call timeout forces state): the same clock start under a listener that takes its time, and the
   * same attempt length when a retry is held.
   */
  @Nested
  class FirstAttemptWithoutState {

    /** Fresh fixtures for each variant. */
    static final class Run extends ScriptedTest {}

    OkHttpClient client(Run run, RetryPolicy policy, boolean withState) {
      return withState
          ? run.script.clientBuilder(policy).callTimeout(Duration.ofHours(1)).build()
          : run.script.client(policy);
    }

    /** 1 s deadline; the listener takes 600 ms over the first attempt's start, which takes 500. */
    String slowListener(boolean withState) throws IOException {
      Run run = new Run();
      run.script
          .then(
              (chain, attempt) -> {
                run.time.advance(Duration.ofMillis(500));
                return Script.response(503, Headers.of()).play(chain, attempt);
              })
          .thenAlways(200);
      RetryPolicy policy =
          run.quietRetry()
              .jitter(Jitter.NONE)
              .deadline(Duration.ofSeconds(1))
              .listener(
                  new RetryListener() {
                    @Override
                    public void onAttemptStarted(Request request, int attempt) {
                      if (attempt == 1) run.time.advance(Duration.ofMillis(600));
                    }
                  })
              .build();
      try (Response r = client(run, policy, withState).newCall(get()).execute()) {
        return r.code() + " " + RetryOutcome.of(r);
      }
    }

    @Test
    void aSlowListenerSpendsTheCallsTimeWithOrWithoutState() throws IOException {
      assertThat(slowListener(false))
          .startsWith("503 ")
          .contains("DEADLINE_EXCEEDED")
          .isEqualTo(slowListener(true));
    }

    /**
     * While the first attempt is out, another call on the same origin (its own clock, the same
     * budget) fails to the end: the origin's failing streak is spent, so the retry is held, and its
     * wait counts what the first attempt took.
     */
    String heldRetry(boolean withState) throws IOException {
      Run run = new Run();
      AtomicReference<Call.Factory> other = new AtomicReference<>();
      run.script
          .then(
              (chain, attempt) -> {
                try (Response r = other.get().newCall(get()).execute()) {
                  assertThat(r.code()).isEqualTo(503);
                }
                return Script.response(503, Headers.of()).play(chain, attempt);
              })
          .status(503)
          .status(503)
          .status(503)
          .thenAlways(200);
      RetryBudget budget = RetryBudget.builder().build();
      RetryPolicy policy =
          run.quietRetry()
              .retryBudget(budget)
              .maxRetries(2)
              .jitter(Jitter.NONE)
              .baseDelay(Duration.ofMillis(100))
              .build();
      RetryPolicy others =
          RetryPolicy.builder()
              .timeSource(new FakeTime())
              .retryBudget(budget)
              .maxRetries(2)
              .jitter(Jitter.NONE)
              .build();
      OkHttpClient c = client(run, policy, withState);
      other.set(run.script.client(others));
      try (Response r = c.newCall(get()).execute()) {
        return r.code() + " " + RetryOutcome.of(r) + ", slept " + run.time.sleeps();
      }
    }

    @Test
    void aHeldRetryWaitsTheSameWithOrWithoutState() throws IOException {
      assertThat(heldRetry(false)).contains("slept [PT0.1S, PT0.2S").isEqualTo(heldRetry(true));
    }
  }
}
