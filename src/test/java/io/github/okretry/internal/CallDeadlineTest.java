package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link CallDeadline}: the shorter of okretry's deadline and OkHttp's call timeout, as arithmetic.
 */
@Tag("unit")
class CallDeadlineTest {
  static final long MS = 1_000_000L;
  static final long NOW = 5_000 * MS;

  @Test
  void noneWhenNeitherIsSet() {
    CallDeadline none = CallDeadline.of(NOW, 0, 0);
    assertThat(none).isSameAs(CallDeadline.NONE);
    assertThat(none.exists()).isFalse();
    assertThat(none.remainingNanos(NOW)).isEqualTo(CallDeadline.NO_DEADLINE);
    assertThat(none.passed(Long.MAX_VALUE - 1)).isFalse();
    assertThat(none.watchNanos(NOW)).isZero();
    assertThat(none.attemptCallTimeoutNanos(NOW)).isZero();
  }

  @Test
  void okretrysOwnDeadlineIsWatchedByOkretry() {
    CallDeadline own = CallDeadline.of(NOW, 1_000 * MS, 0);
    assertThat(own.endNanos()).isEqualTo(NOW + 1_000 * MS);
    assertThat(own.remainingNanos(NOW + 400 * MS)).isEqualTo(600 * MS);
    assertThat(own.watchNanos(NOW + 400 * MS)).isEqualTo(600 * MS);
    assertThat(own.watchNanos(NOW + 2_000 * MS))
        .as("at least 1 ns: a watch of 0 is none")
        .isEqualTo(1);
    assertThat(own.attemptCallTimeoutNanos(NOW)).isZero();
    assertThat(own.passed(NOW + 999 * MS)).isFalse();
    assertThat(own.passed(NOW + 1_000 * MS)).isTrue();
  }

  @Test
  void theShorterWinsAndACallTimeoutIsOkHttpsToEnforce() {
    CallDeadline timeout = CallDeadline.of(NOW, 2_000 * MS, 1_000 * MS);
    assertThat(timeout.endNanos()).isEqualTo(NOW + 1_000 * MS);
    assertThat(timeout.watchNanos(NOW)).isZero();
    assertThat(timeout.attemptCallTimeoutNanos(NOW + 100 * MS)).isEqualTo(900 * MS);
    assertThat(CallDeadline.of(NOW, 1_000 * MS, 2_000 * MS).watchNanos(NOW)).isEqualTo(1_000 * MS);
    assertThat(CallDeadline.of(NOW, 0, 2_000 * MS).endNanos()).isEqualTo(NOW + 2_000 * MS);
  }

  @Test
  void aCallTimeoutCountsAsRunOutItsSlackEarly() {
    CallDeadline timeout = CallDeadline.of(NOW, 0, 1_000 * MS);
    long end = NOW + 1_000 * MS;
    assertThat(timeout.passed(end - CallDeadline.CALL_TIMEOUT_SLACK_NANOS - 1)).isFalse();
    assertThat(timeout.passed(end - CallDeadline.CALL_TIMEOUT_SLACK_NANOS)).isTrue();
  }

  @Test
  void aHugeBudgetNeverLandsOnTheSentinel() {
    assertThat(CallDeadline.of(NOW, Long.MAX_VALUE - 1, 0).endNanos())
        .isEqualTo(CallDeadline.NO_DEADLINE - 1);
    assertThat(CallDeadline.of(-NOW, Long.MAX_VALUE - 1, 0).exists()).isTrue();
  }
}
