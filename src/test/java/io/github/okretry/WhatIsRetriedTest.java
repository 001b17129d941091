package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.SocketTimeoutException;
import java.util.List;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which outcomes are retried: 429 and 503, timeouts and connection failures, and what {@code
 * retryOnStatus}, {@code retryOnResponse} and {@code retryOnException} add; everything else returns
 * or throws at once. Whether a retryable failure may be repeated is {@link SafeToRepeatTest}; the
 * rules themselves are {@code ClassifierTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class WhatIsRetriedTest extends ScriptedTest {

  WhatIsRetriedTest(Driver driver) {
    this.driver = driver;
  }

  @Nested
  class Statuses {
    @ParameterizedTest(name = "HTTP {0} is returned at once")
    @ValueSource(ints = {200, 201, 204, 301, 400, 401, 403, 404, 408, 409, 422, 500, 502, 504})
    void otherStatusesAreReturnedAtOnce(int code) throws IOException {
      script.status(code);
      try (Response r = client(retry()).newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(code);
      }
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(time.sleeps()).isEmpty();
    }
  }

  @Nested
  class Exceptions {
    static List<IOException> retryableExceptions() {
      return List.of(
          new SocketTimeoutException("timeout"),
          new ConnectException("Failed to connect"),
          new java.net.SocketException("Connection reset"),
          new java.net.NoRouteToHostException("no route"),
          new java.net.UnknownHostException("example.test"),
          new IOException(
              "unexpected end of stream on http://example.test/...",
              new java.io.EOFException("\\n not found")));
    }

    @Test
    void timeoutsAndConnectionFailuresAreRetried() throws IOException {
      for (IOException e : retryableExceptions()) {
        Script s = new Script().fail(e).status(200);
        s.client(retry().build()).newCall(get()).execute().close();
        assertThat(s.attempts()).as("%s", e).isEqualTo(2);
      }
    }

    @Test
    void tlsProtocolAndUnknownFailuresAreNotRetried() {
      List<IOException> never =
          List.of(
              new SSLHandshakeException("bad cert"),
              new IOException("wrapped", new javax.net.ssl.SSLPeerUnverifiedException("pin")),
              new ProtocolException("Too many follow-up requests"),
              new java.net.UnknownServiceException("CLEARTEXT communication not enabled"),
              new IOException("something else"));
      for (IOException e : never) {
        Script s = new Script().fail(e).status(200);
        OkHttpClient c = s.client(retry().build());
        assertThatThrownBy(() -> c.newCall(get()).execute()).isSameAs(e);
        assertThat(s.attempts()).as("%s", e).isEqualTo(1);
      }
      assertThat(time.sleeps()).isEmpty();
    }

    @Test
    void aNonRetryableErrorIsThrownAtOnceWithoutWaiting() {
      ProtocolException protocol = new ProtocolException("bad status line");
      script.fail(protocol);
      assertThatThrownBy(() -> client(retry()).newCall(get()).execute()).isSameAs(protocol);
      assertThat(script.attempts()).isEqualTo(1);
      assertThat(time.sleeps()).isEmpty();
      assertThat(events.lines())
          .containsExactly("start 1", "gaveUp 1 NOT_RETRYABLE ProtocolException: bad status line");
    }
  }

  @Nested
  class Predicates {
    @Test
    void extraStatusCodesAndPredicatesExtendWhatIsRetried() throws IOException {
      script.status(502).status(500, "X-Retry", "yes").fail(new IOException("custom")).status(200);
      RetryPolicy.Builder b =
          retry()
              .retryOnStatus(502)
              .retryOnResponse(r -> "yes".equals(r.header("X-Retry")))
              .retryOnException(e -> "custom".equals(e.getMessage()));
      client(b).newCall(get()).execute().close();
      assertThat(script.attempts()).isEqualTo(4);
    }

    @Test
    void predicatesAddUpAndOneThatSaysNoTakesNothingAway() throws IOException {
      @SuppressWarnings("serial")
      class Custom extends IOException {}
      script.fail(new Custom()).status(200).status(418).status(200);
      Call.Factory client =
          client(
              quietRetry()
                  .retryOnException(e -> e instanceof Custom)
                  .retryOnResponse(r -> r.code() == 418)
                  .retryOnResponse(r -> false));
      try (Response r = client.newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      try (Response r = client.newCall(get()).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      assertThat(script.attempts()).isEqualTo(4);
    }
  }
}
