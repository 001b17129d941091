package io.github.okretry;

import static io.github.okretry.Seen.ATTEMPT_CANCELED;
import static io.github.okretry.Seen.CALLER_CANCELED;
import static io.github.okretry.Seen.INTERRUPTED;
import static io.github.okretry.Seen.WATCH_FIRED;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Seen}: the one precedence that turns what a driver saw into a reason, for both drivers.
 * Each case is what the blocking driver sees (its one call: a cancel of the call is a cancel of
 * the attempt) and what the async one sees (the caller's flag, the attempt's own call) of the
 * same situation; DriverParityTest plays the same situations through real OkHttp calls.
 */
@Tag("unit")
class SeenTest {

  /** What each driver passes for "an attempt was canceled by something other than okretry's watch". */
  static int canceledBy(Driver driver, boolean byCaller) {
    return driver == Driver.BLOCKING
        ? CALLER_CANCELED | ATTEMPT_CANCELED // its one call is the caller's
        : (byCaller ? CALLER_CANCELED : 0) | ATTEMPT_CANCELED;
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aCancelOnceTheDeadlineHasPassedIsTheDeadline(Driver driver) {
    // OkHttp's call timeout canceled the failed attempt: the deadline, on both drivers.
    assertThat(Seen.cutShort(canceledBy(driver, driver == Driver.BLOCKING), true, true))
        .isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aCancelBeforeTheDeadlineIsACancel(Driver driver) {
    // Dispatcher.cancelAll() or the caller's cancel(): a cancel, not a deadline.
    assertThat(Seen.cutShort(canceledBy(driver, false), true, false)).isEqualTo(GiveUpReason.CANCELED);
    assertThat(Seen.cutShort(canceledBy(driver, true), true, false)).isEqualTo(GiveUpReason.CANCELED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theWatchFiringIsTheDeadlineWhoeverElseCanceled(Driver driver) {
    assertThat(Seen.cutShort(WATCH_FIRED | canceledBy(driver, true), true, false))
        .isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aResponseInHandWasDecidedInTime(Driver driver) {
    assertThat(Seen.cutShort(WATCH_FIRED, false, true)).as("no deadline for a response").isNull();
    assertThat(Seen.cutShort(ATTEMPT_CANCELED, false, true)).as("another's cancel after it").isNull();
    assertThat(Seen.cutShort(CALLER_CANCELED, false, false)).as("but the caller's cancel counts")
        .isEqualTo(GiveUpReason.CANCELED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anInterruptComesLast(Driver driver) {
    assertThat(Seen.cutShort(INTERRUPTED, false, false)).isEqualTo(GiveUpReason.INTERRUPTED);
    assertThat(Seen.cutShort(INTERRUPTED | canceledBy(driver, true), true, false)).isEqualTo(GiveUpReason.CANCELED);
    assertThat(Seen.cutShort(0, true, true)).as("nothing seen: ended by itself").isNull();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aBugBelowIsNotACancel(Driver driver) {
    IllegalStateException bug = new IllegalStateException("bug");
    // The blocking driver catches the throw itself; the async one gets OkHttp's report of it.
    Throwable seen = driver == Driver.BLOCKING ? bug : new IOException("canceled due to " + bug, bug);
    assertThat(Seen.thrownBelow(seen, driver == Driver.BLOCKING ? 0 : ATTEMPT_CANCELED)).isSameAs(bug);
    assertThat(Seen.thrownBelow(new IOException("canceled due to " + bug, bug), CALLER_CANCELED | ATTEMPT_CANCELED))
        .as("the caller canceled: whatever the message says").isNull();
    assertThat(Seen.thrownBelow(new IOException("Canceled"), ATTEMPT_CANCELED)).isNull();
  }
}
