package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import okio.Timeout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link CallTimeouts}: a call's okio {@code Timeout} (timeout and deadline, the shorter winning).
 */
@Tag("unit")
class CallTimeoutsTest {

  @Test
  void timeoutDeadlineBothOrNeither() {
    assertThat(CallTimeouts.nanosAllowed(new Timeout())).isZero();
    assertThat(CallTimeouts.nanosAllowed(new Timeout().timeout(2, TimeUnit.SECONDS)))
        .isEqualTo(2_000_000_000L);

    long deadline = CallTimeouts.nanosAllowed(new Timeout().deadline(2, TimeUnit.SECONDS));
    assertThat(deadline).isBetween(1_000_000_000L, 2_000_000_000L);

    Timeout both = new Timeout().timeout(5, TimeUnit.SECONDS).deadline(2, TimeUnit.SECONDS);
    assertThat(CallTimeouts.nanosAllowed(both)).isBetween(1_000_000_000L, 2_000_000_000L);
    Timeout shorterTimeout = new Timeout().timeout(1, TimeUnit.SECONDS).deadline(1, TimeUnit.HOURS);
    assertThat(CallTimeouts.nanosAllowed(shorterTimeout)).isEqualTo(1_000_000_000L);
  }

  @Test
  void aDeadlineAlreadyPassedAllowsOneNanosecond() {
    Timeout passed = new Timeout().deadlineNanoTime(System.nanoTime() - 1_000_000);
    assertThat(CallTimeouts.nanosAllowed(passed)).isEqualTo(1);
  }
}
