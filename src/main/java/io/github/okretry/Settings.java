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
 * the policy immutable). Declared once here, so a new setting is one field and one setter in
 * {@link RetryPolicy.Builder} (and a term of {@link RetryPolicy#toString()}).
 */
final class Settings {
  int maxRetries = 3;
  long baseDelayNanos = TimeUnit.MILLISECONDS.toNanos(200);
  long maxDelayNanos = TimeUnit.SECONDS.toNanos(10);
  double multiplier = 2.0;
  Jitter jitter = Jitter.FULL;
  long deadlineNanos; // 0: none
  long maxRetryAfterNanos = TimeUnit.SECONDS.toNanos(60);
  double retryAfterSpread = 0.5;
  final Set<Integer> retryStatuses = new TreeSet<>(Arrays.asList(429, 503));
  @Nullable RetryPredicate<Response> responsePredicate;
  @Nullable RetryPredicate<IOException> exceptionPredicate;
  String idempotencyKeyHeader = "Idempotency-Key";
  boolean quoteIdempotencyKey;
  boolean generateIdempotencyKeys = true;
  RetryListener listener = RetryListener.NONE;
  @Nullable RetryBudget budget; // null until build(): then a fresh default budget
  boolean originWideRetryAfter;
  QuotaPacing quotaPacing = QuotaPacing.PUBLISHED;

  // Test seams, set through RetryPolicy.Builder's package-private methods.
  TimeSource time = TimeSource.SYSTEM;
  WallClock clock = WallClock.SYSTEM;
  RandomSource random = RandomSource.THREAD_LOCAL;
  KeyGenerator keyGenerator = KeyGenerator.RANDOM_UUID;

  Settings() {}

  Settings(Settings other) {
    maxRetries = other.maxRetries;
    baseDelayNanos = other.baseDelayNanos;
    maxDelayNanos = other.maxDelayNanos;
    multiplier = other.multiplier;
    jitter = other.jitter;
    deadlineNanos = other.deadlineNanos;
    maxRetryAfterNanos = other.maxRetryAfterNanos;
    retryAfterSpread = other.retryAfterSpread;
    retryStatuses.clear();
    retryStatuses.addAll(other.retryStatuses);
    responsePredicate = other.responsePredicate;
    exceptionPredicate = other.exceptionPredicate;
    idempotencyKeyHeader = other.idempotencyKeyHeader;
    quoteIdempotencyKey = other.quoteIdempotencyKey;
    generateIdempotencyKeys = other.generateIdempotencyKeys;
    listener = other.listener;
    budget = other.budget; // shared, not copied: policies built from one builder given a budget share it
    originWideRetryAfter = other.originWideRetryAfter;
    quotaPacing = other.quotaPacing;
    time = other.time;
    clock = other.clock;
    random = other.random;
    keyGenerator = other.keyGenerator;
  }
}
