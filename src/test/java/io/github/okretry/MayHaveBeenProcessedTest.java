package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.RetryOutcome.Processing;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okhttp3.internal.http2.ConnectionShutdownException;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import okio.BufferedSink;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 37: {@link RetryOutcome#processing()} for each row of the decision table in
 * docs/semantics.md, both columns where they differ, on both drivers. The scripted server writes no
 * request headers, so a keyless POST's watched attempt reads as never sent here: the row "after the
 * request headers were completely written" for a keyless POST is in {@link
 * RetryOutcomeIntegrationTest}, on a real socket. An idempotent or keyed request is not watched: a
 * failure that proves nothing by its type reads as {@link Processing#MAYBE}, erring towards
 * caution.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class MayHaveBeenProcessedTest extends ScriptedTest {

  MayHaveBeenProcessedTest(Driver driver) {
    this.driver = driver;
  }

  static Request keyless() {
    return post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.none()).build();
  }

  static Request oneShot() {
    RequestBody body =
        new RequestBody() {
          @Override
          public okhttp3.MediaType contentType() {
            return null;
          }

          @Override
          public void writeTo(BufferedSink sink) {}

          @Override
          public boolean isOneShot() {
            return true;
          }
        };
    return new Request.Builder().url("http://example.test/upload").post(body).build();
  }

  /** One row: the script, the request, the policy, and what the outcome must say. */
  static Arguments row(
      String name,
      Consumer<Script> server,
      Request request,
      UnaryOperator<RetryPolicy.Builder> policy,
      Processing processing,
      GiveUpReason reason) {
    return Arguments.of(Named.of(name, server), request, policy, processing, reason);
  }

  static Stream<Arguments> rows() {
    UnaryOperator<RetryPolicy.Builder> same = b -> b;
    return Stream.of(
        row(
            "a status not retried (500): returned",
            s -> s.status(500),
            get(),
            same,
            Processing.PROCESSED,
            null),
        row(
            "a status not retried, keyless POST",
            s -> s.status(404),
            keyless(),
            same,
            Processing.PROCESSED,
            null),
        row(
            "429 and 503 to the end",
            s -> s.status(429).thenAlways(503),
            get(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "429 and 503, keyless POST",
            s -> s.status(429).thenAlways(503),
            keyless(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "an added status (502), keyed: retried",
            s -> s.thenAlways(502),
            post(),
            b -> b.retryOnStatus(502),
            Processing.PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "an added status (502), keyless: returned",
            s -> s.status(502),
            keyless(),
            b -> b.retryOnStatus(502),
            Processing.PROCESSED,
            GiveUpReason.NOT_SAFE_TO_REPEAT),
        row(
            "refused, no route, unknown host, connect timeout",
            s ->
                s.fail(new ConnectException("refused"))
                    .fail(new NoRouteToHostException("no route"))
                    .fail(new UnknownHostException("example.test"))
                    .fail(new SocketTimeoutException("Connect timed out")),
            get(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "the same, keyless POST",
            s -> s.thenAlwaysFail(n -> new ConnectException("refused")),
            keyless(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "a TLS handshake the connection broke under, keyless POST (watched: nothing written)",
            s -> s.thenAlwaysFail(n -> handshakeBroken()),
            keyless(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "a TLS handshake broken, GET (not watched)",
            s -> s.thenAlwaysFail(n -> handshakeBroken()),
            get(),
            same,
            Processing.MAYBE,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "a read timeout, keyed POST",
            s -> s.thenAlwaysFail(n -> new SocketTimeoutException("timeout")),
            post(),
            same,
            Processing.MAYBE,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "a failure before the headers were written, keyless POST (ConnectionShutdownException)",
            s -> s.thenAlwaysFail(n -> new ConnectionShutdownException()),
            keyless(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "REFUSED_STREAM, GET",
            s -> s.thenAlwaysFail(n -> new StreamResetException(ErrorCode.REFUSED_STREAM)),
            get(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "REFUSED_STREAM suppressed on another failure, keyed POST",
            s -> s.thenAlwaysFail(n -> closedRefused()),
            post(),
            same,
            Processing.NOT_PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "a TLS problem that will not heal, GET",
            s -> s.fail(new SSLHandshakeException("bad cert")),
            get(),
            same,
            Processing.MAYBE,
            GiveUpReason.NOT_RETRYABLE),
        row(
            "ProtocolException after a response that came: a 503 before it",
            s -> s.status(503).fail(new ProtocolException("unexpected status line")),
            get(),
            same,
            Processing.MAYBE,
            GiveUpReason.NOT_RETRYABLE),
        row(
            "an exception retryOnException accepts, GET",
            s -> s.thenAlwaysFail(n -> new IOException("odd")),
            get(),
            b -> b.retryOnException(e -> e.getMessage().equals("odd")),
            Processing.MAYBE,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "canceled during an attempt",
            s -> s.cancelingTheCall().fail(new IOException("Canceled")),
            get(),
            same,
            Processing.MAYBE,
            GiveUpReason.CANCELED),
        row(
            "a 503 to the GET a 303 led to, keyless POST: returned (issue 43)",
            s -> s.then(seeOtherThen503()),
            keyless(),
            same,
            Processing.PROCESSED,
            GiveUpReason.NOT_SAFE_TO_REPEAT),
        row(
            "a 503 to the GET a 303 led to, keyed POST: retried",
            s -> s.thenAlways(seeOtherThen503()),
            post(),
            same,
            Processing.PROCESSED,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "refused after OkHttp recovered from a dropped connection, keyed POST",
            s -> s.fail(refusedAfterDropped()).thenAlwaysFail(n -> new ConnectException("refused")),
            post(),
            same,
            Processing.MAYBE,
            GiveUpReason.RETRIES_EXHAUSTED),
        row(
            "a one-shot body refused by a 503, none kept (replayBuffer 0): not sent again",
            s -> s.status(503),
            oneShot(),
            b -> b.replayBuffer(0, 0),
            Processing.NOT_PROCESSED,
            GiveUpReason.NOT_SAFE_TO_REPEAT));
  }

  static IOException handshakeBroken() {
    SSLHandshakeException e = new SSLHandshakeException("Remote host terminated the handshake");
    e.initCause(new EOFException("SSL peer shut down incorrectly"));
    return e;
  }

  /**
   * What OkHttp returns when it followed a POST's 303 with a GET that got a 503: the 503, answering
   * the GET, with the 303 as its prior response.
   */
  static Script.Outcome seeOtherThen503() {
    return (chain, n) -> {
      Request post = chain.request();
      Response seeOther =
          new Response.Builder()
              .request(post)
              .protocol(Protocol.HTTP_1_1)
              .code(303)
              .message("See Other")
              .build();
      return new Response.Builder()
          .request(post.newBuilder().url(post.url().resolve("/order/1")).get().build())
          .protocol(Protocol.HTTP_1_1)
          .code(503)
          .message("Service Unavailable")
          .body(ResponseBody.create("busy", null))
          .priorResponse(seeOther)
          .build();
    };
  }

  /**
   * What OkHttp throws when a connection dropped after it wrote the request, it recovered by trying
   * a new one, and that was refused: the refusal, with the drop attached as suppressed.
   */
  static IOException refusedAfterDropped() {
    ConnectException refused = new ConnectException("Failed to connect");
    refused.addSuppressed(new EOFException("unexpected end of stream"));
    return refused;
  }

  static IOException closedRefused() {
    IOException closed = new IOException("closed");
    closed.addSuppressed(new StreamResetException(ErrorCode.REFUSED_STREAM));
    return closed;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void theOutcomeSaysWhetherTheServerMayHaveProcessedIt(
      Consumer<Script> server,
      Request request,
      UnaryOperator<RetryPolicy.Builder> policy,
      Processing processing,
      GiveUpReason reason) {
    server.accept(script);
    RetryOutcome outcome;
    try (Response response = client(policy.apply(quietRetry())).newCall(request).execute()) {
      outcome = RetryOutcome.of(response);
    } catch (IOException e) {
      outcome = RetryOutcome.of(e);
    }
    assertThat(outcome).isNotNull();
    assertThat(outcome.processing()).as(outcome.toString()).isEqualTo(processing);
    assertThat(outcome.giveUpReason()).as(outcome.toString()).isEqualTo(reason);
  }

  @org.junit.jupiter.api.Test
  void theDeadlineRanOutDuringAnAttempt() {
    script.then(
        (chain, n) -> {
          time.advance(Duration.ofSeconds(2));
          throw new SocketTimeoutException("timeout");
        });
    try {
      client(quietRetry().deadline(Duration.ofSeconds(1))).newCall(get()).execute().close();
    } catch (IOException e) {
      assertThat(RetryOutcome.of(e).processing()).isEqualTo(Processing.MAYBE);
      assertThat(RetryOutcome.of(e).giveUpReason()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
      return;
    }
    throw new AssertionError("no exception");
  }

  @ParameterizedTest(name = "interrupted during an attempt")
  @MethodSource("interruptRow")
  void interruptedDuringAnAttempt(Request request) {
    if (driver != Driver.BLOCKING) return; // an interrupt is the blocking path's
    script.interruptingTheCaller().fail(new InterruptedIOException("interrupted"));
    try {
      client(quietRetry()).newCall(request).execute().close();
    } catch (IOException e) {
      assertThat(RetryOutcome.of(e).processing()).isEqualTo(Processing.MAYBE);
      assertThat(RetryOutcome.of(e).giveUpReason()).isEqualTo(GiveUpReason.INTERRUPTED);
    } finally {
      Thread.interrupted();
    }
  }

  static Stream<Request> interruptRow() {
    return Stream.of(get());
  }
}
