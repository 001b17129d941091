package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.UnknownServiceException;
import java.security.cert.CertificateException;
import java.util.Set;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Headers;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.internal.http2.ConnectionShutdownException;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Classifier}: which statuses and exceptions are retryable (by default and with extra
 * statuses and predicates), how deep a cause is looked for, and which failures prove the server
 * did not process the request. Through the interceptor: {@code WhatIsRetriedTest} and {@code
 * SafeToRepeatTest}.
 */
@Tag("unit")
class ClassifierTest {
  static final Request REQUEST = new Request.Builder().url("http://example.invalid/").build();

  static Response response(int code, String... headers) {
    return new Response.Builder().request(REQUEST).protocol(Protocol.HTTP_1_1).code(code).message("m")
        .headers(Headers.of(headers)).build();
  }

  final Classifier plain = new Classifier(Set.of(429, 503), null, null);

  @ParameterizedTest
  @CsvSource({"429,true", "503,true", "500,false", "408,false", "200,false", "999,false", "1000,false", "0,false"})
  void statuses(int code, boolean retryable) {
    assertThat(plain.isRetryable(response(code))).isEqualTo(retryable);
  }

  @Test
  void extraStatusesAndPredicates() {
    Classifier c = new Classifier(Set.of(100, 999), r -> r.header("X-Retry") != null, e -> e.getMessage() != null && e.getMessage().equals("yes"));
    assertThat(c.isRetryable(response(100))).isTrue();
    assertThat(c.isRetryable(response(999))).isTrue();
    assertThat(c.isRetryable(response(200))).isFalse();
    assertThat(c.isRetryable(response(200, "X-Retry", "1"))).isTrue();
    assertThat(c.isRetryable(new IOException("yes"))).isTrue();
    assertThat(c.isRetryable(new IOException("no"))).isFalse();
    assertThat(plain.isRetryable(new IOException("yes"))).isFalse();
  }

  @Test
  void transientExceptions() {
    assertThat(plain.isRetryable(new SocketTimeoutException("timeout"))).isTrue();
    assertThat(plain.isRetryable(new ConnectException("refused"))).isTrue();
    assertThat(plain.isRetryable(new SocketException("reset"))).isTrue();
    assertThat(plain.isRetryable(new EOFException())).isTrue();
    assertThat(plain.isRetryable(new UnknownHostException("x"))).isTrue();
    assertThat(plain.isRetryable(new StreamResetException(ErrorCode.REFUSED_STREAM))).isTrue();
    assertThat(plain.isRetryable(new ConnectionShutdownException())).isTrue();
    assertThat(plain.isRetryable(new IOException("unexpected end of stream", new EOFException()))).isTrue();
    assertThat(plain.isRetryable(new IOException("wrapped", new UnknownHostException()))).isTrue();
  }

  @Test
  void permanentExceptions() {
    assertThat(plain.isRetryable(new IOException("plain"))).isFalse();
    assertThat(plain.isRetryable(new ProtocolException("bad"))).isFalse();
    ProtocolException badStatusLine = new ProtocolException("Unexpected status line");
    badStatusLine.initCause(new EOFException());
    assertThat(plain.isRetryable(badStatusLine)).as("a protocol error, whatever it met on the way").isFalse();
    assertThat(plain.isRetryable(new UnknownServiceException("cleartext"))).isFalse();
    assertThat(plain.isRetryable(new InterruptedIOException("interrupted"))).isFalse();
    InterruptedIOException whileConnecting = new InterruptedIOException("interrupted");
    whileConnecting.initCause(new SocketException("closed by the interrupt"));
    assertThat(plain.isRetryable(whileConnecting)).as("an interrupt, whatever it broke").isFalse();
    assertThat(plain.isRetryable(new SSLHandshakeException("tls"))).isFalse();
    assertThat(plain.isRetryable(new SocketException("wraps tls") {{ initCause(new SSLHandshakeException("x")); }})).isFalse();
    assertThat(plain.isRetryable(new IOException(new CertificateException("bad cert")))).isFalse();
    // An SSL failure at depth 8 (the top is 0) is out of sight; the socket failure on top is what counts.
    IOException deep = new IOException("0");
    Throwable t = deep;
    for (int i = 1; i < 7; i++) {
      IOException next = new IOException(String.valueOf(i));
      t.initCause(next);
      t = next;
    }
    t.initCause(new SSLHandshakeException("at depth 8"));
    assertThat(plain.isRetryable(new SocketException("top") {{ initCause(deep); }})).isTrue();
    IOException seven = new IOException("1");
    t = seven;
    for (int i = 2; i < 7; i++) {
      IOException next = new IOException(String.valueOf(i));
      t.initCause(next);
      t = next;
    }
    t.initCause(new SSLHandshakeException("at depth 7"));
    assertThat(plain.isRetryable(new SocketException("top") {{ initCause(seven); }})).isFalse();
    // A transient cause deeper than 8 levels is not looked for.
    IOException buried = new IOException("0");
    t = buried;
    for (int i = 1; i < 8; i++) {
      IOException next = new IOException(String.valueOf(i));
      t.initCause(next);
      t = next;
    }
    t.initCause(new EOFException("8"));
    assertThat(plain.isRetryable(buried)).isFalse();
    IOException shallow = new IOException("0");
    t = shallow;
    for (int i = 1; i < 7; i++) {
      IOException next = new IOException(String.valueOf(i));
      t.initCause(next);
      t = next;
    }
    t.initCause(new EOFException("7"));
    assertThat(plain.isRetryable(shallow)).isTrue();
  }

  @Test
  void proofOfNotProcessing() {
    assertThat(Classifier.provesNotProcessed(response(429))).isTrue();
    assertThat(Classifier.provesNotProcessed(response(503))).isTrue();
    assertThat(Classifier.provesNotProcessed(response(500))).isFalse();
    assertThat(Classifier.provesNotProcessed(response(408))).isFalse();
    // Pre-send failures are proven by the SendTracker (no request headers written); by type,
    // only a refused HTTP/2 stream proves the server did not process a written request.
    assertThat(Classifier.provesNotProcessed(new StreamResetException(ErrorCode.REFUSED_STREAM))).isTrue();
    assertThat(Classifier.provesNotProcessed(new StreamResetException(ErrorCode.CANCEL))).isFalse();
    assertThat(Classifier.provesNotProcessed(new ConnectException())).isFalse();
    assertThat(Classifier.provesNotProcessed(new SocketTimeoutException("Read timed out"))).isFalse();
  }

  /**
   * OkHttp attaches a stream's REFUSED_STREAM as suppressed to the exception it throws when the
   * writer closed while the body was written: only this exchange's own refusal counts.
   */
  @Nested
  class RefusedStreamsSuppressed {

    static IOException closedWith(Throwable suppressed) {
      IOException closed = new IOException("closed");
      closed.addSuppressed(suppressed);
      return closed;
    }

    @Test
    void aRefusalAttachedAsSuppressedProvesNotProcessedAndIsRetryable() {
      IOException refused = closedWith(new StreamResetException(ErrorCode.REFUSED_STREAM));
      assertThat(Classifier.provesNotProcessed(refused)).isTrue();
      assertThat(plain.isRetryable(refused)).isTrue();

      IOException canceled = closedWith(new StreamResetException(ErrorCode.CANCEL));
      assertThat(Classifier.provesNotProcessed(canceled)).isFalse();
      assertThat(plain.isRetryable(canceled)).as("a bare IOException stays not retryable").isFalse();
      assertThat(Classifier.provesNotProcessed(new IOException("closed"))).isFalse();
      // a permanent failure stays permanent even if an earlier OkHttp retry met a refusal
      IOException tls = new javax.net.ssl.SSLHandshakeException("bad certificate");
      tls.addSuppressed(new StreamResetException(ErrorCode.REFUSED_STREAM));
      assertThat(plain.isRetryable(tls)).isFalse();
      // a refusal deeper down (the suppressed of a suppressed) is not this exchange's: not read
      assertThat(Classifier.provesNotProcessed(closedWith(closedWith(new StreamResetException(ErrorCode.REFUSED_STREAM))))).isFalse();
    }
  }
}
