package io.github.okretry.internal;

import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.EventListener;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;

/**
 * Watches the network requests of one call's current attempt: whether it completely wrote the
 * request headers of one (so a failure on a request that must not be repeated is retried exactly
 * when the server cannot have seen it), and how many requests OkHttp sent for it (more than one
 * when OkHttp retried by itself or followed a redirect or auth challenge underneath okretry).
 *
 * <p>A request counts as sent at {@code requestHeadersEnd}, not {@code requestHeadersStart}: a
 * server cannot act on a request whose headers it never received whole. OkHttp 5 reports {@code
 * requestHeadersStart}, hands the headers to the connection, and reports {@code requestHeadersEnd}
 * only if that returned; on HTTP/2 the stream is opened in between, so a connection already shut
 * down by a GOAWAY ({@code ConnectionShutdownException}) fails after the start and before the end,
 * with nothing sent. A TLS handshake the server closed or reset fails earlier still, while
 * connecting: nothing sent either. A failure after the end proves nothing either way.
 *
 * <p>Attached to every attempt, so that a call's outcome counts OkHttp's silent resends (24 bytes a
 * call; one listener on a client without an {@code EventListener}, as OkHttp adds a lone listener
 * without wrapping it).
 */
public final class SendTracker extends EventListener {

  /** Hears each network request of the attempt once its headers are written. */
  public interface OnNetworkRequest {
    /** Called with 1 for the attempt's first network request, 2 for the next, and so on. */
    void onNetworkRequest(int requestInAttempt);
  }

  /** {@link #requestsThisAttempt}'s value once stopped: the call's later requests are not ours. */
  private static final int STOPPED = -1;

  private final @Nullable OnNetworkRequest onNetworkRequest;
  // STOPPED once its call went on to requests of another logical call: one field, not a flag
  // beside it, so that the tracker stays 24 bytes with the connection it remembers
  private volatile int requestsThisAttempt;
  private volatile @Nullable Connection connection; // the attempt's last, for ConnectionCheck

  private SendTracker(@Nullable OnNetworkRequest onNetworkRequest) {
    this.onNetworkRequest = onNetworkRequest;
  }

  /**
   * Adds a tracker to {@code call}'s event listeners and returns it.
   *
   * @param onNetworkRequest told of each network request, or null
   */
  public static SendTracker attach(Call call, @Nullable OnNetworkRequest onNetworkRequest) {
    SendTracker tracker = new SendTracker(onNetworkRequest);
    call.addEventListener(tracker);
    return tracker;
  }

  /**
   * Hears no more of its call: OkHttp keeps an event listener for the call's life, and a later pass
   * through okretry on the same call (an interceptor above it that proceeds again) is a logical
   * call of its own, whose requests are not this one's.
   */
  public void stop() {
    requestsThisAttempt = STOPPED;
    connection = null;
  }

  /** Forgets the previous attempt; call before each attempt. */
  public void reset() {
    // The connection stays: OkHttp reuses a call's own connection for its next request without
    // reporting it acquired again (the interceptor's attempts are requests of one call)
    if (requestsThisAttempt != STOPPED) requestsThisAttempt = 0;
  }

  /**
   * Network requests whose headers the current attempt completely wrote so far: only those can the
   * server have processed.
   */
  public int requestsThisAttempt() {
    return Math.max(0, requestsThisAttempt);
  }

  /**
   * The connection the attempt's call last acquired (after a redirect, the one its last response
   * came on), kept across {@link #reset}: OkHttp reuses a call's own connection for its next
   * request without reporting it acquired again. Null if it acquired none (a cache hit, a failure
   * while connecting) or once forgotten.
   */
  public @Nullable Connection connection() {
    return connection;
  }

  @Override
  public void connectionAcquired(Call call, Connection connection) {
    if (requestsThisAttempt != STOPPED) this.connection = connection;
  }

  /**
   * Forgets the connection: its driver decided what the attempt's outcome means for it, and the
   * call, which may outlive it (the caller's), no longer pins it.
   */
  public void forgetConnection() {
    connection = null;
  }

  @Override
  @SuppressWarnings("NonAtomicVolatileUpdate") // one writer: the call's events come one at a time
  public void requestHeadersEnd(Call call, Request request) {
    if (requestsThisAttempt == STOPPED) return;
    int n = ++requestsThisAttempt; // events of one call arrive on one thread at a time
    OnNetworkRequest listener = onNetworkRequest;
    if (listener != null) listener.onNetworkRequest(n);
  }
}
