package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.ThreadMXBean;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.management.ManagementFactory;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.UnknownServiceException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Stream;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLProtocolException;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.internal.http2.ConnectionShutdownException;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Classifier}: which statuses and exceptions are retryable (by default and with extra
 * statuses and predicates), how deep a cause is looked for, and which failures prove the server did
 * not process the request. Through the interceptor: {@code WhatIsRetriedTest} and {@code
 * SafeToRepeatTest}.
 */
@Tag("unit")
class ClassifierTest {
  static final Request REQUEST = new Request.Builder().url("http://example.invalid/").build();

  static Response response(int code, String... headers) {
    return new Response.Builder()
        .request(REQUEST)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("m")
        .headers(Headers.of(headers))
        .build();
  }

  final Classifier plain = new Classifier(Set.of(429, 503), null, null);

  @ParameterizedTest
  @CsvSource({
    "429,true",
    "503,true",
    "500,false",
    "408,false",
    "200,false",
    "999,false",
    "1000,false",
    "0,false"
  })
  void statuses(int code, boolean retryable) {
    assertThat(plain.isRetryable(response(code))).isEqualTo(retryable);
  }

  /**
   * X-Should-Retry as one rule of the verdict: a response's code, its header values, the verdict.
   */
  @ParameterizedTest(name = "{0} {1} -> {2}")
  @CsvSource({
    "503, false, 2",
    "503, FALSE, 2",
    "503, true, 1",
    "503, yes, 1",
    "503, '', 1",
    "503, 'false|false', 1",
    "500, true, 1",
    "409, True, 1",
    "400, true, 1",
    "500, false, 0",
    "500, 'true|true', 0",
    "500, 'true, true', 0",
    "500, 1, 0",
    "200, true, 0",
    "302, true, 0",
    "404, false, 0",
  })
  void shouldRetryHeader(int code, String values, int verdict) {
    String[] pairs =
        Arrays.stream(values.split("\\|", -1))
            .flatMap(v -> Stream.of("X-Should-Retry", v))
            .toArray(String[]::new);
    Response r = response(code, pairs);
    assertThat(plain.verdict(r)).isEqualTo(verdict);
    assertThat(plain.endsByStatus(r)).isEqualTo(verdict == Classifier.RETURN);
    Classifier deaf = new Classifier(Set.of(429, 503), null, null, false);
    assertThat(deaf.verdict(r)).isEqualTo(code == 503 ? Classifier.RETRY : Classifier.RETURN);
  }

  @Test
  void readingShouldRetryAllocatesNothing() {
    var threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    assumeTrue(threads.isThreadAllocatedMemorySupported());
    Response r = response(500, "Content-Type", "text/plain", "X-Should-Retry", "nope", "Date", "x");
    boolean ends = true;
    for (int i = 0; i < 20_000; i++) ends &= plain.endsByStatus(r); // warm up
    long before = threads.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < 100_000; i++) ends &= plain.endsByStatus(r);
    long bytes = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(ends).isTrue();
    assertThat(bytes).as("bytes for 100 000 first-attempt 500s").isLessThan(10_000);
  }

  @Test
  void shouldRetryFalseOverridesAPredicate() {
    Classifier c = new Classifier(Set.of(429, 503), r -> r.code() == 418, null);
    assertThat(c.verdict(response(418, "X-Should-Retry", "false")))
        .isEqualTo(Classifier.SERVER_SAID_NO);
    assertThat(c.verdict(response(418))).isEqualTo(Classifier.RETRY);
  }

  @Test
  void extraStatusesAndPredicates() {
    Classifier c =
        new Classifier(
            Set.of(100, 999),
            r -> r.header("X-Retry") != null,
            e -> e.getMessage() != null && e.getMessage().equals("yes"));
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
    assertThat(plain.isRetryable(new IOException("unexpected end of stream", new EOFException())))
        .isTrue();
    assertThat(plain.isRetryable(new IOException("wrapped", new UnknownHostException()))).isTrue();
  }

  @Test
  void permanentExceptions() {
    assertThat(plain.isRetryable(new IOException("plain"))).isFalse();
    assertThat(plain.isRetryable(new ProtocolException("bad"))).isFalse();
    ProtocolException badStatusLine = new ProtocolException("Unexpected status line");
    badStatusLine.initCause(new EOFException());
    assertThat(plain.isRetryable(badStatusLine))
        .as("a protocol error, whatever it met on the way")
        .isFalse();
    assertThat(plain.isRetryable(new UnknownServiceException("cleartext"))).isFalse();
    assertThat(plain.isRetryable(new InterruptedIOException("interrupted"))).isFalse();
    InterruptedIOException whileConnecting = new InterruptedIOException("interrupted");
    whileConnecting.initCause(new SocketException("closed by the interrupt"));
    assertThat(plain.isRetryable(whileConnecting)).as("an interrupt, whatever it broke").isFalse();
    assertThat(plain.isRetryable(new SSLHandshakeException("tls"))).isFalse();
    assertThat(
            plain.isRetryable(
                new SocketException("wraps tls") {
                  {
                    initCause(new SSLHandshakeException("x"));
                  }
                }))
        .isFalse();
    assertThat(plain.isRetryable(new IOException(new CertificateException("bad cert")))).isFalse();
    // An SSL failure at depth 8 (the top is 0) is out of sight; the socket failure on top is what
    // counts.
    IOException deep = new IOException("0");
    Throwable t = deep;
    for (int i = 1; i < 7; i++) {
      IOException next = new IOException(String.valueOf(i));
      t.initCause(next);
      t = next;
    }
    t.initCause(new SSLHandshakeException("at depth 8"));
    assertThat(
            plain.isRetryable(
                new SocketException("top") {
                  {
                    initCause(deep);
                  }
                }))
        .isTrue();
    IOException seven = new IOException("1");
    t = seven;
    for (int i = 2; i < 7; i++) {
      IOException next = new IOException(String.valueOf(i));
      t.initCause(next);
      t = next;
    }
    t.initCause(new SSLHandshakeException("at depth 7"));
    assertThat(
            plain.isRetryable(
                new SocketException("top") {
                  {
                    initCause(seven);
                  }
                }))
        .isFalse();
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
    // By type: a refused HTTP/2 stream, or a failure to connect, before any request.
    assertThat(unwatched(new StreamResetException(ErrorCode.REFUSED_STREAM))).isTrue();
    assertThat(unwatched(new StreamResetException(ErrorCode.CANCEL))).isFalse();
    assertThat(unwatched(new ConnectException())).isTrue();
    assertThat(unwatched(new SocketTimeoutException("Connect timed out"))).isTrue();
    assertThat(unwatched(new SocketTimeoutException("Read timed out"))).isFalse();
    // Where the SendTracker counted the requests written: none written proves it, whatever failed.
    assertThat(Classifier.provesNotProcessed(new SocketTimeoutException("Read timed out"), 0))
        .isTrue();
    assertThat(Classifier.provesNotProcessed(new StreamResetException(ErrorCode.REFUSED_STREAM), 1))
        .isTrue();
  }

  static boolean unwatched(IOException e) {
    return Classifier.provesNotProcessed(e, Classifier.UNWATCHED);
  }

  /**
   * Issue 43: the proof is about the request okretry sent, not the last one OkHttp sent for the
   * attempt. A response OkHttp followed up must have turned the request away and been followed by
   * the same request; a failure OkHttp recovered from underneath must not have reached the server;
   * and where the requests were counted, each one written must have been refused.
   */
  @Nested
  class AboutTheRequestSent {
    static final RequestBody BODY = RequestBody.create("{}", MediaType.get("application/json"));
    static final Request POST =
        new Request.Builder().url("http://example.invalid/order").post(BODY).build();
    static final Request GET = new Request.Builder().url("http://example.invalid/order/1").build();

    static Response answering(Request request, int code, Response prior) {
      return response(code).newBuilder().request(request).priorResponse(prior).build();
    }

    static Response answering(Request request, int code) {
      return response(code).newBuilder().request(request).build();
    }

    @ParameterizedTest(name = "POST -> {0} -> {1} {2}: {3}")
    @CsvSource({
      "303, GET, 503, false", // the 503 answers the GET; the 303 says the POST was processed
      "302, GET, 503, false",
      "301, GET, 429, false",
      "307, POST, 503, true", // the same POST, refused at its new address
      "308, POST, 429, true",
      "401, POST, 503, true", // an auth challenge: the same POST with credentials
      "407, POST, 503, true",
      "503, POST, 503, true", // OkHttp's own repeat after a 503 with Retry-After: 0
      "408, POST, 503, false", // OkHttp repeats a 408 when its retries are on: not counted
      "307, POST, 500, false",
    })
    void aResponseAfterAFollowUp(int first, String method, int last, boolean proves) {
      Request next = method.equals("GET") ? GET : POST.newBuilder().url(GET.url()).build();
      Response response = answering(next, last, answering(POST, first));
      assertThat(Classifier.provesNotProcessed(response)).isEqualTo(proves);
      assertThat(Classifier.refuses(response)).isEqualTo(last == 429 || last == 503);
    }

    @Test
    void aFollowUpThatSendsAnotherBodyIsAnotherRequest() {
      Request other =
          POST.newBuilder()
              .post(RequestBody.create("{}", MediaType.get("application/json")))
              .build();
      assertThat(Classifier.provesNotProcessed(answering(other, 503, answering(POST, 401))))
          .isFalse();
      // every response before the last counts: a 303 two hops back breaks the chain
      Response viaSeeOther = answering(GET, 307, answering(POST, 303));
      assertThat(Classifier.provesNotProcessed(answering(GET, 503, viaSeeOther))).isFalse();
    }

    @Test
    void aFailureAfterOneOkHttpRecoveredFromUnderneath() {
      IOException dropped = new EOFException("unexpected end of stream");
      ConnectException refused = new ConnectException("Failed to connect");
      refused.addSuppressed(dropped);
      assertThat(unwatched(refused)).as("the POST was written, then the server died").isFalse();
      assertThat(Classifier.provesNotProcessed(refused, 0))
          .as("unless nothing was written")
          .isTrue();

      ConnectException twoRoutes = new ConnectException("Failed to connect");
      twoRoutes.addSuppressed(new ConnectException("the other address"));
      twoRoutes.addSuppressed(new StreamResetException(ErrorCode.REFUSED_STREAM));
      assertThat(unwatched(twoRoutes)).as("every failure unprocessed").isTrue();
      assertThat(Classifier.provesNotProcessed(twoRoutes, 1))
          .as("the one written, refused")
          .isTrue();
      assertThat(Classifier.provesNotProcessed(twoRoutes, 2)).isFalse();
    }

    @Test
    void aFailureAfterAResponseOkHttpFollowed() {
      // POST -> 303 -> GET refused: two requests written, one refused
      IOException refused = new StreamResetException(ErrorCode.REFUSED_STREAM);
      assertThat(Classifier.provesNotProcessed(refused, 2)).isFalse();
      // POST -> 303 -> GET to a host that refuses: the POST was written
      assertThat(Classifier.provesNotProcessed(new ConnectException("refused"), 1)).isFalse();
    }
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
      assertThat(Classifier.isRefusal(refused)).isTrue();
      assertThat(unwatched(refused)).isTrue();
      assertThat(Classifier.provesNotProcessed(refused, 1)).isTrue();
      assertThat(plain.isRetryable(refused)).isTrue();

      IOException canceled = closedWith(new StreamResetException(ErrorCode.CANCEL));
      assertThat(Classifier.isRefusal(canceled)).isFalse();
      assertThat(unwatched(canceled)).isFalse();
      assertThat(plain.isRetryable(canceled))
          .as("a bare IOException stays not retryable")
          .isFalse();
      assertThat(unwatched(new IOException("closed"))).isFalse();
      // a permanent failure stays permanent even if an earlier OkHttp retry met a refusal
      IOException tls = new javax.net.ssl.SSLHandshakeException("bad certificate");
      tls.addSuppressed(new StreamResetException(ErrorCode.REFUSED_STREAM));
      assertThat(plain.isRetryable(tls)).isFalse();
      // a refusal deeper down (the suppressed of a suppressed) is not this exchange's: not read
      IOException deeper =
          closedWith(closedWith(new StreamResetException(ErrorCode.REFUSED_STREAM)));
      assertThat(Classifier.isRefusal(deeper)).isFalse();
      assertThat(unwatched(deeper)).isFalse();
    }
  }

  /**
   * TLS failures as the JDK and Conscrypt (Android) throw them: a broken connection under TLS is
   * transient, a TLS problem that will not heal stays permanent, whatever its message says. Through
   * real TLS: {@code TlsFailuresTest}.
   */
  @Nested
  class TlsFailures {
    static final String SSL = "ssl=0x7b8c4a2e08";

    static <T extends Throwable> T causedBy(T e, Throwable cause) {
      e.initCause(cause);
      return e;
    }

    static Stream<Arguments> brokenConnections() {
      return Stream.of(
          named(
              "JDK 11+: handshake closed by the peer",
              causedBy(
                  new SSLHandshakeException("Remote host terminated the handshake"),
                  new EOFException("SSL peer shut down incorrectly"))),
          named(
              "JDK 8: handshake closed by the peer",
              causedBy(
                  new SSLHandshakeException("Remote host closed connection during handshake"),
                  new EOFException("SSL peer shut down incorrectly"))),
          named(
              "JDK: reset while reading",
              new SSLException("Connection reset", new SocketException("Connection reset"))),
          named(
              "JDK: broken pipe while writing",
              new SSLException(
                  "Broken pipe (Write failed)", new SocketException("Broken pipe (Write failed)"))),
          named(
              "JDK: handshake read timed out",
              causedBy(
                  new SSLHandshakeException("Read timed out"),
                  new SocketTimeoutException("Read timed out"))),
          named(
              "a wrapper over a TLS failure over a reset",
              new IOException(
                  "wrapped",
                  new SSLException(
                      "x", new IOException("y", new SocketException("Connection reset"))))),
          named(
              "JDK phrase with the cause dropped by a wrapper",
              new SSLHandshakeException("Remote host terminated the handshake")),
          named(
              "Conscrypt: reset while reading",
              new SSLException(
                  "Read error: "
                      + SSL
                      + ": I/O error during system call, Connection reset by peer")),
          named(
              "Conscrypt: reset during the handshake",
              new SSLHandshakeException(
                  "SSL handshake aborted: "
                      + SSL
                      + ": I/O error during system call, Connection reset by peer")),
          named(
              "Conscrypt: broken pipe while writing",
              new SSLException(
                  "Write error: " + SSL + ": I/O error during system call, Broken pipe")),
          named(
              "Conscrypt: connection timed out",
              new SSLException(
                  "Read error: " + SSL + ": I/O error during system call, Connection timed out")),
          named(
              "Conscrypt: network changed",
              new SSLException(
                  "Read error: "
                      + SSL
                      + ": I/O error during system call, Software caused connection abort")),
          named(
              "Conscrypt: end of stream during the handshake",
              new SSLHandshakeException(
                  "SSL handshake aborted: " + SSL + ": I/O error during system call, Success")),
          named(
              "Conscrypt: handshake closed by the peer",
              new SSLHandshakeException("Connection closed by peer")));
    }

    static Stream<Arguments> willNotHeal() {
      return Stream.of(
          named(
              "JDK: untrusted certificate",
              causedBy(
                  new SSLHandshakeException(
                      "PKIX path building failed: unable to find valid certification path"),
                  new CertificateException(
                      "PKIX path building failed", new CertPathBuilderException("no path")))),
          named(
              "JDK: expired certificate",
              causedBy(
                  new SSLHandshakeException("certificate expired"),
                  new CertificateExpiredException("NotAfter"))),
          named(
              "Android: untrusted certificate",
              causedBy(
                  new SSLHandshakeException(
                      "java.security.cert.CertPathValidatorException: Trust anchor for"
                          + " certification path not found."),
                  new CertificateException(
                      new CertPathValidatorException(
                          "Trust anchor for certification path not found.")))),
          named(
              "a certificate failure deeper than the direct cause",
              new IOException(
                  "wrapped",
                  causedBy(
                      new SSLHandshakeException("x"),
                      new SSLException("y", new CertificateException("bad"))))),
          named(
              "a certificate failure whatever the message says",
              causedBy(
                  new SSLHandshakeException("Connection reset"), new CertificateException("bad"))),
          named(
              "a certificate failure whatever else broke",
              causedBy(
                  new SSLHandshakeException("x"),
                  new CertificateException("bad", new SocketException("Connection reset")))),
          named(
              "OkHttp: hostname not verified",
              new SSLPeerUnverifiedException(
                  "Hostname example.com not verified:\n    certificate: sha256/AAAA")),
          named(
              "OkHttp: certificate pinning failure",
              new SSLPeerUnverifiedException(
                  "Certificate pinning failure!\n  Peer certificate chain:")),
          named(
              "JDK: no protocol in common",
              new SSLHandshakeException(
                  "No appropriate protocol (protocol is disabled or cipher suites are"
                      + " inappropriate)")),
          named(
              "JDK: the server refused the handshake",
              new SSLHandshakeException("Received fatal alert: handshake_failure")),
          named(
              "JDK: the server does not speak this protocol version",
              new SSLHandshakeException("Received fatal alert: protocol_version")),
          named(
              "JDK: a plaintext peer", new SSLException("Unsupported or unrecognized SSL message")),
          named(
              "Conscrypt: unsupported protocol",
              new SSLHandshakeException(
                  "SSL handshake aborted: "
                      + SSL
                      + ": Failure in SSL library, usually a protocol error\n"
                      + "error:100000f0:SSL routines:OPENSSL_internal:UNSUPPORTED_PROTOCOL")),
          named(
              "Conscrypt: no cipher suite in common",
              new SSLHandshakeException(
                  "SSL handshake aborted: "
                      + SSL
                      + ": Failure in SSL library, usually a protocol error\n"
                      + "error:10000410:SSL"
                      + " routines:OPENSSL_internal:SSLV3_ALERT_HANDSHAKE_FAILURE")),
          named(
              "Conscrypt: a plaintext peer",
              new SSLProtocolException(
                  "Read error: "
                      + SSL
                      + ": Failure in SSL library, usually a protocol error\n"
                      + "error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER")),
          named(
              "a socket failure reported above a TLS failure",
              new SocketException("wraps tls") {
                {
                  initCause(new SSLHandshakeException("Received fatal alert: handshake_failure"));
                }
              }));
    }

    static Arguments named(String name, IOException e) {
      return Arguments.of(Named.of(name, e));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenConnections")
    void aBrokenConnectionUnderTlsIsRetried(IOException e) {
      assertThat(plain.isRetryable(e)).isTrue();
      // Whether it may be repeated is the SendTracker's to say: the type proves nothing either way.
      assertThat(unwatched(e)).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("willNotHeal")
    void aTlsProblemThatWillNotHealIsNotRetried(IOException e) {
      assertThat(plain.isRetryable(e)).isFalse();
      assertThat(new Classifier(Set.of(429, 503), null, x -> x == e).isRetryable(e))
          .as("unless the predicate says so")
          .isTrue();
    }
  }
}
