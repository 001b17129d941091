package io.github.okretry.internal;

import io.github.okretry.RetryPredicate;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.UnknownServiceException;
import java.security.cert.CertificateException;
import java.util.Set;
import javax.net.ssl.SSLException;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * Decides which outcomes of an attempt are transient failures worth another attempt, and which
 * failures prove the server never processed the request.
 *
 * <p>Retryable by default: timeouts, connection failures (refused, reset, no route, unknown
 * host, unexpected end of stream, an HTTP/2 stream reset or shutdown) and the configured status
 * codes (429 and 503 unless extended). Never retried by default: TLS and certificate failures,
 * {@link ProtocolException}, {@link UnknownServiceException} (e.g. cleartext not permitted) and any
 * other exception, unless the configured predicate accepts it. Interruption and cancellation are
 * handled before this class is asked.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class Classifier {

  private static final int MAX_CAUSE_DEPTH = 8;
  private static final String STREAM_RESET = "okhttp3.internal.http2.StreamResetException";
  private static final String CONNECTION_SHUTDOWN = "okhttp3.internal.http2.ConnectionShutdownException";
  private static final String REFUSED_STREAM_MESSAGE = "stream was reset: REFUSED_STREAM";

  private final boolean[] retryableStatus = new boolean[1000];
  private final @Nullable RetryPredicate<Response> responsePredicate;
  private final @Nullable RetryPredicate<IOException> exceptionPredicate;

  /**
   * @param statuses codes in {@code [100, 999]} whose responses are retried
   * @param responsePredicate extra responses to retry, or null for none
   * @param exceptionPredicate extra exceptions to retry, or null for none
   */
  public Classifier(
      Set<Integer> statuses,
      @Nullable RetryPredicate<Response> responsePredicate,
      @Nullable RetryPredicate<IOException> exceptionPredicate) {
    for (int code : statuses) retryableStatus[code] = true;
    this.responsePredicate = responsePredicate;
    this.exceptionPredicate = exceptionPredicate;
  }

  /**
   * True if a response with this status is a retryable failure whatever the predicate says: the
   * common path decides by status alone, without calling user code.
   */
  public boolean isRetryableStatus(int code) {
    return code >= 0 && code < retryableStatus.length && retryableStatus[code];
  }

  /** True if a predicate could make a response of any status retryable. */
  public boolean hasResponsePredicate() {
    return responsePredicate != null;
  }

  /** True if {@code response} is a retryable failure; a throwing predicate throws through. */
  public boolean isRetryable(Response response) {
    if (isRetryableStatus(response.code())) return true;
    return responsePredicate != null && responsePredicate.test(response);
  }

  /** True if {@code e} is a retryable failure; a throwing predicate throws through. */
  public boolean isRetryable(IOException e) {
    return isTransient(e)
        || (!isPermanent(e) && provesNotProcessed(e)) // a refusal, whatever OkHttp reports it on
        || (exceptionPredicate != null && exceptionPredicate.test(e));
  }

  /**
   * True for a response that by its status promises the request was not acted on: 429 (RFC 6585)
   * and 503 (RFC 9110) mean the server refused the work, so even a POST may be sent again.
   */
  public static boolean provesNotProcessed(Response response) {
    return response.code() == 429 || response.code() == 503;
  }

  /**
   * True for a failure that proves the server did not process the request although it may have
   * been written: an HTTP/2 stream refused with {@code REFUSED_STREAM} (RFC 9113 §8.7), which
   * OkHttp also reports for a stream above a GOAWAY's last stream id (§6.8: not processed).
   * OkHttp 5 may throw the failure to write the request body instead, with the refusal it met
   * reading this exchange's response attached as suppressed: that proves the same. (OkHttp also
   * attaches failures of its own earlier retries as suppressed, but okretry turns those retries
   * off for every request that needs this proof: one neither idempotent nor keyed.)
   */
  public static boolean provesNotProcessed(IOException e) {
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
    return t.getClass().getName().equals(STREAM_RESET) && REFUSED_STREAM_MESSAGE.equals(t.getMessage());
  }

  /** True for a failure that will not heal by itself, or that is not the peer's doing. */
  static boolean isPermanent(IOException e) {
    Throwable t = e;
    for (int depth = 0; t != null && depth < MAX_CAUSE_DEPTH; depth++, t = t.getCause()) {
      // A TLS or certificate problem anywhere in the chain will not heal by itself.
      if (t instanceof SSLException || t instanceof CertificateException) return true;
    }
    if (e instanceof ProtocolException || e instanceof UnknownServiceException) return true;
    // an interrupt or OkHttp's call timeout, not a slow peer
    return e instanceof InterruptedIOException && !(e instanceof SocketTimeoutException);
  }

  static boolean isTransient(IOException e) {
    if (isPermanent(e)) return false;
    Throwable t = e;
    for (int depth = 0; t != null && depth < MAX_CAUSE_DEPTH; depth++, t = t.getCause()) {
      if (t instanceof SocketTimeoutException
          || t instanceof SocketException // refused, reset, broken pipe, no route
          || t instanceof EOFException // OkHttp's "unexpected end of stream"
          || t instanceof UnknownHostException) {
        return true;
      }
      String name = t.getClass().getName();
      // OkHttp's HTTP/2 failures: a reset stream or a connection the server is shutting down.
      if (name.equals(STREAM_RESET) || name.equals(CONNECTION_SHUTDOWN)) {
        return true;
      }
    }
    return false;
  }
}
