package io.github.okretry;

import io.github.okretry.internal.CallDeadline;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * What okretry sets on the chain of each attempt, in one place for both drivers: timeouts shrunk to
 * the time left, OkHttp's own retries off for a request that must not be repeated, and the route
 * away from a failed shared connection ({@link ConnectionCheck}). {@link RetryInterceptor} applies
 * it to its chain directly; {@link RetryingCallFactory} makes each attempt a separate OkHttp call,
 * so the attempt travels on that call as a tag ({@link Attempt.OnCall}) and this interceptor, on
 * the factory's attempt client, applies its settings.
 *
 * <p>First among the attempt client's interceptors, it runs when OkHttp's dispatcher runs the
 * attempt's call: the moment a hedge leaves the queue. A hedge that must not go by then (its round
 * is over, or the budget does not pay) fails here, before anything is sent.
 */
final class AttemptSettings implements Interceptor {

  private final TimeSource time;

  AttemptSettings(TimeSource time) {
    this.time = time;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Attempt attempt = Attempt.ofCall(chain.call());
    if (attempt == null) return chain.proceed(chain.request());
    // Checked once the call left the dispatcher: a hedge that waited behind the attempts it
    // hedges is paid for and reported only if it goes (Hedging). Its failure is dropped unseen.
    if (attempt.hedge && (chain.call().isCanceled() || !attempt.departs())) {
      throw new IOException("okretry: hedge not sent");
    }
    Response response = apply(chain, attempt, time).proceed(chain.request());
    Attempt.Departure driver = attempt.departure;
    if (driver != null
        && ConnectionCheck.mustDecideInChain(attempt.policy(), attempt.tracker(), response)) {
      driver.answeredInChain(response); // while this call still holds the connection
    }
    return response;
  }

  /** {@code chain} set up for {@code attempt}; its deadline is on {@code time}'s clock. */
  static Chain apply(Chain chain, Attempt attempt, TimeSource time) {
    // OkHttp would silently resend an unsafe request if a pooled connection dropped after it was
    // written; only okretry, which knows it is unsafe, may decide about repeats.
    Chain set =
        attempt.mustNotRepeatUnderneath() ? chain.withRetryOnConnectionFailure(false) : chain;
    set = ConnectionCheck.route(set, attempt.policy(), attempt.url());
    long deadlineNanos = attempt.deadlineNanos();
    if (deadlineNanos == CallDeadline.NO_DEADLINE) return set;
    return withTimeoutsWithin(set, deadlineNanos - time.nanoTime());
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
    if (shrink(read, left) != read) {
      shrunk = shrunk.withReadTimeout(shrink(read, left), TimeUnit.MILLISECONDS);
    }
    if (shrink(write, left) != write) {
      shrunk = shrunk.withWriteTimeout(shrink(write, left), TimeUnit.MILLISECONDS);
    }
    return shrunk;
  }

  static int shrink(int configuredMillis, int leftMillis) {
    return configuredMillis == 0 ? leftMillis : Math.min(configuredMillis, leftMillis);
  }
}
