package io.github.okretry;

import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.SendTracker;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.Socket;
import java.net.SocketTimeoutException;
import okhttp3.Connection;
import okhttp3.Dns;
import okhttp3.HttpUrl;
import okhttp3.Interceptor.Chain;
import okhttp3.Protocol;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a retry goes: never back over the connection that failed it ({@link
 * RetryPolicy.Builder#avoidFailedConnections}). Behind an L4 balancer a connection is balanced, not
 * the requests on it, so a sick replica keeps every call that pooled its connection; a new
 * connection is balanced afresh. {@link #route} sets up each attempt's chain; {@link #retrying}
 * acts once a call decided to retry, in the attempt's chain, where the attempt's OkHttp call still
 * holds its connection (the factory decides there when {@link #mustDecideInChain} says so).
 *
 * <p>A connection failed when it answered a 5xx the policy retries without saying when to come back
 * (a {@code Retry-After} paces the client; the replica is not sick), or, shared, when a request on
 * it timed out. OkHttp already stops using a connection that failed with any other I/O error (a
 * reset, a GOAWAY, a second refused stream). An HTTP/1 connection carries one call, the failing
 * one: it is closed. A shared (HTTP/2) connection carries other calls, so it is left to finish them
 * and idle out of the pool, and the policy's later requests to the origin open a new one ({@code
 * FreshRoutes}), which puts the address that failed after the others the name resolves to; an
 * HTTP/1 origin whose name has other addresses moves too. Only a retry leaves a connection, so a
 * dead origin, whose retries the budget bounds, is not also handed a handshake per call.
 */
final class ConnectionCheck {

  private static final Logger log = LoggerFactory.getLogger(RetryInterceptor.class);

  private ConnectionCheck() {}

  /** {@code chain}, routed away from {@code url}'s failed shared connection if it has one. */
  static Chain route(Chain chain, RetryPolicy policy, HttpUrl url) {
    if (!policy.settings.avoidFailedConnections) return chain;
    Dns moved = policy.routes.route(url, chain.getDns());
    return moved != null ? chain.withDns(moved) : chain;
  }

  /**
   * The call decided to retry the attempt that {@code tracker} watched, which ended with {@code
   * response}, else {@code error}: if its connection failed, takes the connection out of the
   * policy's use, before the response is closed. A driver calls this while the attempt's OkHttp
   * call still holds its connection ({@link #mustDecideInChain}).
   *
   * @param clientDns the Dns of the client's own connections (the chain's before {@link #route})
   */
  static void retrying(
      RetryPolicy policy,
      @Nullable SendTracker tracker,
      Dns clientDns,
      HttpUrl url,
      @Nullable Response response,
      @Nullable Throwable error) {
    Connection c = usedConnection(policy, tracker);
    if (c == null) return;
    if (response != null ? !failed(policy, response) : !timedOutShared(c, error)) return;
    InetSocketAddress to = c.route().socketAddress();
    InetAddress address = to.isUnresolved() ? null : to.getAddress();
    boolean shared = isShared(c);
    if (!shared) closeQuietly(c.socket()); // the retrying call's alone: OkHttp pools it no more
    // A shared connection carries other calls: the policy's next requests to the origin go over a
    // new one. So do an HTTP/1 origin's where its name has other addresses, so that new
    // connections prefer them (OkHttp's own order would reach the failed address first again).
    if (shared
        || (address != null
            && c.route().proxy().type() == Proxy.Type.DIRECT
            && hasOtherAddresses(clientDns, url.host(), address))) {
      policy.routes.failedOn(url, c.route().address().dns(), clientDns, address);
      log.debug("{} failed on a connection to {}: new connections for it", url.redact(), to);
    }
  }

  /**
   * True if {@code host} resolves, by the client's {@code dns}, to an address besides {@code
   * failed}. Asked only when a call retries, of a name just resolved (the JVM's resolver caches
   * it).
   */
  private static boolean hasOtherAddresses(Dns dns, String host, InetAddress failed) {
    try {
      for (InetAddress a : dns.lookup(host)) {
        if (!a.equals(failed)) return true;
      }
      return false;
    } catch (IOException | RuntimeException e) {
      return false; // no answer now: the connection is left all the same
    }
  }

  /**
   * True if the driver must decide about {@code response} before the attempt's OkHttp call ends: it
   * may close the response's HTTP/1 connection ({@link #retrying}), which OkHttp gives back to its
   * pool, for any call to take, once the call that holds it ends with no body left to read.
   */
  static boolean mustDecideInChain(
      RetryPolicy policy, @Nullable SendTracker tracker, Response response) {
    if (!failed(policy, response)) return false; // a success asks nothing more
    Connection c = usedConnection(policy, tracker);
    return c != null && !isShared(c);
  }

  /** A request on a shared connection timed out: a slow replica, as OkHttp keeps the connection. */
  private static boolean timedOutShared(Connection c, @Nullable Throwable error) {
    return isShared(c) && error instanceof SocketTimeoutException;
  }

  /** The connection the attempt used, if the policy avoids failed ones; else null. */
  private static @Nullable Connection usedConnection(
      RetryPolicy policy, @Nullable SendTracker tracker) {
    if (!policy.settings.avoidFailedConnections || tracker == null) return null;
    return tracker.connection(); // null if none acquired: a cache hit, a failure to connect
  }

  private static boolean isShared(Connection c) {
    return c.protocol() != Protocol.HTTP_1_1 && c.protocol() != Protocol.HTTP_1_0;
  }

  /**
   * True if {@code response}, a failure its call retries, says its connection's replica failed the
   * request: a 5xx that names no wait ({@code Retry-After} and its millisecond forms: a server that
   * says when to come back paces the client, its replica is not sick).
   */
  static boolean failed(RetryPolicy policy, Response response) {
    return response.code() >= 500
        && RetryAfter.delayNanos(response, policy.clock) == RetryAfter.ABSENT;
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException | RuntimeException ignored) {
      // closed already, or closing failed: either way OkHttp will not reuse it
    }
  }
}
