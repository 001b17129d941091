package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import okhttp3.HttpUrl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A success while an origin has failed lately, and a retry asked of its streaks, allocate nothing:
 * no origin key is made (the slot is found by hashing the URL's parts), so a healthy call beside a
 * failing origin costs what it costs with none (issue 42: +416 B a call while any streak was open).
 */
@Tag("unit")
class OriginStreaksAllocationTest {

  @Test
  void aSuccessAndACountAllocateNothingOnceWarm() {
    OriginStreaks streaks =
        new OriginStreaks(
            Tuning.ORIGIN_SLOTS,
            Tuning.ORIGIN_MEMORY_NANOS,
            Tuning.COMMON_FAILURE_SHARE,
            Tuning.FAILURE_SHARE_WINDOW);
    HttpUrl dead = HttpUrl.get("https://dead.test/api/orders/42");
    HttpUrl healthy = HttpUrl.get("https://healthy.test/api/orders/42");
    streaks.failed(dead, 0);
    streaks.failed(healthy, 0);
    Runnable calls =
        () -> {
          for (int i = 0; i < 10_000; i++) {
            streaks.succeeded(healthy, i);
            streaks.count(dead, 2, 6, 1_000_000_000L, i, false);
            streaks.failuresAreCommon(dead, i);
          }
        };
    for (int warm = 0; warm < 20; warm++) calls.run(); // let the JIT compile what it will
    long bytes = Allocation.ofCurrentThread(calls);
    assertThat(bytes).as("bytes for 10 000 successes and counts").isLessThan(10_000);
  }
}
