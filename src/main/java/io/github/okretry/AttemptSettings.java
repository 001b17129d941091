package io.github.okretry;

import io.github.okretry.internal.RetryRules;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * What okretry sets on the chain of each attempt, in one place for both drivers: timeouts shrunk
 * to the time left, and OkHttp's own retries off for a request that must not be repeated. {@link
 * RetryInterceptor} applies it to its chain directly; {@link RetryingCallFactory} makes each
 * attempt a separate OkHttp call, so the settings travel on the attempt's request as a {@link
 * Tag} and this interceptor, on the factory's attempt client, applies them.
 */
final class AttemptSettings implements Interceptor {

  /** One attempt's settings; {@code deadlineNanos} is on the {@link TimeSource}'s clock. */
  static final class Tag {
    final long deadlineNanos;
    final boolean mustNotRepeatUnderneath;

    Tag(long deadlineNanos, boolean mustNotRepeatUnderneath) {
      this.deadlineNanos = deadlineNanos;
      this.mustNotRepeatUnderneath = mustNotRepeatUnderneath;
    }
  }

  private final TimeSource time;

  AttemptSettings(TimeSource time) {
    this.time = time;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Tag tag = chain.request().tag(Tag.class);
    if (tag == null) return chain.proceed(chain.request());
    return apply(chain, tag.deadlineNanos, tag.mustNotRepeatUnderneath, time).proceed(chain.request());
  }

  /**
   * {@code chain} set up for one attempt of a call that ends at {@code deadlineNanos} (or {@link
   * RetryRules#NO_DEADLINE}) on {@code time}'s clock.
   */
  static Chain apply(Chain chain, long deadlineNanos, boolean mustNotRepeatUnderneath, TimeSource time) {
    // OkHttp would silently resend an unsafe request if a pooled connection dropped after it was
    // written; only okretry, which knows it is unsafe, may decide about repeats.
    Chain attempt = mustNotRepeatUnderneath ? chain.withRetryOnConnectionFailure(false) : chain;
    if (deadlineNanos == RetryRules.NO_DEADLINE) return attempt;
    return withTimeoutsWithin(attempt, deadlineNanos - time.nanoTime());
  }

  /**
   * Shrinks each of the attempt's timeouts to the time left. OkHttp's 0 means "no timeout", so it
   * becomes the time left rather than staying unbounded; nothing goes below OkHttp's 1 ms.
   */
  static Chain withTimeoutsWithin(Chain chain, long remainingNanos) {
    long millis = Math.max(1, (remainingNanos + 999_999) / 1_000_000);
    int left = (int) Math.min(Integer.MAX_VALUE, millis);
    // Each with…() copies the chain, so only change what the deadline actually shortens.
    int connect = chain.connectTimeoutMillis();
    int read = chain.readTimeoutMillis();
    int write = chain.writeTimeoutMillis();
    Chain shrunk = chain;
    if (shrink(connect, left) != connect) {
      shrunk = shrunk.withConnectTimeout(shrink(connect, left), TimeUnit.MILLISECONDS);
    }
    if (shrink(read, left) != read) shrunk = shrunk.withReadTimeout(shrink(read, left), TimeUnit.MILLISECONDS);
    if (shrink(write, left) != write) shrunk = shrunk.withWriteTimeout(shrink(write, left), TimeUnit.MILLISECONDS);
    return shrunk;
  }

  static int shrink(int configuredMillis, int leftMillis) {
    return configuredMillis == 0 ? leftMillis : Math.min(configuredMillis, leftMillis);
  }
}
