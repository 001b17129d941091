package io.github.okretry.internal;

import okhttp3.Call;
import okhttp3.EventListener;

/**
 * Watches the network requests of one call's current attempt: whether it began writing its
 * request (so a failure on a request that must not be repeated is retried exactly when the
 * server cannot have seen it), and how many requests OkHttp sent for it (more than one when
 * OkHttp retried by itself or followed a redirect or auth challenge underneath okretry).
 *
 * <p>Attached only when needed (a non-idempotent request without a key, or a listener that wants
 * network requests), so the common path pays nothing. Internal API: not covered by compatibility
 * guarantees.
 */
public class SendTracker extends EventListener {

  private volatile int requestsThisAttempt;

  protected SendTracker() {}

  /** Adds a tracker to {@code call}'s event listeners and returns it. */
  public static SendTracker attach(Call call) {
    SendTracker tracker = new SendTracker();
    call.addEventListener(tracker);
    return tracker;
  }

  /** Forgets the previous attempt; call before each attempt. */
  public void reset() {
    requestsThisAttempt = 0;
  }

  /** True once the current attempt started writing request headers. */
  public boolean requestStarted() {
    return requestsThisAttempt > 0;
  }

  /** Network requests sent in the current attempt so far. */
  public int requestsThisAttempt() {
    return requestsThisAttempt;
  }

  @Override
  public void requestHeadersStart(Call call) {
    int n = ++requestsThisAttempt; // events of one call arrive on one thread at a time
    onNetworkRequest(n);
  }

  /** Called for each network request of the attempt, 1 for the first. */
  protected void onNetworkRequest(int requestInAttempt) {}
}
