package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
      // The one thing outside the test that gives every first attempt state (as DEBUG logging
      // does): without this check the comparison would hold for nothing.
      assertThat(policy.events.watchesNetworkRequests())
          .as("a listener of network requests")
          .isFalse();
      return withState
          ? run.script.clientBuilder(policy).callTimeout(Duration.ofHours(1)).build()
          : run.script.client(policy);
    }

    /** 1 s deadline; the listener takes 600 ms over the first attempt's start, which takes 500. */
    String slowListener(boolean withState) throws IOException {
      Run run = new Run();
      run.script.then(after(run, 500, 503)).thenAlways(200);
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
        return r.code() + " " + RetryOutcome.of(r) + ", timeouts " + timeouts(run);
      }
    }

    /** Each attempt's connect/read/write timeouts, in ms, as the chain gave them. */
    static List<String> timeouts(Run run) {
      return run.script.seen().stream()
          .map(
              s ->
                  s.connectTimeoutMillis()
                      + "/"
                      + s.readTimeoutMillis()
                      + "/"
                      + s.writeTimeoutMillis())
          .toList();
    }

    @Test
    void aSlowListenerSpendsTheCallsTimeWithOrWithoutState() throws IOException {
      assertThat(slowListener(false))
          .startsWith("503 ")
          .contains("DEADLINE_EXCEEDED")
          .contains("timeouts [400/400/400]")
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

    /** A script that spends {@code millis} of the call's time, then answers {@code code}. */
    static Script.Outcome after(Run run, long millis, int code, String... headers) {
      return (chain, attempt) -> {
        run.time.advance(Duration.ofMillis(millis));
        return Script.response(code, Headers.of(headers)).play(chain, attempt);
      };
    }

    /** What a caller and a listener see of one call: its end, its outcome, events and waits. */
    String played(
        String script, boolean withState, boolean budget, int maxRetries, boolean deadline) {
      Run run = new Run();
      switch (script) {
        case "200" -> run.script.status(200);
        case "404" -> run.script.status(404);
        case "503 then 200" -> run.script.status(503).status(200);
        case "503 always" -> run.script.thenAlways(503);
        case "429 Retry-After 100 s" -> run.script.status(429, "Retry-After", "100").status(200);
        case "503 after 999 ms" -> run.script.then(after(run, 999, 503)).status(200);
        case "503 after 1000 ms" -> run.script.then(after(run, 1000, 503)).status(200);
        case "404 after 1001 ms" -> run.script.then(after(run, 1001, 404)).status(200);
        case "429 Retry-After 0 after 1000 ms" ->
            run.script.then(after(run, 1000, 429, "Retry-After", "0")).status(200);
        case "connect refused" -> run.script.fail(new ConnectException("refused")).status(200);
        case "protocol" -> run.script.fail(new ProtocolException("bad"));
        case "canceled, 503" -> run.script.cancelingTheCall().status(503);
        case "canceled, 404" -> run.script.cancelingTheCall().status(404);
        case "interrupted, 503" -> run.script.interruptingTheCaller().status(503);
        case "a bug below" -> run.script.raise(new IllegalStateException("bug"));
        default -> throw new IllegalArgumentException(script);
      }
      RetryPolicy.Builder b = run.retry().maxRetries(maxRetries);
      if (deadline) b.deadline(Duration.ofSeconds(1));
      if (!budget) b.retryBudget(RetryBudget.unlimited());
      String result;
      try (Response r = client(run, b.build(), withState).newCall(get()).execute()) {
        result = r.code() + " " + RetryOutcome.of(r);
      } catch (Throwable e) {
        result = e + " " + RetryOutcome.of(e);
      } finally {
        Thread.interrupted(); // the interrupting script leaves the flag set
      }
      return result
          + ", events "
          + run.events.lines()
          + ", slept "
          + run.time.sleeps()
          + ", timeouts "
          + timeouts(run);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
        strings = {
          "200",
          "404",
          "503 then 200",
          "503 always",
          "429 Retry-After 100 s",
          "503 after 999 ms",
          "503 after 1000 ms",
          "404 after 1001 ms",
          "429 Retry-After 0 after 1000 ms",
          "connect refused",
          "protocol",
          "canceled, 503",
          "canceled, 404",
          "interrupted, 503",
          "a bug below"
        })
    void everyScriptEndsAlikeWithOrWithoutState(String script) {
      for (boolean budget : new boolean[] {true, false}) {
        for (int maxRetries : new int[] {0, 3}) {
          for (boolean deadline : new boolean[] {true, false}) {
            assertThat(played(script, false, budget, maxRetries, deadline))
                .as("budget %s, maxRetries %d, deadline %s", budget, maxRetries, deadline)
                .isEqualTo(played(script, true, budget, maxRetries, deadline));
          }
        }
      }
    }
  }
}
