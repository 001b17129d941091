package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A retryable failure is repeated only when repeating has no extra effect: an idempotent method, an
 * idempotency key, or proof that the server did not process the request (a 429 or 503, a refused
 * connection, a failure before the request was sent). One-shot and duplex bodies are never
 * repeated. With real sockets: {@link SafeToRepeatIntegrationTest}; keys: {@link
 * IdempotencyKeyTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class SafeToRepeatTest extends ScriptedTest {

  SafeToRepeatTest(Driver driver) {
    this.driver = driver;
  }

  static Request keyless() {
    return post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.none()).build();
  }

  @Nested
  class Methods {
    @ParameterizedTest(name = "{0} is retried after a timeout")
    @ValueSource(strings = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
    void idempotentMethodsAreRetriedAfterATimeout(String method) throws IOException {
      script.fail(new SocketTimeoutException("timeout")).status(200);
      RequestBody body = method.equals("PUT") ? RequestBody.create("x", null) : null;
      Request request =
          new Request.Builder().url("http://example.test/").method(method, body).build();
      client(retry()).newCall(request).execute().close();
      assertThat(script.attempts()).isEqualTo(2);
    }

    /**
     * Issue 43: QUERY (RFC 10008, June 2026) is safe and idempotent, a GET whose query is in its
     * body: repeated after a response that may have been processed, as a GET is, and without a key.
     */
    @Test
    void aQueryIsRepeatedLikeAGetWithoutAKey() throws IOException {
      script.status(502).status(200);
      Request query =
          new Request.Builder()
              .url("http://example.test/search")
              .method("QUERY", RequestBody.create("q=okretry", MediaType.get("text/plain")))
              .build();
      try (Response r = client(retry().retryOnStatus(502)).newCall(query).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
      assertThat(script.attempts()).isEqualTo(2);
      assertThat(script.requests())
          .allSatisfy(r -> assertThat(r.header("Idempotency-Key")).isNull());
    }
  }

  @Nested
  class KeylessPosts {
    @Test
    void retriedWhenTheFailureProvesTheServerDidNotProcessIt() throws IOException {
      script.status(503).status(429).fail(new ConnectException("refused")).status(200);
      client(retry()).newCall(keyless()).execute().close();
      assertThat(script.attempts()).isEqualTo(4);
    }

    @Test
    void notRetriedOnAnExtraStatusWhichProvesNothing() throws IOException {
      script.status(502).status(200);
      try (Response r = client(retry().retryOnStatus(502)).newCall(keyless()).execute()) {
        assertThat(r.code()).isEqualTo(502);
      }
      assertThat(script.attempts()).isEqualTo(1);
    }

    @Test
    void withKeyGenerationOffRetriedOnlyOnProofButWithAKeyOnAnyRetryableStatus()
        throws IOException {
      script.status(500).status(503).status(200);
      Call.Factory client = client(quietRetry().retryOnStatus(500).generateIdempotencyKeys(false));
      assertThat(code(client, post())).isEqualTo(500); // 500 proves nothing
      assertThat(code(client, post())).isEqualTo(200); // 503 does
      assertThat(script.attempts()).isEqualTo(3);
      Script keyed = new Script().status(500).status(200);
      assertThat(code(keyed.client(quietRetry().retryOnStatus(500).build()), post()))
          .isEqualTo(200);
    }

    /**
     * A failure before any byte was written (here: a later application interceptor, say one that
     * fetches an auth token, throws) proves the server saw nothing, so even a keyless POST is
     * retried.
     */
    @Test
    void retriedWhenNothingWasSent() throws Exception {
      script.fail(new SocketTimeoutException("token service timed out")).status(200);
      assertThat(code(client(quietRetry().generateIdempotencyKeys(false)), post())).isEqualTo(200);
      assertThat(script.attempts()).isEqualTo(2);
      Script once =
          new Script().fail(new SocketTimeoutException("token service timed out")).status(200);
      OkHttpClient noRetries =
          once.client(quietRetry().generateIdempotencyKeys(false).maxRetries(0).build());
      assertThatThrownBy(() -> noRetries.newCall(post()).execute())
          .isInstanceOf(SocketTimeoutException.class);
    }
  }

  @Nested
  class Bodies {
    @Test
    void duplexBodiesAndOneShotBodiesNotKeptAreNeverRepeated() throws IOException {
      for (boolean duplex : new boolean[] {false, true}) {
        Script s = new Script().status(503).status(200);
        // A one-shot body is repeated only from what okretry kept of it (ReplayBufferTest): none
        OkHttpClient c = s.client(retry().replayBuffer(0, 0).build());
        Request request =
            new Request.Builder()
                .url("http://example.test/")
                .put(new OneShotBody(!duplex, duplex))
                .build();
        try (Response r = c.newCall(request).execute()) {
          assertThat(r.code()).isEqualTo(503);
        }
        assertThat(s.attempts()).isEqualTo(1);
      }
    }
  }

  static final class OneShotBody extends RequestBody {
    private final boolean oneShot;
    private final boolean duplex;

    OneShotBody(boolean oneShot, boolean duplex) {
      this.oneShot = oneShot;
      this.duplex = duplex;
    }

    @Override
    public MediaType contentType() {
      return null;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      sink.writeUtf8("x");
    }

    @Override
    public boolean isOneShot() {
      return oneShot;
    }

    @Override
    public boolean isDuplex() {
      return duplex;
    }
  }
}
