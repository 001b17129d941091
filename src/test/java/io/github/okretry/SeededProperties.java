package io.github.okretry;

import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;

/**
 * Property tests without a property-testing library: one dynamic test per seed, each feeding a
 * {@link SplittableRandom} to the property, and printing the seed of a failure so it can be
 * replayed. {@code -Dokretry.propertySeeds=N} sets the number of seeds (default 200).
 */
final class SeededProperties {
  static final int SEEDS = Integer.getInteger("okretry.propertySeeds", 200);

  private SeededProperties() {}

  /** One test per seed; {@code onPass} runs after each seed that passed (e.g. to count cases). */
  static Stream<DynamicTest> forSeeds(String name, Consumer<SplittableRandom> property, Runnable onPass) {
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
}
