package io.github.okretry.examples;

import io.github.okretry.GiveUpReason;
import io.github.okretry.RetryListener;
import java.time.Duration;
import okhttp3.Request;
import okhttp3.Response;

/** Prints what the interceptor does, attempt by attempt, with the time since the call began. */
final class Timeline implements RetryListener {
  private final long startNanos = System.nanoTime();

  private String at() {
    return String.format("[+%5d ms]", (System.nanoTime() - startNanos) / 1_000_000);
  }

  void print(String what) {
    System.out.println(at() + " " + what);
  }

  @Override
  public void onAttemptStarted(Request request, int attempt) {
    String key = request.header("Idempotency-Key");
    print(String.format("attempt %d: %s %s%s", attempt, request.method(), request.url().encodedPath(),
        key == null ? "" : " (Idempotency-Key " + key.substring(0, Math.min(8, key.length())) + "…)"));
  }

  @Override
  public void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
    print(String.format("attempt %d failed: %s -> waiting %d ms", attempt, reason, delay.toMillis()));
  }

  @Override
  public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
    print(String.format("gave up after %d attempt(s): %s (%s)", attempts, reason, lastFailure));
  }

  @Override
  public void onSucceeded(Request request, Response response, int attempts) {
    print(String.format("done after %d attempt(s): HTTP %d", attempts, response.code()));
  }
}
