package io.github.okretry;

import static io.github.okretry.internal.Durations.seconds;

import io.github.okretry.internal.Backoff;
import io.github.okretry.internal.Durations;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A policy's worst case in words and numbers ({@link RetryPolicy#explain()}), one short line per
 * claim, the binding figure first: the deadline or call timeout that bounds the call, or that none
 * does and what the parts add up to; a warning when a client's timeout leaves a stalled attempt no
 * time to be retried; then the attempts, the longest each wait can be ({@link
 * Backoff#longestNanos}, or a server's {@code Retry-After} up to {@code maxRetryAfter}), the holds
 * a published quota may add, and what one attempt takes with the client's timeouts. Pure arithmetic
 * on the settings.
 */
final class PolicyExplanation {

  private PolicyExplanation() {}

  /**
   * Retries whose waits are listed one by one; past that, the first few and the rest as a product.
   */
  private static final int LISTED = 10;

  /** The follow-ups (redirects, auth challenges) OkHttp makes for one call at most. */
  static final int MAX_FOLLOW_UPS = 20;

  /**
   * The explanation of {@code s}, whose waits {@code backoff} draws; with {@code timeoutsMillis} (a
   * client's connect, write, read and call timeouts, in milliseconds, 0 for none; null for none
   * known) what an attempt takes and whether a stalled one leaves time to retry. Lines are
   * separated by {@code '\n'}.
   */
  static String explain(Settings s, Backoff backoff, long @Nullable [] timeoutsMillis) {
    int retries = s.maxRetries;
    long attempts = retries + 1L;
    long serverWaitNanos = s.maxRetryAfterNanos;
    // A server may answer any attempt with a 429 or 503 (always retried) and a Retry-After, which
    // replaces that wait: each wait is the longer of the backoff's and the ceiling.
    long waitsNanos = backoff.longestTotalNanos(retries, serverWaitNanos);
    long holdsNanos =
        s.quotaPacing == QuotaPacing.OFF ? 0 : saturatedMultiply(attempts, serverWaitNanos);
    long deadline = s.deadlineNanos;
    long callTimeout = timeoutsMillis == null ? 0 : nanos(timeoutsMillis[3]);
    boolean callTimeoutBinds = callTimeout != 0 && (deadline == 0 || callTimeout < deadline);
    long bound = callTimeoutBinds ? callTimeout : deadline; // 0: nothing bounds the call
    String boundName = callTimeoutBinds ? "call timeout" : "deadline";
    long perAttempt = timeoutsMillis == null ? 0 : perAttemptNanos(timeoutsMillis);

    List<String> lines = new ArrayList<>();
    if (bound != 0) {
      lines.add(
          "At worst "
              + seconds(bound)
              + " s: "
              + (callTimeoutBinds
                  ? "the client's call timeout bounds the whole call."
                  : "the deadline bounds the whole call, attempts and waits."));
    } else if (timeoutsMillis == null) {
      lines.add(
          "At worst: no bound set. No deadline: the attempts take what the client's timeouts"
              + " allow (explain(client) adds them up), the waits and holds up to "
              + total(saturatedAdd(waitsNanos, holdsNanos))
              + " s.");
    } else if (perAttempt == 0) {
      lines.add(
          "At worst: no bound. No deadline or call timeout bounds the call, and this client's"
              + " timeouts do not bound an attempt.");
    } else {
      long total =
          saturatedAdd(
              saturatedMultiply(attempts, perAttempt), saturatedAdd(waitsNanos, holdsNanos));
      lines.add(
          "At worst: no bound. No deadline or call timeout bounds the call. If each attempt is one"
              + " request that times out once: "
              + attempts
              + " × "
              + seconds(perAttempt)
              + " s"
              + (retries > 0 ? " + " + total(waitsNanos) + " s of waits" : "")
              + (holdsNanos > 0 ? " + " + total(holdsNanos) + " s of quota holds" : "")
              + " = "
              + total(total)
              + " s.");
    }
    if (timeoutsMillis != null && bound != 0 && retries > 0) {
      String warning = stallWarning(timeoutsMillis, bound, boundName, attempts);
      if (warning != null) lines.add(warning);
    }
    lines.add(
        "Attempts: "
            + (retries == 0
                ? "1 (no retry)."
                : "up to "
                    + attempts
                    + " (the first and "
                    + retries
                    + (retries == 1 ? " retry)." : " retries).")));
    if (retries > 0) {
      lines.add(backoffLine(s, backoff));
      lines.add(
          "Retry-After: a server wait replaces a backoff, up to "
              + seconds(serverWaitNanos)
              + " s each (maxRetryAfter), so the waits come to up to "
              + total(waitsNanos)
              + " s; a longer one ends the call.");
    }
    if (holdsNanos > 0) {
      lines.add(
          "Quotas: a spent quota the server published may hold each attempt up to "
              + seconds(serverWaitNanos)
              + " s of pacing before it goes (quotaPacing), "
              + total(holdsNanos)
              + " s in all.");
    }
    if (s.originWideRetryAfter) {
      lines.add(
          "Origin gate: a Retry-After to any call may hold each attempt up to "
              + seconds(serverWaitNanos)
              + " s of pacing too, each time the origin asks (originWideRetryAfter).");
    }
    if (timeoutsMillis != null) {
      lines.add(attemptLine(timeoutsMillis, perAttempt));
    } else if (bound != 0) {
      lines.add("Timeouts: explain(client) adds up the client's and checks them against it.");
    }
    return join("\n", lines);
  }

  /** The backoff's longest waits, listed, and their sum. */
  private static String backoffLine(Settings s, Backoff backoff) {
    int retries = s.maxRetries;
    int listed = retries <= LISTED ? retries : LISTED - 2;
    StringBuilder out = new StringBuilder("Backoff waits, each at most: ");
    for (int n = 1; n <= listed; n++) {
      if (n > 1) out.append(" + ");
      out.append(seconds(backoff.longestNanos(n)));
    }
    if (retries > listed) {
      out.append(" + … (")
          .append(retries - listed)
          .append(" more, up to ")
          .append(seconds(s.maxDelayNanos))
          .append(" s each)");
    }
    return out.append(" = ")
        .append(total(backoff.longestTotalNanos(retries, 0)))
        .append(" s of waiting (")
        .append(jitterWords(s))
        .append(").")
        .toString();
  }

  /**
   * What one attempt takes with the client's timeouts, or that they do not bound it; and that
   * neither the per-operation timeouts nor OkHttp's follow-ups keep to that figure.
   */
  private static String attemptLine(long[] timeoutsMillis, long perAttempt) {
    String parts =
        "connect "
            + millis(timeoutsMillis[0])
            + " + write "
            + millis(timeoutsMillis[1])
            + " + read "
            + millis(timeoutsMillis[2]);
    if (perAttempt == 0) {
      return "Each attempt: " + parts.replace(" + ", ", ") + ": no bound.";
    }
    return "Each attempt: "
        + parts
        + " = "
        + seconds(perAttempt)
        + " s if its request times out once. Each timeout is per operation: a server that"
        + " trickles bytes holds a request longer. Each redirect or auth follow-up (OkHttp makes"
        + " up to "
        + MAX_FOLLOW_UPS
        + ") gets them afresh.";
  }

  /**
   * A warning if a timeout an attempt can stall on (connect, write, read; none counts as endless)
   * is not below {@code bound}: a server that stalls there keeps the first attempt to the end, so
   * the call is never retried. Null if each is below it.
   */
  private static @Nullable String stallWarning(
      long[] timeoutsMillis, long bound, String boundName, long attempts) {
    String[] names = {"connect", "write", "read"};
    List<String> which = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      long t = nanos(timeoutsMillis[i]);
      if (t == 0 || t >= bound) {
        which.add(names[i]);
        values.add(millis(timeoutsMillis[i]));
      }
    }
    if (which.isEmpty()) return null;
    boolean one = which.size() == 1;
    long share = bound / attempts;
    return "Warning: the "
        + words(which)
        + (one ? " timeout (" : " timeouts (")
        + join(", ", values)
        + (one ? ") is not below the " : ") are not below the ")
        + boundName
        + " ("
        + seconds(bound)
        + " s): a server that stalls keeps the first attempt to the end, and no retry is made."
        + " Keep "
        + (one ? "it" : "them")
        + " well below"
        + (share >= MIN_SUGGESTED_NANOS
            ? ", say "
                + seconds(share)
                + " s (the "
                + boundName
                + " over "
                + attempts
                + " attempts)."
            : ".");
  }

  /** A share of the call's time too short to suggest as a timeout: 1 ms, OkHttp's resolution. */
  private static final long MIN_SUGGESTED_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** {@link Durations#seconds}, or for a sum that saturated, "more than" the most a long holds. */
  private static String total(long nanos) {
    return nanos == Long.MAX_VALUE
        ? "more than " + seconds(nanos - nanos % 1_000_000_000L)
        : seconds(nanos);
  }

  /** "a", "a and b", "a, b and c". */
  private static String words(List<String> items) {
    int n = items.size();
    if (n == 1) return items.get(0);
    return join(", ", items.subList(0, n - 1)) + " and " + items.get(n - 1);
  }

  /** {@code parts} with {@code separator} between them (String.join is not on Android 21). */
  private static String join(String separator, List<String> parts) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < parts.size(); i++) {
      if (i > 0) out.append(separator);
      out.append(parts.get(i));
    }
    return out.toString();
  }

  /** connect + write + read, in nanoseconds; 0 if any is none. */
  private static long perAttemptNanos(long[] timeoutsMillis) {
    long connect = timeoutsMillis[0];
    long write = timeoutsMillis[1];
    long read = timeoutsMillis[2];
    if (connect == 0 || write == 0 || read == 0) return 0;
    return saturatedAdd(nanos(connect), saturatedAdd(nanos(write), nanos(read)));
  }

  private static String jitterWords(Settings s) {
    String growth =
        s.jitter == Jitter.DECORRELATED
            ? "decorrelated jitter: each up to 3 × the previous, from "
                + seconds(s.baseDelayNanos)
                + " s"
            : "×"
                + BigDecimal.valueOf(s.multiplier).stripTrailingZeros().toPlainString()
                + " from "
                + seconds(s.baseDelayNanos)
                + " s, capped at "
                + seconds(s.maxDelayNanos)
                + " s";
    switch (s.jitter) {
      case NONE:
        return growth + "; no jitter: each wait is its cap";
      case FULL:
        return growth + "; Full jitter draws each from 0 to its cap";
      case EQUAL:
        return growth + "; Equal jitter draws each from half its cap to its cap";
      default:
        return growth;
    }
  }

  private static long nanos(long millis) {
    return TimeUnit.MILLISECONDS.toNanos(millis); // saturates
  }

  private static String millis(long millis) {
    return millis == 0 ? "none" : seconds(nanos(millis)) + " s";
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }

  private static long saturatedMultiply(long a, long b) {
    long r = a * b;
    return (a != 0 && r / a != b) || r < 0 ? Long.MAX_VALUE : r;
  }
}
