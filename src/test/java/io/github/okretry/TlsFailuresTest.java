package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.TlsFront.Act;
import java.io.IOException;
import java.security.cert.CertificateException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * TLS failures over real TLS: a MockWebServer serving HTTPS with a held certificate, behind a
 * {@link TlsFront} that closes or resets a connection after the ClientHello (an overloaded TLS
 * terminator, a draining load balancer) or after forwarding a request. A handshake the server
 * closed sent nothing, so a GET and even a keyless POST are retried; a connection closed while the
 * response is awaited is retried for a GET only; a certificate the client does not trust is not
 * retried at all. On both drivers, with no real waiting on the blocking one (fake time) and 1 ms on
 * the async one. The exception shapes one by one, with Conscrypt's: {@code ClassifierTest}.
 *
 * <p>What JDK 17 throws here: a handshake closed after the ClientHello is {@code
 * SSLHandshakeException: Remote host terminated the handshake} (cause {@code EOFException}), the
 * case issue 22 found never retried; a reset is a plain {@code SocketException: Connection reset}
 * and a response lost on HTTP/1.1 an {@code EOFException}, which were retried before too. A keyless
 * POST is retried after a broken handshake because no request headers were written ({@code
 * SendTracker}), on both drivers.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class TlsFailuresTest {
  static final HeldCertificate SERVER_CERT =
      new HeldCertificate.Builder().addSubjectAlternativeName("127.0.0.1").ecdsa256().build();
  static final HeldCertificate OTHER_CERT =
      new HeldCertificate.Builder().addSubjectAlternativeName("127.0.0.1").ecdsa256().build();

  enum Driver {
    BLOCKING,
    ASYNC
  }

  enum Method {
    GET,
    KEYLESS_POST
  }

  MockWebServer server;
  TlsFront front;
  final FakeTime time = new FakeTime();
  final List<Long> retryDelaysNanos = new ArrayList<>(); // async driver: the retries it scheduled

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.useHttps(
        new HandshakeCertificates.Builder()
            .heldCertificate(SERVER_CERT)
            .build()
            .sslSocketFactory());
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    if (front != null) front.close();
    server.close();
  }

  static Stream<Arguments> handshakeCases() {
    List<Arguments> cases = new ArrayList<>();
    for (Driver driver : Driver.values()) {
      for (Act act : List.of(Act.CLOSE_AFTER_HELLO, Act.RESET_AFTER_HELLO)) {
        for (Method method : Method.values()) cases.add(Arguments.of(driver, act, method));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}: {2} after {1}")
  @MethodSource("handshakeCases")
  void aHandshakeTheServerBrokeOnceSentNothingAndIsRetried(Driver driver, Act act, Method method)
      throws Exception {
    front = new TlsFront(server, act);
    server.enqueue(new MockResponse.Builder().body("ok").build());

    Object outcome = run(driver, trustingServer(), request(method));

    assertThat(outcome).isEqualTo("200 ok");
    assertThat(front.connections())
        .as("connections: the broken handshake, then the retry")
        .isEqualTo(2);
    assertThat(server.getRequestCount()).as("requests that reached the server").isEqualTo(1);
    assertThat(waits(driver)).as("waits between attempts").isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Driver.class)
  void aGetWhoseResponseIsLostIsRetried(Driver driver) throws Exception {
    startLosingTheFirstResponse("ok");

    Object outcome = run(driver, trustingServer(), request(Method.GET));

    assertThat(outcome).isEqualTo("200 ok");
    assertThat(server.getRequestCount()).as("requests that reached the server").isEqualTo(2);
    assertThat(waits(driver)).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Driver.class)
  void aKeylessPostWhoseResponseIsLostIsNotRetried(Driver driver) throws Exception {
    startLosingTheFirstResponse("twice");

    Object outcome = run(driver, trustingServer(), request(Method.KEYLESS_POST));

    assertThat(outcome).as("the server may have processed it").isInstanceOf(IOException.class);
    assertThat(server.getRequestCount()).as("requests that reached the server").isEqualTo(1);
    assertThat(waits(driver)).isZero();
  }

  /**
   * The first request reaches the server and its response is lost (held back, then the front closes
   * the connection); the second gets {@code secondBody}.
   */
  void startLosingTheFirstResponse(String secondBody) throws IOException {
    // HTTP/2: the same, but the server logs the close
    server.setProtocols(List.of(Protocol.HTTP_1_1));
    front = new TlsFront(server, Act.CLOSE_AWAITING_RESPONSE);
    server.enqueue(
        new MockResponse.Builder().headersDelay(500, TimeUnit.MILLISECONDS).body("lost").build());
    server.enqueue(new MockResponse.Builder().body(secondBody).build());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Driver.class)
  void aCertificateTheClientDoesNotTrustIsNotRetried(Driver driver) throws Exception {
    front = new TlsFront(server);
    server.enqueue(new MockResponse.Builder().body("never").build());
    HandshakeCertificates trustingAnother =
        new HandshakeCertificates.Builder().addTrustedCertificate(OTHER_CERT.certificate()).build();

    Object outcome = run(driver, trustingAnother, request(Method.GET));

    assertThat(outcome).isInstanceOf(SSLHandshakeException.class);
    assertThat(((Throwable) outcome).getCause()).isInstanceOf(CertificateException.class);
    assertThat(front.connections()).as("connection attempts").isEqualTo(1);
    assertThat(server.getRequestCount()).isZero();
    assertThat(waits(driver)).isZero();
  }

  static HandshakeCertificates trustingServer() {
    return new HandshakeCertificates.Builder()
        .addTrustedCertificate(SERVER_CERT.certificate())
        .build();
  }

  Request request(Method method) {
    Request.Builder request = new Request.Builder().url(front.url("/tls"));
    if (method == Method.GET) return request.build();
    return request
        .post(RequestBody.create("{\"amount\":42}", MediaType.get("application/json")))
        .tag(IdempotencyKey.class, IdempotencyKey.none())
        .build();
  }

  /** Waits between attempts: slept on fake time (blocking), or scheduled (async). */
  int waits(Driver driver) {
    return driver == Driver.BLOCKING ? time.sleeps().size() : retryDelaysNanos.size();
  }

  /** The call's outcome: {@code "code body"}, or the exception it failed with. */
  Object run(Driver driver, HandshakeCertificates trust, Request request) throws Exception {
    OkHttpClient base =
        new OkHttpClient.Builder()
            .sslSocketFactory(trust.sslSocketFactory(), trust.trustManager())
            .connectTimeout(5, TimeUnit.SECONDS)
            .readTimeout(5, TimeUnit.SECONDS)
            .build();
    if (driver == Driver.BLOCKING) {
      RetryPolicy policy = RetryPolicy.builder().timeSource(time).build();
      OkHttpClient client =
          LeakCheck.track(
              base.newBuilder().addInterceptor(RetryInterceptor.create(policy)).build());
      try (Response response = client.newCall(request).execute()) {
        return response.code() + " " + response.body().string();
      } catch (IOException e) {
        return e;
      }
    }
    RetryPolicy policy =
        RetryPolicy.builder()
            .baseDelay(1, TimeUnit.MILLISECONDS)
            .listener(
                new RetryListener() {
                  @Override
                  public void onRetryScheduled(
                      Request r, int attempt, String reason, long delayNanos) {
                    synchronized (retryDelaysNanos) {
                      retryDelaysNanos.add(delayNanos);
                    }
                  }
                })
            .build();
    try (RetryingCallFactory calls = RetryingCallFactory.create(LeakCheck.track(base), policy)) {
      RetryingCallFactoryTest.Outcome outcome = new RetryingCallFactoryTest.Outcome();
      calls.newCall(request).enqueue(outcome);
      return outcome.result.get(20, TimeUnit.SECONDS);
    }
  }
}
