package io.github.okretry;

import io.github.okretry.internal.SendTracker;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import okhttp3.Connection;
import okhttp3.Dns;
import okhttp3.HttpUrl;
import okhttp3.Interceptor.Chain;
import okhttp3.Protocol;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Okio;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a retry goes: never back over the connection that failed it ({@link
 * RetryPolicy.Builder#avoidFailedConnections}). Behind an L4 balancer a connection is balanced, not
 * the requests on it, so a sick replica keeps every call that pooled its connection; a new
 * connection is balanced afresh. Both drivers call it inside the attempt's chain, where the
 * attempt's OkHttp call still holds its connection: {@link #route} before an attempt, {@link
 * #after} once it ended.
 *
 * <p>A connection failed when it answered a 5xx the policy retries without saying when to come back
 * (a {@code Retry-After} paces the client; the replica is not sick), or, shared, when a request on
 * it timed out. OkHttp already stops using a connection that failed with any other I/O error (a
 * reset, a GOAWAY, a second refused stream). An HTTP/1 connection carries one call, the failing
 * one: it is closed when that call is done with the response. A shared (HTTP/2) connection carries
 * other calls, so it is left to finish them and idle out of the pool, and the policy's later
 * requests to the origin open a new one ({@code FreshRoutes}), which puts the address that failed
 * after the others the name resolves to.
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
   * The attempt that {@code tracker} watched on {@code chain} (before {@link #route}) ended with
   * {@code response}: if that says its connection failed, takes the connection out of the policy's
   * use. Returns the response to go on with: the same, or one whose closing closes its connection.
   */
  static Response afterResponse(
      RetryPolicy policy,
      @Nullable SendTracker tracker,
      Chain chain,
      HttpUrl url,
      Response response) {
    Connection c = failedConnection(policy, tracker);
    if (c == null || !failed(policy, response)) return response;
    if (!isShared(c)) return closingConnection(response, c.socket());
    moveFrom(policy, c, chain, url);
    return response;
  }

  /**
   * The attempt that {@code tracker} watched on {@code chain} failed with {@code error}: a shared
   * connection on which a request timed out (a slow replica) is taken out of the policy's use.
   * OkHttp itself drops an HTTP/1 connection after any I/O failure.
   */
  static void afterFailure(
      RetryPolicy policy,
      @Nullable SendTracker tracker,
      Chain chain,
      HttpUrl url,
      Throwable error) {
    if (!(error instanceof SocketTimeoutException) || chain.call().isCanceled()) return;
    Connection c = failedConnection(policy, tracker);
    if (c != null && isShared(c)) moveFrom(policy, c, chain, url);
  }

  /** The connection the attempt used, if the policy avoids failed ones; else null. */
  private static @Nullable Connection failedConnection(
      RetryPolicy policy, @Nullable SendTracker tracker) {
    if (!policy.settings.avoidFailedConnections || tracker == null) return null;
    return tracker.connection(); // null if none acquired: a cache hit, a failure to connect
  }

  private static boolean isShared(Connection c) {
    return c.protocol() != Protocol.HTTP_1_1 && c.protocol() != Protocol.HTTP_1_0;
  }

  /** True if {@code response} says its connection's replica failed the request. */
  static boolean failed(RetryPolicy policy, Response response) {
    return response.code() >= 500
        && policy.classifier.isRetryableStatus(response.code())
        && response.header("Retry-After") == null
        && response.header("retry-after-ms") == null;
  }

  private static void moveFrom(RetryPolicy policy, Connection c, Chain chain, HttpUrl url) {
    InetSocketAddress to = c.route().socketAddress();
    InetAddress address = to.isUnresolved() ? null : to.getAddress();
    policy.routes.failedOn(url, c.route().address().dns(), chain.getDns(), address);
    log.debug("okretry: {} failed on a shared connection to {}; new route", url.redact(), to);
  }

  /**
   * {@code response}, whose HTTP/1 connection is closed once the response is: before its body is
   * closed unread (the connection is still the call's alone then), or now if there is no body
   * (OkHttp gives the connection back to its pool as soon as the call that holds it ends). A body
   * read to its end gave the connection back whole; the next failure on it closes it.
   */
  private static Response closingConnection(Response response, Socket socket) {
    ResponseBody body = response.body();
    // No body to read: the connection goes back to the pool when the attempt's call ends
    if (body.contentLength() == 0 || response.request().method().equals("HEAD")) {
      closeQuietly(socket);
      return response;
    }
    BufferedSource closing =
        Okio.buffer(
            new ForwardingSource(body.source()) {
              private boolean exhausted;

              @Override
              public long read(Buffer sink, long byteCount) throws IOException {
                long n = super.read(sink, byteCount);
                if (n == -1) exhausted = true; // read whole: the connection went back whole
                return n;
              }

              @Override
              public void close() throws IOException {
                if (!exhausted) closeQuietly(socket);
                super.close();
              }
            });
    return response
        .newBuilder()
        .body(ResponseBody.create(closing, body.contentType(), body.contentLength()))
        .build();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException | RuntimeException ignored) {
      // closed already, or closing failed: either way OkHttp will not reuse it
    }
  }
}
