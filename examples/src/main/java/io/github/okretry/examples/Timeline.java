package io.github.okretry.examples;

import io.github.okretry.GiveUpReason;
import io.github.okretry.Jitter;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import io.github.okretry.RetryListener;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Prints what the interceptor does, attempt by attempt, with the time since the call began, and
 * why each wait is as long as it is.
 *
 * <p>To explain waits it needs two things the listener events do not carry: the interceptor's
 * backoff settings ({@link #explain}) and each attempt's {@code Retry-After}, which {@link
 * #attempts()} records when added <em>after</em> the retry interceptor, where it sees every
 * attempt:
 *
 * <pre>{@code
 * Timeline timeline = new Timeline();
 * RetryInterceptor retry = timeline.explain(RetryInterceptor.create(RetryPolicy.builder().listener(timeline).build()));
 * OkHttpClient client = new OkHttpClient.Builder()
 *     .addInterceptor(retry)
 *     .addInterceptor(timeline.attempts())
 *     .build();
 * }</pre>
 */
final class Timeline implements RetryListener {
  private volatile long startNanos = System.nanoTime();
  private volatile RetryInterceptor retry;
  /** The Retry-After of the attempt that just failed on this thread, or null. */
  private final ThreadLocal<String> retryAfter = new ThreadLocal<>();

  /** Remembers {@code retry}'s backoff settings to explain computed waits; returns it. */
  RetryInterceptor explain(RetryInterceptor retry) {
    this.retry = retry;
    return retry;
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
    print(String.format("attempt %d: %s %s%s", attempt, request.method(), request.url().encodedPath(),
        key == null ? "" : " (Idempotency-Key " + abbreviate(key) + ")"));
  }

  @Override
  public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
    print(String.format("attempt %d failed: %s -> waiting %d ms: %s",
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
    RetryPolicy r = retry == null ? null : retry.policy();
    if (serverSaid != null) {
      return "the server's Retry-After: " + serverSaid + " replaces the backoff"
          + (r == null ? "" : " (which would have been at most " + capMillis(r, n) + " ms)");
    }
    if (r == null) return "computed backoff";
    long cap = capMillis(r, n);
    Jitter jitter = r.jitter();
    return switch (jitter) {
      case NONE -> "backoff without jitter: cap(" + n + ") = " + cap + " ms";
      case FULL -> "Full Jitter: uniform in [0, " + cap + "] ms";
      case EQUAL -> "Equal Jitter: uniform in [" + (cap - cap / 2) + ", " + cap + "] ms";
      case DECORRELATED -> "Decorrelated Jitter: uniform in [" + r.baseDelayNanos() / 1_000_000
          + " ms, 3 x previous wait], at most " + r.maxDelayNanos() / 1_000_000 + " ms";
    };
  }

  /** min(baseDelay x multiplier^(n-1), maxDelay), as the interceptor computes it. */
  static long capMillis(RetryPolicy r, int n) {
    double cap = r.baseDelayNanos() / 1e6 * Math.pow(r.multiplier(), n - 1);
    return (long) Math.min(cap, r.maxDelayNanos() / 1_000_000);
  }

  static String abbreviate(String key) {
    return key.length() <= 12 ? key : key.substring(0, 8) + "…";
  }
}
