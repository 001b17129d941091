package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link RandomSource}: the bounded draw every source gets from its raw {@code nextLong()} (a mask
 * for a power of two; else rejection of the over-represented top of the range, as {@code
 * SplittableRandom} does), and {@link RandomSource#THREAD_LOCAL}.
 */
@Tag("unit")
class RandomSourceTest {

  /** A source that plays {@code draws} in order. */
  static RandomSource playing(long... draws) {
    Deque<Long> queue = new ArrayDeque<>();
    for (long d : draws) queue.add(d);
    return queue::remove;
  }

  @Test
  void aPowerOfTwoBoundKeepsTheLowBitsOfOneDraw() {
    assertThat(playing(5).nextLong(8)).isEqualTo(5);
    assertThat(playing(-1).nextLong(8)).isEqualTo(7);
    assertThat(playing(13).nextLong(8)).isEqualTo(5);
    assertThat(playing(-1).nextLong(1)).isZero();
  }

  @Test
  void anyOtherBoundTakesTheRemainderOfHalfTheDraw() {
    assertThat(playing(25).nextLong(10)).as("(25 >>> 1) % 10").isEqualTo(2);
  }

  /**
   * {@code u = draw >>> 1}; the last full block of {@code bound} values below 2^63 ends at u - u %
   * bound + bound - 1.
   */
  @Test
  void onlyTheIncompleteBlockAtTheTopOfTheRangeIsDrawnAgain() {
    long top = Long.MAX_VALUE; // u = MAX: its block [MAX - 7, MAX + 2] does not fit: drawn again
    assertThat(playing(top << 1 | 1, 40).nextLong(10)).isEqualTo(0);
    long lastFull = Long.MAX_VALUE - 12; // u % 10 = 5: its block [MAX - 17, MAX - 8] fits
    assertThat(lastFull % 10).isEqualTo(5);
    assertThat(playing(lastFull << 1, 40).nextLong(10)).isEqualTo(5);
  }

  @Test
  void theThreadLocalSourceDrawsVaryingValuesWithinTheBound() {
    long[] raw = LongStream.generate(RandomSource.THREAD_LOCAL::nextLong).limit(64).toArray();
    assertThat(Arrays.stream(raw).distinct().count()).isGreaterThan(1);
    assertThat(LongStream.generate(() -> RandomSource.THREAD_LOCAL.nextLong(10)).limit(1_000))
        .allMatch(v -> v >= 0 && v < 10);
  }
}
