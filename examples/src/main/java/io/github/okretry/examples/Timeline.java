package io.github.okretry.examples;

import io.github.okretry.GiveUpReason;
import io.github.okretry.RetryListener;
import java.time.Duration;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Prints what the interceptor does, attempt by attempt, with the time since the call began, and why
 * each wait is as long as it is.
 *
 * <p>To explain waits it needs two things the listener events do not carry: the policy's base delay
 * (the examples keep the other backoff defaults: multiplier 2, a 10 s cap, Full Jitter), given to
 * its constructor, and each attempt's {@code Retry-After}, which {@link #attempts()} records when
 * added <em>after</em> the retry interceptor, where it sees every attempt:
 *
 * <pre>{@code
 * Timeline timeline = new Timeline(Duration.ofMillis(200));
 * RetryInterceptor retry = RetryInterceptor.create(RetryPolicy.builder()
 *     .baseDelay(Duration.ofMillis(200))
 *     .listener(timeline)
 *     .build());
 * OkHttpClient client = new OkHttpClient.Builder()
 *     .addInterceptor(retry)
 *     .addInterceptor(timeline.attempts())
 *     .build();
 * }</pre>
 */
final class Timeline implements RetryListener {
  private static final double MULTIPLIER = 2; // okretry's defaults, which the examples keep
  private static final long MAX_DELAY_MILLIS = 10_000;

  private volatile long startNanos = System.nanoTime();
  private final long baseDelayMillis;

  /** The Retry-After of the attempt that just failed on this thread, or null. */
  private final ThreadLocal<String> retryAfter = new ThreadLocal<>();

  /** A timeline for a policy with the default backoff (base delay 200 ms). */
  Timeline() {
    this(Duration.ofMillis(200));
  }

  /** A timeline for a policy with {@code baseDelay} and the other backoff defaults. */
  Timeline(Duration baseDelay) {
    this.baseDelayMillis = baseDelay.toMillis();
  }

  /** An application interceptor, added after the retry interceptor, that sees every attempt. */
  Interceptor attempts() {
    return chain -> {
      retryAfter.remove();
      Response response = chain.proceed(chain.request());
      retryAfter.set(response.header("Retry-After"));
      return response;
    };
  }

  /** Starts the clock again, for the next call of an example that makes several. */
  void restart(String title) {
    startNanos = System.nanoTime();
    System.out.println("--- " + title);
  }

  long elapsedMillis() {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  void print(String what) {
    System.out.println(String.format("[+%5d ms] ", elapsedMillis()) + what);
  }

  @Override
  public void onAttemptStarted(Request request, int attempt) {
    retryAfter.remove();
    String key = request.header("Idempotency-Key");
    print(
        String.format(
            "attempt %d: %s %s%s",
            attempt,
            request.method(),
            request.url().encodedPath(),
            key == null ? "" : " (Idempotency-Key " + abbreviate(key) + ")"));
  }

  @Override
  public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
    print(
        String.format(
            "attempt %d failed: %s -> waiting %d ms: %s",
            attempt, reason, delayNanos / 1_000_000, why(attempt)));
  }

  @Override
  public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
    print(String.format("gave up after %d attempt(s): %s (%s)", attempts, reason, lastFailure));
  }

  @Override
  public void onSucceeded(Request request, Response response, int attempts) {
    print(String.format("done after %d attempt(s): HTTP %d", attempts, response.code()));
  }

  /** Why the wait before retry {@code n} (which follows attempt {@code n}) came out as it did. */
  private String why(int n) {
    String serverSaid = retryAfter.get();
    if (serverSaid != null) {
      return "the server's Retry-After: "
          + serverSaid
          + " replaces the backoff"
          + " (which would have been at most "
          + capMillis(n)
          + " ms)";
    }
    return "Full Jitter: uniform in [0, " + capMillis(n) + "] ms";
  }

  /** min(baseDelay x multiplier^(n-1), maxDelay), as the interceptor computes it. */
  private long capMillis(int n) {
    return (long) Math.min(baseDelayMillis * Math.pow(MULTIPLIER, n - 1), MAX_DELAY_MILLIS);
  }

  static String abbreviate(String key) {
    return key.length() <= 12 ? key : key.substring(0, 8) + "…";
  }
}
