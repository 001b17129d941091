package io.github.okretry;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The load tests at soak volume, minutes each, and the exact-{@code Retry-After} comparison: left
 * out of {@code mvn test} and of mutation testing. Run them with {@code mvn test
 * -Dokretry.excludedGroups= -Dgroups=soak} (add {@code -Dokretry.printTables=true} for the
 * numbers).
 */
@Tag("soak")
@ExtendWith(LeakCheck.class)
class SoakTest {

  /** {@link PaymentsTest} at 20× the volume. */
  @Test
  void paymentsAreChargedAtMostOnceAtTwentyTimesTheVolume() throws Exception {
    PaymentsTest.run(20_000, 16, PaymentsTest.SEED + 1);
  }

  /** {@link ConcurrencyTest} with 25× the calls. */
  @Test
  void booksBalanceAtTwentyFiveTimesTheLoad() throws Exception {
    ConcurrencyTest.run(64, 5_000, ConcurrencyTest.SEED + 1);
  }

  /**
   * {@link SpreadRetryAfterTest}'s 40 callers with {@code retryAfterSpread(0)}: for the printed
   * comparison only.
   */
  @Test
  void exactRetryAfterHonoringForComparison() throws Exception {
    SpreadRetryAfterTest.Result exact = SpreadRetryAfterTest.run(0.0, 7);
    Diagnostics.printf(
        "Retry-After honored exactly:      %d/%d callers got 200 in %d ms, %.2f attempts per"
            + " caller%n",
        exact.succeeded(), exact.callers(), exact.elapsedMs(), exact.attemptsPerCaller());
  }
}
