package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.Jitter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class BackoffTest {
  static final long S = TimeUnit.SECONDS.toNanos(1);
  static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void withoutJitterBaseOneSecondCapThreeGivesOneTwoThreeThree() {
    Backoff b = new Backoff(S, 3 * S, 2.0, Jitter.NONE);
    List<Long> waits = new ArrayList<>();
    for (int n = 1; n <= 4; n++) waits.add(b.delayNanos(n, S, new SplittableRandom(1)::nextLong));
    assertThat(waits).containsExactly(S, 2 * S, 3 * S, 3 * S);
  }

  @Test
  void hugeRetryNumbersAreJustTheCap() {
    Backoff b = new Backoff(100 * MS, 20 * S, 2.0, Jitter.NONE);
    assertThat(b.capNanos(10_000)).isEqualTo(20 * S);
    assertThat(b.capNanos(Integer.MAX_VALUE)).isEqualTo(20 * S);
    assertThat(new Backoff(1, Long.MAX_VALUE, 1.0000001, Jitter.NONE).capNanos(Integer.MAX_VALUE))
        .isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void maxBelowBaseMakesEveryCapTheMax() {
    Backoff b = new Backoff(5 * S, S, 2.0, Jitter.NONE);
    assertThat(b.capNanos(1)).isEqualTo(S);
    assertThat(b.capNanos(7)).isEqualTo(S);
  }

  @Test
  void fullJitterLiesInZeroToCapAndUsesTheWholeRange() {
    Backoff b = new Backoff(100 * MS, 2 * S, 2.0, Jitter.FULL);
    RandomSource random = new SplittableRandom(42)::nextLong;
    for (int n = 1; n <= 12; n++) {
      long cap = b.capNanos(n);
      long min = Long.MAX_VALUE;
      long max = 0;
      for (int i = 0; i < 2_000; i++) {
        long d = b.delayNanos(n, 0, random);
        assertThat(d).isBetween(0L, cap);
        min = Math.min(min, d);
        max = Math.max(max, d);
      }
      assertThat(min).as("retry %d draws near 0", n).isLessThan(cap / 20);
      assertThat(max).as("retry %d draws near the cap", n).isGreaterThan(cap - cap / 20);
    }
  }

  @Test
  void equalJitterLiesInUpperHalf() {
    Backoff b = new Backoff(100 * MS, 2 * S, 2.0, Jitter.EQUAL);
    RandomSource random = new SplittableRandom(7)::nextLong;
    for (int n = 1; n <= 8; n++) {
      long cap = b.capNanos(n);
      for (int i = 0; i < 1_000; i++) assertThat(b.delayNanos(n, 0, random)).isBetween(cap - cap / 2, cap);
    }
  }

  @Test
  void decorrelatedJitterStaysBetweenBaseAndThreeTimesPreviousCappedAtMax() {
    Backoff b = new Backoff(100 * MS, 2 * S, 2.0, Jitter.DECORRELATED);
    RandomSource random = new SplittableRandom(9)::nextLong;
    long previous = 100 * MS;
    for (int n = 1; n <= 200; n++) {
      long d = b.delayNanos(n, previous, random);
      assertThat(d).isBetween(100 * MS, Math.min(2 * S, previous * 3));
      previous = d;
    }
  }

  @ParameterizedTest
  @EnumSource(Jitter.class)
  void neverExceedsMaxNorGoesNegative(Jitter jitter) {
    Backoff b = new Backoff(3 * MS, 50 * MS, 3.5, jitter);
    RandomSource random = new SplittableRandom(jitter.ordinal())::nextLong;
    long previous = 3 * MS;
    for (int n = 1; n <= 500; n++) {
      long d = b.delayNanos(n, previous, random);
      assertThat(d).isBetween(0L, 50 * MS);
      previous = d;
    }
  }

  @Test
  void rejectsInvalidConfiguration() {
    assertThatThrownBy(() -> new Backoff(0, S, 2, Jitter.FULL)).hasMessageContaining("baseNanos");
    assertThatThrownBy(() -> new Backoff(S, -1, 2, Jitter.FULL)).hasMessageContaining("maxNanos");
    assertThatThrownBy(() -> new Backoff(S, S, 1.0, Jitter.FULL)).hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(S, S, Double.NaN, Jitter.FULL)).hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(S, S, Double.POSITIVE_INFINITY, Jitter.FULL))
        .hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(S, S, 2, null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> new Backoff(S, S, 2, Jitter.NONE).capNanos(0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
