package io.github.okretry;

/**
 * A test on an attempt's response or exception that says "retry this too", for {@link
 * RetryPolicy.Builder#retryOnResponse} and {@link RetryPolicy.Builder#retryOnException}. A lambda
 * fits: {@code response -> response.code() == 500}. okretry's own interface because {@code
 * java.util.function.Predicate} is missing on Android API 21 to 23.
 *
 * <p>It runs on the thread that ends the attempt and must be quick and thread-safe. If it throws,
 * the call ends with an {@link java.io.IOException} whose cause is the thrown exception (a response
 * it was given is closed first).
 *
 * @param <T> what is tested: {@link okhttp3.Response} or {@link java.io.IOException}
 */
public interface RetryPredicate<T> {

  /**
   * True if {@code value} should be retried (when repeating the request is safe).
   *
   * @param value the attempt's response or exception
   * @return true to retry
   */
  boolean test(T value);
}
