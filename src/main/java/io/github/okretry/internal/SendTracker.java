package io.github.okretry.internal;

import okhttp3.Call;
import okhttp3.EventListener;

/**
 * Records whether the current attempt began writing its request, so a failure on a request that
 * must not be repeated can be retried exactly when the server cannot have seen it (a refused
 * connection, or a stale pooled connection that broke before the first byte).
 *
 * <p>Attached only to non-idempotent requests without an idempotency key, so the common path pays
 * nothing for it. Internal API: not covered by compatibility guarantees.
 */
public final class SendTracker extends EventListener {

  private volatile boolean requestStarted;

  private SendTracker() {}

  /** Adds a tracker to {@code call}'s event listeners and returns it. */
  public static SendTracker attach(Call call) {
    SendTracker tracker = new SendTracker();
    call.addEventListener(tracker);
    return tracker;
  }

  /** Forgets the previous attempt; call before each attempt. */
  public void reset() {
    requestStarted = false;
  }

  /** True once the current attempt started writing request headers. */
  public boolean requestStarted() {
    return requestStarted;
  }

  @Override
  public void requestHeadersStart(Call call) {
    requestStarted = true;
  }
}
