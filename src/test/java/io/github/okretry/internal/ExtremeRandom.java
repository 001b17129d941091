package io.github.okretry.internal;

/** A {@link RandomSource} that always draws the lowest (or the highest) value of any range. */
public final class ExtremeRandom {
  private ExtremeRandom() {}

  public static final RandomSource LOWEST = extreme(false);
  public static final RandomSource HIGHEST = extreme(true);

  private static RandomSource extreme(boolean highest) {
    return new RandomSource() {
      @Override
      public long nextLong() {
        return highest ? -1L : 0L;
      }

      @Override
      public long nextLong(long bound) {
        return highest ? bound - 1 : 0;
      }
    };
  }
}
