package io.github.okretry;

import java.util.ArrayList;
import java.util.List;

/**
 * What a call's exception carries as suppressed besides okretry's summary of its outcome ({@link
 * RetryOutcome.Summary}, always the last): the exceptions of earlier attempts, as tests compare
 * them.
 */
final class EarlierFailures {

  private EarlierFailures() {}

  /** {@code e}'s suppressed exceptions but its outcome's summary, in order. */
  static Throwable[] of(Throwable e) {
    List<Throwable> out = new ArrayList<>();
    for (Throwable t : e.getSuppressed()) {
      if (!(t instanceof RetryOutcome.Summary)) {
        out.add(t);
      }
    }
    return out.toArray(new Throwable[0]);
  }
}
