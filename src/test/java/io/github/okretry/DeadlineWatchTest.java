package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link DeadlineWatch}'s contract, without waiting for okio's watchdog: none for no deadline; a
 * watch stopped in time did not fire and left its call alone; a watch whose time came (its {@code
 * timedOut}, as the watchdog calls it) canceled the call and says so when stopped. The real timer:
 * DeadlineIntegrationTest.
 */
@Tag("unit")
class DeadlineWatchTest {

  final Call call =
      new OkHttpClient().newCall(new Request.Builder().url("https://a.test/").build());

  @Test
  void noDeadlineNoWatch() {
    assertThat(DeadlineWatch.start(call, 0)).isNull();
  }

  @Test
  void aWatchStoppedInTimeDidNotFire() {
    DeadlineWatch watch = DeadlineWatch.start(call, TimeUnit.MINUTES.toNanos(1));
    assertThat(watch).isNotNull();
    assertThat(watch.stop()).isFalse();
    assertThat(call.isCanceled()).isFalse();
  }

  @Test
  void aWatchWhoseTimeCameCanceledTheCallAndSaysSo() {
    DeadlineWatch watch = DeadlineWatch.start(call, TimeUnit.MINUTES.toNanos(1));
    watch.timedOut(); // what okio's watchdog does when the time comes
    assertThat(call.isCanceled()).isTrue();
    assertThat(watch.stop()).isTrue();
  }
}
