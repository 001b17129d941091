package io.github.okretry;

import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;

/**
 * Property tests without a property-testing library: one dynamic test per seed, each feeding a
 * {@link SplittableRandom} to the property, and printing the seed of a failure so it can be
 * replayed. {@code -Dokretry.propertySeeds=N} sets the number of seeds (default 200; the pit
 * profile lowers it, since every surviving mutant reruns the whole property). Also the draws
 * several properties share.
 */
public final class SeededProperties {
  public static final int SEEDS = Integer.getInteger("okretry.propertySeeds", 200);

  private SeededProperties() {}

  /** One test per seed. */
  public static Stream<DynamicTest> forSeeds(String name, Consumer<SplittableRandom> property) {
    return forSeeds(name, property, () -> {});
  }

  /** One test per seed; {@code onPass} runs after each seed that passed (e.g. to count cases). */
  public static Stream<DynamicTest> forSeeds(
      String name, Consumer<SplittableRandom> property, Runnable onPass) {
    return LongStream.range(0, SEEDS)
        .mapToObj(
            seed ->
                DynamicTest.dynamicTest(
                    name + " seed=" + seed,
                    () -> {
                      try {
                        property.accept(new SplittableRandom(seed));
                      } catch (AssertionError | RuntimeException e) {
                        System.out.println("FAILED " + name + " seed=" + seed + ": " + e);
                        throw e;
                      }
                      onPass.run();
                    }));
  }

  /** Log-uniform in [1, max], so nanoseconds, milliseconds and hours are all drawn. */
  public static long logUniform(SplittableRandom r, long max) {
    double x = Math.exp(r.nextDouble() * Math.log(max));
    return Math.max(1, Math.min(max, (long) x));
  }

  /**
   * A valid backoff multiplier: the smallest growth, 2, small, moderate, or huge (overflowing pow()
   * quickly).
   */
  public static double multiplier(SplittableRandom r) {
    switch (r.nextInt(5)) {
      case 0:
        return Math.nextUp(1.0); // the smallest valid growth
      case 1:
        return 2.0;
      case 2:
        return 1 + r.nextDouble() * 0.5;
      case 3:
        return 1 + r.nextDouble() * 10;
      default:
        return Math.exp(r.nextDouble() * Math.log(1e12)); // huge: overflows pow() quickly
    }
  }
}
