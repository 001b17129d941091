package io.github.okretry;

import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The budget's evidence rule in one {@link LogicalCall}: a retry scheduled without evidence that
 * retrying works ({@link RetryBudget#tryCountInStreak}) waits its backoff anyway and is sent only
 * if the budget finds some once the wait is over. Until then its failure is held: an exception
 * here, kept out of the call's history; a response by the driver, through the wait ({@link
 * Step#waitHolding}). Made at a call's first such retry and reused; like its call, not thread-safe.
 */
final class UnprovenRetry {

  private boolean pending;
  private @Nullable IOException error;

  /** A retry is scheduled without evidence; {@code failure} (null after a response) is held until it is sent. */
  void hold(@Nullable IOException failure) {
    pending = true;
    error = failure;
  }

  /** True while a retry scheduled without evidence waits to be sent. */
  boolean pending() {
    return pending;
  }

  /** The failure held, or null; nothing is pending from now on. */
  @Nullable IOException release() {
    IOException e = error;
    pending = false;
    error = null;
    return e;
  }
}
