package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import okhttp3.OkHttpClient;
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
}
