package io.github.okretry;

import static io.github.okretry.Seen.ATTEMPT_CANCELED;
import static io.github.okretry.Seen.CALLER_CANCELED;
import static io.github.okretry.Seen.INTERRUPTED;
import static io.github.okretry.Seen.WATCH_FIRED;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Seen}: the one precedence that turns what a driver saw into a reason, for both drivers.
 * Each case is what the blocking driver sees (its one call: a cancel of the call is a cancel of the
 * attempt) and what the async one sees (the caller's flag, the attempt's own call) of the same
 * situation; DriverParityTest plays the same situations through real OkHttp calls.
 */
@Tag("unit")
class SeenTest {
  static final boolean DEADLINE_PASSED = true;
  static final boolean IN_TIME = false;

  /**
   * What each driver passes for "an attempt was canceled by something other than okretry's watch".
   */
  static int canceledBy(Driver driver, boolean byCaller) {
    return driver == Driver.BLOCKING
        ? CALLER_CANCELED | ATTEMPT_CANCELED // its one call is the caller's
        : (byCaller ? CALLER_CANCELED : 0) | ATTEMPT_CANCELED;
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aCancelOnceTheDeadlineHasPassedIsTheDeadline(Driver driver) {
    // OkHttp's call timeout canceled the failed attempt: the deadline, on both drivers.
    assertThat(Seen.cutShort(canceledBy(driver, driver == Driver.BLOCKING), DEADLINE_PASSED))
        .isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aCancelBeforeTheDeadlineIsACancel(Driver driver) {
    // Dispatcher.cancelAll() or the caller's cancel(): a cancel, not a deadline.
    assertThat(Seen.cutShort(canceledBy(driver, false), IN_TIME)).isEqualTo(GiveUpReason.CANCELED);
    assertThat(Seen.cutShort(canceledBy(driver, true), IN_TIME)).isEqualTo(GiveUpReason.CANCELED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void theWatchFiringIsTheDeadlineWhoeverElseCanceled(Driver driver) {
    assertThat(Seen.cutShort(WATCH_FIRED | canceledBy(driver, true), IN_TIME))
        .isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aResponseInHandWasDecidedInTime(Driver driver) {
    assertThat(Seen.cutShortWithResponse(WATCH_FIRED)).as("no deadline for a response").isNull();
    assertThat(Seen.cutShortWithResponse(ATTEMPT_CANCELED))
        .as("another's cancel after it")
        .isNull();
    assertThat(Seen.cutShortWithResponse(CALLER_CANCELED))
        .as("but the caller's cancel counts")
        .isEqualTo(GiveUpReason.CANCELED);
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void anInterruptComesLast(Driver driver) {
    assertThat(Seen.cutShortWithResponse(INTERRUPTED)).isEqualTo(GiveUpReason.INTERRUPTED);
    assertThat(Seen.cutShort(INTERRUPTED | canceledBy(driver, true), IN_TIME))
        .isEqualTo(GiveUpReason.CANCELED);
    assertThat(Seen.cutShort(0, DEADLINE_PASSED)).as("nothing seen: ended by itself").isNull();
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aBugBelowIsNotACancel(Driver driver) {
    IllegalStateException bug = new IllegalStateException("bug");
    // The blocking driver catches the throw itself; the async one gets OkHttp's report of it.
    Throwable seen =
        driver == Driver.BLOCKING ? bug : new IOException("canceled due to " + bug, bug);
    assertThat(Seen.thrownBelow(seen, driver == Driver.BLOCKING ? 0 : ATTEMPT_CANCELED))
        .isSameAs(bug);
    assertThat(
            Seen.thrownBelow(
                new IOException("canceled due to " + bug, bug), CALLER_CANCELED | ATTEMPT_CANCELED))
        .as("the caller canceled: whatever the message says")
        .isNull();
    assertThat(Seen.thrownBelow(new IOException("Canceled"), ATTEMPT_CANCELED)).isNull();
  }

  /**
   * Both drivers alike: OkHttp's "canceled due to" report is a bug below only on an attempt it
   * canceled.
   */
  @Test
  void okHttpsReportOfABugBelowCountsOnlyOnAnAttemptItCanceled() {
    IllegalStateException bug = new IllegalStateException("bug");
    IOException report = new IOException("canceled due to " + bug, bug);
    assertThat(Seen.thrownBelow(report, 0))
        .as("the attempt was not canceled: an IOException like any other")
        .isNull();
    assertThat(Seen.thrownBelow(report, INTERRUPTED | WATCH_FIRED)).isNull();
  }
}
