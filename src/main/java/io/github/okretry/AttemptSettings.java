package io.github.okretry;

import io.github.okretry.internal.RetryPolicy;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * Applies to one attempt of an asynchronous logical call what {@link RetryInterceptor} applies to
 * its chain directly: timeouts shrunk to the time left, and OkHttp's own retries off for a request
 * that must not be repeated. The settings travel on the attempt's request as a tag, because the
 * attempt is a separate OkHttp call.
 */
final class AttemptSettings implements Interceptor {

  /** One attempt's settings; {@code deadlineNanos} is on the {@link TimeSource}'s clock. */
  record Tag(long deadlineNanos, boolean mustNotRepeatUnderneath) {}

  private final TimeSource time;

  AttemptSettings(TimeSource time) {
    this.time = time;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Tag tag = chain.request().tag(Tag.class);
    if (tag == null) return chain.proceed(chain.request());
    Chain attempt = chain;
    if (tag.mustNotRepeatUnderneath()) attempt = attempt.withRetryOnConnectionFailure(false);
    if (tag.deadlineNanos() != RetryPolicy.NO_DEADLINE) {
      attempt = RetryInterceptor.withTimeoutsWithin(attempt, tag.deadlineNanos() - time.nanoTime());
    }
    return attempt.proceed(chain.request());
  }
}
