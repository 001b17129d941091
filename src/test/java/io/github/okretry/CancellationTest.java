package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.Call;
import okhttp3.Request;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A call canceled or its thread interrupted ends without another attempt, whatever the outcome in
 * hand, with an IOException and the interrupt flag kept; {@link FakeTime}'s sleep sees a cancel or
 * an interrupt as the real one does. With real sockets and real time: {@link
 * CancellationIntegrationTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class CancellationTest extends ScriptedTest {

  CancellationTest(Driver driver) {
    this.driver = driver;
  }

  @ParameterizedTest(name = "{0} during {1}")
  @CsvSource({
    // how,      when,                         expected reason
    "cancel,     the attempt (then a timeout), CANCELED",
    "interrupt,  the attempt (then a timeout), INTERRUPTED",
    "cancel,     the wait (after a 503),       CANCELED",
    "interrupt,  the wait (after a 503),       INTERRUPTED",
  })
  void aCancelOrAnInterruptEndsTheCallWithoutAnotherAttempt(
      String how, String when, GiveUpReason reason) {
    if (how.equals("interrupt")) assumeBlocking();
    if (how.equals("cancel")) script.cancelingTheCall();
    else script.interruptingTheCaller();
    boolean inTheWait = when.contains("wait");
    if (inTheWait) script.status(503);
    else script.fail(new SocketTimeoutException("timeout"));
    Call.Factory client = client(quietRetry().listener(events));
    boolean flag;
    try {
      if (!inTheWait) {
        assertThatThrownBy(() -> client.newCall(get()).execute())
            .isInstanceOf(SocketTimeoutException.class);
      } else if (how.equals("cancel")) {
        assertThatThrownBy(() -> client.newCall(get()).execute()).hasMessage("Canceled");
      } else {
        assertThatThrownBy(() -> client.newCall(get()).execute())
            .isInstanceOf(InterruptedIOException.class);
      }
      flag = Thread.currentThread().isInterrupted();
    } finally {
      Thread.interrupted();
    }
    if (how.equals("interrupt") && !inTheWait) assertThat(flag).as("interrupt flag kept").isTrue();
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("gaveUp"))
        .singleElement()
        .asString()
        .startsWith("gaveUp 1 " + reason + " ");
  }

  /**
   * {@code Dispatcher.cancelAll()} cancels each driver's own OkHttp call (the caller's behind the
   * interceptor, the factory's attempt behind {@code enqueue()}), as the script does here: a
   * cancel, not a deadline, while the deadline is far off.
   */
  @Test
  void aCancelOfTheAttemptFromOutsideIsACancelNotADeadline() {
    script.cancelingTheCall().fail(new IOException("Canceled"));
    Call.Factory client = client(quietRetry().deadline(Duration.ofSeconds(10)).listener(events));
    assertThatThrownBy(() -> client.newCall(get()).execute())
        .isInstanceOf(IOException.class)
        .isNotInstanceOf(SocketTimeoutException.class);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("gaveUp")).singleElement().asString().startsWith("gaveUp 1 CANCELED ");
  }

  @Test
  void anInterruptedIOExceptionFromBelowIsNotRetried() {
    script.fail(new InterruptedIOException("interrupted")).status(200);
    assertThatThrownBy(() -> client(retry()).newCall(get()).execute())
        .isInstanceOf(InterruptedIOException.class);
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void anInterruptArrivingWithARetryableResponseEndsTheCallWithoutSpendingTheBudget() {
    assumeBlocking();
    script.interruptingTheCaller().status(503).status(200);
    RetryBudget budget = RetryBudget.builder().minRetriesPerSecond(1).build();
    Call.Factory c = client(retry().retryBudget(budget));
    try {
      assertThatThrownBy(() -> c.newCall(get()).execute())
          .isInstanceOf(InterruptedIOException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("flag kept").isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(script.closed(1)).isTrue();
    assertThat(events.lines()).containsExactly("start 1", "gaveUp 1 INTERRUPTED HTTP 503");
    assertThat(budget.payForHedge(okhttp3.HttpUrl.get("http://elsewhere.test/"), time.nanoTime()))
        .as("the reserve token is still there")
        .isTrue();
  }

  /**
   * What OkHttp's connect does on an interrupt: an undeclared InterruptedException, flag cleared.
   */
  @Test
  void anUndeclaredInterruptedExceptionBecomesAnInterruptedIOException() {
    assumeBlocking();
    List<String> gaveUp = new ArrayList<>();
    RetryListener listener =
        new RetryListener() {
          @Override
          public void onGaveUp(Request r, int a, GiveUpReason why, String last) {
            gaveUp.add(why + " " + a);
          }
        };
    script.raise(new InterruptedException());
    Call.Factory client = client(quietRetry().listener(listener));
    try {
      assertThatThrownBy(() -> client.newCall(get()).execute())
          .isInstanceOf(InterruptedIOException.class)
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(gaveUp).containsExactly("INTERRUPTED 1");
  }

  /**
   * An interrupt of the caller's thread is the blocking driver's: the async driver holds no caller
   * thread, and an interrupt of a dispatcher thread is OkHttp's business.
   */
  private void assumeBlocking() {
    assumeTrue(
        driver == Driver.BLOCKING, "an interrupt of the calling thread: blocking driver only");
  }
}
