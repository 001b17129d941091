package io.github.okretry;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.UnknownServiceException;
import java.security.GeneralSecurityException;
import java.util.Locale;
import java.util.Set;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import okhttp3.Headers;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Decides which outcomes of an attempt are transient failures worth another attempt, and which
 * failures prove the server never processed the request.
 *
 * <p>Retryable by default: timeouts, connection failures (refused, reset, no route, unknown host,
 * unexpected end of stream, an HTTP/2 stream reset or shutdown), a TLS failure that only reports
 * such a broken connection, and the configured status codes (429 and 503 unless extended). Never
 * retried by default: {@link ProtocolException}, {@link UnknownServiceException} (e.g. cleartext
 * not permitted), a TLS problem that will not heal, and any other exception, unless the configured
 * predicate accepts it. Interruption and cancellation are handled before this class is asked. How
 * TLS failures are told apart: {@link #tlsVerdict}.
 *
 * <p>Compared with OkHttp's {@code RetryAndFollowUpInterceptor.isRecoverable}, which refuses only
 * an {@code SSLHandshakeException} directly caused by a {@code CertificateException} and an {@code
 * SSLPeerUnverifiedException} and recovers from every other TLS failure: OkHttp tries another route
 * or connection spec at once, so an unknown TLS failure costs it nothing; okretry tries the same
 * origin again after a backoff, so it retries only the TLS failures that show a broken connection
 * and treats the rest (a configuration mismatch, mostly) as permanent rather than add waits before
 * the same failure. It also finds the certificate failure at any depth, since wrappers (and
 * Android's {@code CertPathValidatorException} inside a {@code CertificateException}) add layers.
 * Whether a request with a TLS failure may be repeated is not decided here: a failed handshake is
 * before any request was written, which {@code SendTracker} sees.
 */
final class Classifier {

  private static final int MAX_CAUSE_DEPTH = 8;
  private static final String STREAM_RESET = "okhttp3.internal.http2.StreamResetException";
  private static final String CONNECTION_SHUTDOWN =
      "okhttp3.internal.http2.ConnectionShutdownException";
  private static final String REFUSED_STREAM_MESSAGE = "stream was reset: REFUSED_STREAM";

  /**
   * The count of network requests written for an attempt that nothing watched ({@link
   * #provesNotProcessed(Throwable, int)}): not known.
   */
  static final int UNWATCHED = -1;

  private static final int NOT_TLS = 0;
  private static final int TLS_BROKEN_CONNECTION = 1;
  private static final int TLS_WILL_NOT_HEAL = 2;

  /**
   * Lower-case phrases by which a TLS stack reports, in an {@link SSLException} with no cause, that
   * the connection under it broke: Conscrypt (Android) writes BoringSSL's {@code SSL_ERROR_SYSCALL}
   * as "I/O error during system call" and the socket's error ("Success" for an end of stream); the
   * JDK's own phrases are here for wrappers that drop its cause.
   */
  private static final String[] BROKEN_CONNECTION_PHRASES = {
    "i/o error during system call",
    "connection reset",
    "broken pipe",
    "connection timed out",
    "software caused connection abort",
    "connection closed by peer",
    "remote host terminated the handshake", // JDK 11+, cause EOFException
    "remote host closed connection during handshake", // JDK 8, cause EOFException
  };

  /** The header by which a server says whether to retry (the OpenAI and Anthropic SDKs obey it). */
  static final String SHOULD_RETRY = "X-Should-Retry";

  /** {@link #verdict}: the response ends the call as it is. */
  static final int RETURN = 0;

  /** {@link #verdict}: the response is a retryable failure. */
  static final int RETRY = 1;

  /** {@link #verdict}: it would be retried, but its server said {@code X-Should-Retry: false}. */
  static final int SERVER_SAID_NO = 2;

  private static final int SAYS_NOTHING = 0;
  private static final int SAYS_YES = 1;
  private static final int SAYS_NO = 2;

  private final boolean[] retryableStatus = new boolean[1000];
  private final @Nullable RetryPredicate<Response> responsePredicate;
  private final @Nullable RetryPredicate<IOException> exceptionPredicate;
  private final boolean obeyShouldRetry;

  /** A classifier that obeys {@code X-Should-Retry}, as a policy does by default. */
  Classifier(
      Set<Integer> statuses,
      @Nullable RetryPredicate<Response> responsePredicate,
      @Nullable RetryPredicate<IOException> exceptionPredicate) {
    this(statuses, responsePredicate, exceptionPredicate, true);
  }

  /**
   * @param statuses codes in {@code [100, 999]} whose responses are retried
   * @param responsePredicate extra responses to retry, or null for none
   * @param exceptionPredicate extra exceptions to retry, or null for none
   * @param obeyShouldRetry whether a server's {@code X-Should-Retry} decides ({@link #verdict})
   */
  Classifier(
      Set<Integer> statuses,
      @Nullable RetryPredicate<Response> responsePredicate,
      @Nullable RetryPredicate<IOException> exceptionPredicate,
      boolean obeyShouldRetry) {
    for (int code : statuses) retryableStatus[code] = true;
    this.responsePredicate = responsePredicate;
    this.exceptionPredicate = exceptionPredicate;
    this.obeyShouldRetry = obeyShouldRetry;
  }

  /**
   * True if a response with this status is a retryable failure whatever the predicate says: the
   * common path decides by status alone, without calling user code.
   */
  boolean isRetryableStatus(int code) {
    return code >= 0 && code < retryableStatus.length && retryableStatus[code];
  }

  /**
   * True if {@code response} ends its call by its status alone: not retryable, known without asking
   * user code (no predicate could make it retryable).
   */
  boolean endsByStatus(Response response) {
    return responsePredicate == null
        && !isRetryableStatus(response.code())
        && !(obeyShouldRetry && response.code() >= 400 && serverSays(response) == SAYS_YES);
  }

  /** True if {@code response} is a retryable failure; a throwing predicate throws through. */
  boolean isRetryable(Response response) {
    return verdict(response) == RETRY;
  }

  /**
   * What {@code response} asks of its call: {@link #RETRY}, {@link #RETURN}, or {@link
   * #SERVER_SAID_NO}. The statuses and the predicate decide, then the server's {@code
   * X-Should-Retry} if obeyed: {@code false} stops what they would retry; {@code true} retries an
   * error status (400 and above) they would not. Never a success or a redirect: a response that
   * answers the request is not a failure to repeat, whatever a header claims. Whether repeating is
   * safe, and whether retries, budget and deadline allow it, is decided after, as for any retryable
   * outcome. A throwing predicate throws through.
   */
  int verdict(Response response) {
    boolean retryable =
        isRetryableStatus(response.code())
            || (responsePredicate != null && responsePredicate.test(response));
    if (!obeyShouldRetry) return retryable ? RETRY : RETURN;
    int says = serverSays(response);
    if (retryable) return says == SAYS_NO ? SERVER_SAID_NO : RETRY;
    return says == SAYS_YES && response.code() >= 400 ? RETRY : RETURN;
  }

  /**
   * What {@code response}'s {@code X-Should-Retry} says: one field whose value is {@code true} or
   * {@code false} in any case. A repeated field, a blank or any other value says nothing, as if
   * absent: a hostile or confused server gets no say it did not state plainly. Reads the headers in
   * place, allocating nothing.
   */
  static int serverSays(Response response) {
    Headers headers = response.headers();
    String value = null;
    for (int i = 0, n = headers.size(); i < n; i++) {
      if (!headers.name(i).equalsIgnoreCase(SHOULD_RETRY)) continue;
      if (value != null) return SAYS_NOTHING; // repeated: which one is meant is not known
      value = headers.value(i);
    }
    if (value == null) return SAYS_NOTHING;
    if (value.equalsIgnoreCase("true")) return SAYS_YES;
    return value.equalsIgnoreCase("false") ? SAYS_NO : SAYS_NOTHING;
  }

  /** True if {@code e} is a retryable failure; a throwing predicate throws through. */
  boolean isRetryable(IOException e) {
    return isTransient(e)
        || (!isPermanent(e) && isRefusal(e))
        || (exceptionPredicate != null && exceptionPredicate.test(e));
  }

  /**
   * True for a response that by its status says the server turned the work away: 429 (RFC 6585) and
   * 503 (RFC 9110). About the request it answers, which after a redirect is not the one sent:
   * whether it proves anything of that one is {@link #provesNotProcessed(Response)}'s to say.
   */
  static boolean refuses(Response response) {
    return response.code() == 429 || response.code() == 503;
  }

  /**
   * True if {@code response}, what an attempt returned, proves the server did not process the
   * request okretry sent, so that even a POST may be sent again: it {@linkplain #refuses refuses}
   * it, and it answers that very request. An attempt is one OkHttp call, which follows up a
   * response underneath: then the response answers the last request of a chain ({@link
   * Response#priorResponse()}), and proves something of the first only if every response before it
   * turned the request away and OkHttp sent it again as it was (the same method and body). Those
   * are an auth challenge (401, 407), a 307 or 308 (which keep the method and body), and a refusal
   * (OkHttp sends the request again after a 503 with {@code Retry-After: 0}). Any other (a 303's
   * GET, a 301 or 302 that made a POST a GET, a 408) was processed, or may have been.
   */
  static boolean provesNotProcessed(Response response) {
    if (!refuses(response)) return false;
    Response next = response;
    for (Response prior = next.priorResponse(); prior != null; prior = prior.priorResponse()) {
      if (!resentUnprocessed(prior, next.request())) return false;
      next = prior;
    }
    return true;
  }

  /** True if {@code prior} turned its request away and OkHttp then sent it as {@code next}. */
  private static boolean resentUnprocessed(Response prior, Request next) {
    int code = prior.code();
    boolean turnedAway = code == 401 || code == 407 || code == 307 || code == 308 || refuses(prior);
    Request sent = prior.request();
    // The same body object: OkHttp's redirects and authenticators reuse it; a new one is another
    // request.
    return turnedAway && sent.method().equals(next.method()) && sent.body() == next.body();
  }

  /**
   * True if {@code failure}, what ended an attempt that wrote {@code requestsWritten} network
   * requests whole ({@link #UNWATCHED} if nothing counted them), proves the server processed none
   * of them. Nothing written proves it, whatever failed. Else the failure must show its own request
   * unprocessed ({@linkplain #isRefusal a refusal}, or a failure to connect), and so must each
   * failure OkHttp recovered from underneath before it (it attaches them as suppressed): one that
   * may have reached the server, a dropped connection after a POST was written, proves nothing more
   * can. Where the requests were counted, each one written must also have been refused: a failure
   * after a response OkHttp followed (a redirect's GET) says nothing of the request that response
   * answered.
   */
  static boolean provesNotProcessed(Throwable failure, int requestsWritten) {
    if (requestsWritten == 0) return true; // the server never had a request whole
    Throwable[] suppressed = failure.getSuppressed();
    int refusals = 0;
    int recoveredFrom = 0; // where the failures of OkHttp's own retries start among suppressed
    if (isRefusedStream(failure)) {
      refusals++;
    } else if (!isConnectFailure(failure)) {
      // OkHttp 5 throws a failure to write the body with the refusal it then read attached first
      if (suppressed.length == 0 || !isRefusedStream(suppressed[0])) return false;
      refusals++;
      recoveredFrom = 1;
    }
    for (int i = recoveredFrom; i < suppressed.length; i++) {
      if (isRefusedStream(suppressed[i])) {
        refusals++;
      } else if (!isConnectFailure(suppressed[i])) {
        return false; // a recovered failure that may have reached the server
      }
    }
    return requestsWritten == UNWATCHED || requestsWritten <= refusals;
  }

  /**
   * True for a failure to connect, before any request: refused, no route, unknown host, a connect
   * timeout.
   */
  private static boolean isConnectFailure(Throwable t) {
    if (t instanceof ConnectException
        || t instanceof NoRouteToHostException
        || t instanceof UnknownHostException) {
      return true;
    }
    String message = t.getMessage();
    return t instanceof SocketTimeoutException
        && message != null
        && message.regionMatches(true, 0, "connect timed out", 0, 17);
  }

  /**
   * True for a refusal, whatever OkHttp reports it on: an HTTP/2 stream refused with {@code
   * REFUSED_STREAM} (RFC 9113 §8.7), which OkHttp also reports for a stream above a GOAWAY's last
   * stream id (§6.8: not processed), or a failure that carries one as suppressed (OkHttp 5 may
   * throw the failure to write the request body instead, with the refusal it met reading the
   * response attached; or a refusal it recovered from by itself). Retryable, and priced as a
   * refusal; whether it proves the request unprocessed is {@link #provesNotProcessed(Throwable,
   * int)}'s to say.
   */
  static boolean isRefusal(IOException e) {
    if (isRefusedStream(e)) return true;
    for (Throwable suppressed : e.getSuppressed()) {
      if (isRefusedStream(suppressed)) return true;
    }
    return false;
  }

  /**
   * OkHttp's {@code StreamResetException} for {@code REFUSED_STREAM}. It is internal API; its class
   * name and its message, {@code "stream was reset: " + the error code}, are what it shows without
   * linking against {@code okhttp3.internal}, which is closed on the module path.
   */
  private static boolean isRefusedStream(Throwable t) {
    return t.getClass().getName().equals(STREAM_RESET)
        && REFUSED_STREAM_MESSAGE.equals(t.getMessage());
  }

  /**
   * What an interceptor or request body threw, if OkHttp reports that as {@code e}: its AsyncCall
   * cancels the call and reports {@code IOException("canceled due to " + t)} with {@code t} as its
   * cause (OkHttp 5.5; earlier versions attached it as suppressed). Else null.
   */
  static @Nullable Throwable thrownBelow(IOException e) {
    String message = e.getMessage();
    if (message == null || !message.startsWith("canceled due to ")) return null;
    Throwable cause = e.getCause();
    if (cause != null && !(cause instanceof IOException)) return cause;
    for (Throwable t : e.getSuppressed()) {
      if (!(t instanceof IOException)) return t;
    }
    return null;
  }

  /** True for a failure that will not heal by itself, or that is not the peer's doing. */
  static boolean isPermanent(IOException e) {
    if (tlsVerdict(e) == TLS_WILL_NOT_HEAL) return true;
    if (e instanceof ProtocolException || e instanceof UnknownServiceException) return true;
    // an interrupt or OkHttp's call timeout, not a slow peer
    return e instanceof InterruptedIOException && !(e instanceof SocketTimeoutException);
  }

  static boolean isTransient(IOException e) {
    if (isPermanent(e)) return false;
    // Conscrypt's broken connections carry no cause: only the TLS verdict sees them.
    if (tlsVerdict(e) == TLS_BROKEN_CONNECTION) return true;
    Throwable t = e;
    for (int depth = 0; t != null && depth < MAX_CAUSE_DEPTH; depth++, t = t.getCause()) {
      if (isBrokenConnection(t) || t instanceof UnknownHostException) return true;
      String name = t.getClass().getName();
      // OkHttp's HTTP/2 failures: a reset stream or a connection the server is shutting down.
      if (name.equals(STREAM_RESET) || name.equals(CONNECTION_SHUTDOWN)) return true;
    }
    return false;
  }

  /**
   * What the TLS layer says about {@code e}. {@code TLS_WILL_NOT_HEAL}: a certificate or trust
   * failure (any {@link GeneralSecurityException}) or an {@link SSLPeerUnverifiedException}
   * (OkHttp's hostname verifier and {@code CertificatePinner}) anywhere in the chain, or any other
   * {@link SSLException} (no protocol or cipher suite in common, a disabled protocol, a fatal
   * alert, a plaintext peer) that is not a broken connection. {@code TLS_BROKEN_CONNECTION}: an
   * {@link SSLException} with a socket failure among its causes ("Remote host terminated the
   * handshake" caused by an {@link EOFException}, "Connection reset"), or, for the forms that carry
   * no cause (Conscrypt on Android: "Read error: ssl=0x…: I/O error during system call, Connection
   * reset by peer"), whose message names the broken connection. {@code NOT_TLS}: neither in sight.
   *
   * <p>Only the outermost {@link SSLException} and what lies under it count: a socket failure
   * reported above a TLS failure (a wrapper's) does not make the TLS failure transient. Types
   * first; the messages only for what has no other sign, and only at the TLS layer.
   */
  private static int tlsVerdict(IOException e) {
    Throwable ssl = null;
    int sslDepth = 0;
    Throwable t = e;
    for (int depth = 0; t != null && depth < MAX_CAUSE_DEPTH; depth++, t = t.getCause()) {
      // The peer's certificate or name was checked and refused, or the local crypto setup
      // failed: asking again gets the same answer.
      if (t instanceof SSLPeerUnverifiedException || t instanceof GeneralSecurityException) {
        return TLS_WILL_NOT_HEAL;
      }
      if (ssl == null && t instanceof SSLException) {
        ssl = t;
        sslDepth = depth;
      }
    }
    if (ssl == null) return NOT_TLS;
    return brokeUnder(ssl, MAX_CAUSE_DEPTH - sslDepth) ? TLS_BROKEN_CONNECTION : TLS_WILL_NOT_HEAL;
  }

  /** True if the connection broke under the TLS failure {@code ssl} ({@link #tlsVerdict}). */
  private static boolean brokeUnder(Throwable ssl, int depthLeft) {
    Throwable t = ssl;
    for (int depth = 0; t != null && depth < depthLeft; depth++, t = t.getCause()) {
      if (isBrokenConnection(t)) return true;
      if (t instanceof SSLException && namesBrokenConnection(t.getMessage())) return true;
    }
    return false;
  }

  /**
   * A failure of the socket itself: refused, reset, broken pipe, no route, end of stream, timeout.
   */
  private static boolean isBrokenConnection(Throwable t) {
    return t instanceof SocketTimeoutException
        || t instanceof SocketException // refused, reset, broken pipe, no route
        || t instanceof EOFException; // OkHttp's "unexpected end of stream", the JDK's TLS EOF
  }

  private static boolean namesBrokenConnection(@Nullable String message) {
    if (message == null) return false;
    String lower = message.toLowerCase(Locale.ROOT);
    for (String phrase : BROKEN_CONNECTION_PHRASES) {
      if (lower.contains(phrase)) return true;
    }
    return false;
  }
}
