package io.github.okretry;

import java.util.ArrayList;
import java.util.List;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A listener that writes each event as a short line, so a test asserts a whole call's events in
 * order: {@code "start 1"}, {@code "retry 1 HTTP 503"}, {@code "gaveUp 2 DEADLINE_EXCEEDED HTTP
 * 429"}, {@code "succeeded 3 HTTP 200"}.
 */
final class EventLog implements RetryListener {
  private final List<String> lines = new ArrayList<>();

  /** Every line so far, in order. */
  synchronized List<String> lines() {
    return List.copyOf(lines);
  }

  /** The lines that start with {@code event} ("start", "hedge", "retry", "gaveUp", "succeeded"). */
  synchronized List<String> lines(String event) {
    return lines.stream().filter(line -> line.startsWith(event + " ")).toList();
  }

  @Override
  public synchronized void onAttemptStarted(Request request, int attempt) {
    lines.add("start " + attempt);
  }

  @Override
  public synchronized void onHedgeStarted(Request request, int attempt, long afterNanos) {
    lines.add(
        "hedge "
            + attempt
            + " after "
            + java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(afterNanos)
            + " ms");
  }

  @Override
  public synchronized void onRetryScheduled(
      Request request, int attempt, String reason, long delayNanos) {
    lines.add("retry " + attempt + " " + reason);
  }

  @Override
  public synchronized void onGaveUp(
      Request request, int attempts, GiveUpReason reason, String lastFailure) {
    lines.add("gaveUp " + attempts + " " + reason + " " + lastFailure);
  }

  @Override
  public synchronized void onSucceeded(Request request, Response response, int attempts) {
    lines.add("succeeded " + attempts + " HTTP " + response.code());
  }
}
