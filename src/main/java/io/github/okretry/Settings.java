package io.github.okretry;

import io.github.okretry.internal.KeyGenerator;
import io.github.okretry.internal.RandomSource;
import io.github.okretry.internal.TimeSource;
import io.github.okretry.internal.WallClock;
import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Every setting of a {@link RetryPolicy} as a plain field with its default: the builder's working
 * copy, and the private snapshot each policy keeps (nobody changes a snapshot, which is what makes
 * the policy immutable). Declared once here, so a new setting is one field and one setter in {@link
 * RetryPolicy.Builder} (and a term of {@link RetryPolicy#toString()}); {@link #copy} copies every
 * field.
 */
final class Settings implements Cloneable {
  int maxRetries = 3;
  long baseDelayNanos = TimeUnit.MILLISECONDS.toNanos(200);
  long maxDelayNanos = TimeUnit.SECONDS.toNanos(10);
  double multiplier = 2.0;
  Jitter jitter = Jitter.FULL;
  long deadlineNanos; // 0: none
  long maxRetryAfterNanos = TimeUnit.SECONDS.toNanos(60);
  double retryAfterSpread = 0.5;
  Set<Integer> retryStatuses = new TreeSet<>(Arrays.asList(429, 503));
  @Nullable RetryPredicate<Response> responsePredicate;
  @Nullable RetryPredicate<IOException> exceptionPredicate;
  String idempotencyKeyHeader = "Idempotency-Key";
  boolean quoteIdempotencyKey;
  boolean generateIdempotencyKeys = true;
  @Nullable String attemptHeader; // null: the attempt number is not sent
  boolean obeyShouldRetryHeader = true;
  boolean avoidFailedConnections = true;
  RetryListener listener = RetryListener.NONE;
  @Nullable RetryBudget budget; // null: each policy built makes a fresh default budget
  boolean originWideRetryAfter;
  QuotaPacing quotaPacing = QuotaPacing.PUBLISHED;
  long replayPerCallBytes = 1L << 20; // 0: one-shot bodies are not kept, never repeated
  long replayPerClientBytes = 16L << 20;

  // Test seams, set through RetryPolicy.Builder's package-private methods.
  TimeSource time = TimeSource.SYSTEM;
  WallClock clock = WallClock.SYSTEM;
  RandomSource random = RandomSource.THREAD_LOCAL;
  KeyGenerator keyGenerator = KeyGenerator.RANDOM_UUID;

  /** A copy, its own set of statuses; the budget and the seams are shared, not copied. */
  Settings copy() {
    try {
      Settings copy = (Settings) clone();
      copy.retryStatuses = new TreeSet<>(retryStatuses);
      return copy;
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e);
    }
  }
}
