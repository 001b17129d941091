package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link FailureHistory}: the earlier failures attached as suppressed, bounded to the first 3 and
 * the last 5 with one marker for the rest. Through the interceptor: {@code WhatTheCallerGetsTest}.
 */
@Tag("unit")
class FailureHistoryTest {

  static List<String> attach(int failures) {
    FailureHistory history = new FailureHistory();
    for (int i = 1; i <= failures; i++) history.add(new IOException("f" + i));
    IOException last = new IOException("last");
    assertThat(history.attachTo(last)).isSameAs(last);
    List<String> out = new ArrayList<>();
    for (Throwable t : last.getSuppressed()) {
      out.add(t instanceof FailureHistory.Omitted o ? "omitted " + o.omitted() : t.getMessage());
    }
    return out;
  }

  @Test
  void keepsAllUpToEight() {
    assertThat(attach(0)).isEmpty();
    assertThat(attach(1)).containsExactly("f1");
    assertThat(attach(3)).containsExactly("f1", "f2", "f3");
    assertThat(attach(4)).containsExactly("f1", "f2", "f3", "f4");
    assertThat(attach(8)).containsExactly("f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8");
  }

  @Test
  void keepsTheFirstThreeAndTheLastFiveBeyond() {
    assertThat(attach(9))
        .containsExactly("f1", "f2", "f3", "omitted 1", "f5", "f6", "f7", "f8", "f9");
    assertThat(attach(13))
        .containsExactly("f1", "f2", "f3", "omitted 5", "f9", "f10", "f11", "f12", "f13");
    assertThat(attach(100_000))
        .hasSize(FailureHistory.KEEP_FIRST + 1 + FailureHistory.KEEP_LAST)
        .contains("omitted 99992")
        .endsWith("f99996", "f99997", "f99998", "f99999", "f100000");
  }

  @Test
  void theFinalFailureIsNeverItsOwnSuppressed() {
    FailureHistory history = new FailureHistory();
    IOException e = new IOException("same");
    history.add(e);
    assertThat(history.attachTo(e).getSuppressed()).isEmpty();
  }

  @Test
  void theMarkerSaysWhatWasLeftOutAndHasNoStackTrace() {
    FailureHistory history = new FailureHistory();
    for (int i = 0; i < 20; i++) history.add(new IOException());
    Throwable marker = history.attachTo(new IOException()).getSuppressed()[3];
    assertThat(marker)
        .isInstanceOf(FailureHistory.Omitted.class)
        .hasMessage(
            "okretry: 12 earlier failures omitted (failures 4 to 15); the first 3 and the last 5"
                + " are kept");
    assertThat(marker.getStackTrace()).isEmpty();
  }
}
