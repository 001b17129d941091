package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a {@link RetryListener} is told and what okretry logs: the events of a call in order, a
 * listener that throws (logged once as a warning, the call unchanged), the two forms of {@code
 * onRetryScheduled}, and the descriptions of outcomes (escaped, as in the final DEBUG line). Event
 * sequences of particular behaviours are asserted where those behaviours are; text a hostile server
 * sends: {@link UntrustedTextTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class RetryListenerTest extends ScriptedTest {

  RetryListenerTest(Driver driver) {
    this.driver = driver;
  }

  /** A bug below okretry (an unchecked exception) still ends the call with one onGaveUp. */
  @Test
  void aBugBelowTheInterceptorEndsTheCallWithOneGaveUp() {
    EventLog events = new EventLog();
    IllegalStateException bug = new IllegalStateException("bug below okretry");
    Script failing = new Script().raise(bug);
    assertThat(
            org.assertj.core.api.Assertions.catchThrowable(
                () ->
                    failing.client(quietRetry().listener(events).build()).newCall(get()).execute()))
        .isSameAs(bug);
    assertThat(events.lines("gaveUp")).hasSize(1).allMatch(line -> line.contains("NOT_RETRYABLE"));
  }

  /**
   * A bug below okretry (an interceptor that throws) is neither a cancel nor a deadline on either
   * driver: the blocking one sees the throw, the async one OkHttp's "canceled due to" report of it
   * (deterministic here; DriverParityTest had it on real threads).
   */
  @Test
  void aBugBelowIsNotReportedAsACancelOrADeadline() {
    EventLog events = new EventLog();
    IllegalStateException bug = new IllegalStateException("bug below okretry");
    script.raise(bug);
    Throwable thrown =
        org.assertj.core.api.Assertions.catchThrowable(
            () -> client(quietRetry().listener(events)).newCall(get()).execute());
    // Blocking: the bug as it is. Async: the callback gets OkHttp's report of it, and OkHttp
    // rethrows the bug on its (here fake) dispatcher thread, which is what reaches this thread.
    assertThat(thrown == bug || thrown.getCause() == bug).as("%s", thrown).isTrue();
    assertThat(events.lines("gaveUp")).hasSize(1).allMatch(line -> line.contains("NOT_RETRYABLE"));
  }

  /**
   * A listener that does not hear network requests costs a successful call no per-call state (its
   * first attempt is made without it), and still hears every event, in order.
   */
  @Test
  void aListenerWithoutNetworkRequestsHearsAFirstSuccessToo() throws Exception {
    List<String> seen = new ArrayList<>();
    RetryListener counting =
        new RetryListener() {
          @Override
          public void onAttemptStarted(Request r, int a) {
            seen.add("start " + a);
          }

          @Override
          public void onRetryScheduled(Request r, int a, String why, long delayNanos) {
            seen.add("retry " + a);
          }

          @Override
          public void onSucceeded(Request r, Response resp, int a) {
            seen.add("ok " + a + " " + resp.code());
          }
        };
    RetryPolicy policy = quietRetry().jitter(Jitter.NONE).listener(counting).build();
    assertThat(LogicalCall.open(policy, get(), 0)).as("no state for the first attempt").isNull();
    seen.clear();
    script.status(200).status(404).status(503).status(200);
    Call.Factory client = client(quietRetry().jitter(Jitter.NONE).listener(counting));
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(code(client, get())).isEqualTo(404);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(seen)
        .containsExactly(
            "start 1",
            "ok 1 200",
            "start 1",
            "ok 1 404",
            "start 1",
            "retry 1",
            "start 2",
            "ok 2 200");
  }

  @Nested
  class ThrowingListeners {
    @Test
    void listenerFailuresChangeNothingAndEventsAddUp() throws Exception {
      List<String> seen = new ArrayList<>();
      IllegalStateException bug = new IllegalStateException("listener bug");
      RetryListener throwing =
          new RetryListener() {
            @Override
            public void onAttemptStarted(Request r, int a) {
              seen.add("start " + a);
              throw bug;
            }

            @Override
            public void onRetryScheduled(Request r, int a, String why, long delayNanos) {
              seen.add("retry " + a + " " + why + " " + delayNanos / 1_000_000);
              throw bug;
            }

            @Override
            public void onGaveUp(Request r, int a, GiveUpReason why, String last) {
              seen.add("gaveUp " + a + " " + why + " " + last);
              throw bug;
            }

            @Override
            public void onSucceeded(Request r, Response resp, int a) {
              seen.add("ok " + a);
              throw bug;
            }
          };
      script.fail(new SocketTimeoutException("timeout")).status(200).status(503).status(404);
      Call.Factory client =
          client(quietRetry().jitter(Jitter.NONE).maxRetries(1).listener(throwing));
      assertThat(code(client, get())).isEqualTo(200);
      assertThat(code(client, get())).isEqualTo(404); // not retryable, so a "success" for okretry
      assertThat(seen)
          .containsExactly(
              "start 1",
              "retry 1 SocketTimeoutException: timeout 200",
              "start 2",
              "ok 2",
              "start 1",
              "retry 1 HTTP 503 200",
              "start 2",
              "ok 2");
      Script failing = new Script().status(503).status(503);
      seen.clear();
      assertThat(
              code(
                  failing.client(
                      quietRetry().jitter(Jitter.NONE).maxRetries(1).listener(throwing).build()),
                  get()))
          .isEqualTo(503);
      assertThat(seen).endsWith("gaveUp 2 RETRIES_EXHAUSTED HTTP 503");
      // Each throw is logged once, as a warning naming the listener method, with the exception.
      List<String> threw = new ArrayList<>();
      for (LogCapture.Event e : log.warnings()) {
        assertThat(e.thrown()).isSameAs(bug);
        Matcher m = Pattern.compile("RetryListener\\.(\\w+) threw").matcher(e.message());
        threw.add(m.find() ? m.group(1) : e.message());
      }
      assertThat(threw)
          .containsExactly(
              "onAttemptStarted",
              "onRetryScheduled",
              "onAttemptStarted",
              "onSucceeded",
              "onAttemptStarted",
              "onRetryScheduled",
              "onAttemptStarted",
              "onSucceeded",
              "onAttemptStarted",
              "onRetryScheduled",
              "onAttemptStarted",
              "onGaveUp");
    }
  }

  /** {@code onRetryScheduled} reports the wait in nanoseconds, its one form. */
  @Nested
  class DelayInNanos {
    @Test
    void theWaitIsReportedInNanoseconds() throws IOException {
      List<Long> nanos = new ArrayList<>();
      RetryListener listener =
          new RetryListener() {
            @Override
            public void onRetryScheduled(
                Request request, int attempt, String reason, long delayNanos) {
              nanos.add(delayNanos);
            }
          };
      script.status(503).status(200);
      script
          .client(
              RetryPolicy.builder().timeSource(time).jitter(Jitter.NONE).listener(listener).build())
          .newCall(get())
          .execute()
          .close();
      assertThat(nanos).containsExactly(200_000_000L);
    }
  }

  @Nested
  class Descriptions {
    @Test
    void exceptionsAreNamedAndTheirMessagesEscaped() {
      assertThat(Events.describe(null, new IOException("a\rb"))).isEqualTo("IOException: a\\rb");
      assertThat(Events.describe(null, new IOException())).isEqualTo("IOException");
      assertThat(Events.describe(null, new java.io.EOFException())).isEqualTo("EOFException");
      assertThat(Events.describe(null, null)).isEqualTo("no outcome");
      assertThat(Events.describe(null, new SocketTimeoutException("one")))
          .isEqualTo("SocketTimeoutException: one");
      IOException anonymous = new IOException("x") {};
      assertThat(Events.describe(null, anonymous))
          .isEqualTo(anonymous.getClass().getName() + ": x");
    }

    @ParameterizedTest(name = "HTTP {0} on attempt {1}")
    @CsvSource(
        delimiter = '|',
        value = {
          "200 | 2 | succeeded on attempt 2 (HTTP 200)",
          "204 | 3 | succeeded on attempt 3 (HTTP 204)",
          "299 | 2 | succeeded on attempt 2 (HTTP 299)",
          "300 | 2 | returned HTTP 300 from attempt 2 (not retryable)",
          "500 | 2 | returned HTTP 500 from attempt 2 (not retryable)",
          "404 | 4 | returned HTTP 404 from attempt 4 (not retryable)",
          "304 | 2 | returned HTTP 304 from attempt 2 (not retryable)",
        })
    void theFinalDebugLineSaysWhatHappened(int code, int attempts, String line) {
      assertThat(Events.returnedAfterRetries(code, attempts)).isEqualTo(line);
    }
  }
}
