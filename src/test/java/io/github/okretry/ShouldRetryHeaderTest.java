package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A server's {@code X-Should-Retry} on both drivers: obeyed by default ({@code false} ends the call
 * with its response, {@code SERVER_SAID_NO_RETRY}; {@code true} retries an error status that is
 * otherwise returned, only where repeating is safe and within retries and deadline); a repeated,
 * blank or other value ignored as if absent; {@code obeyShouldRetryHeader(false)} ignores it.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class ShouldRetryHeaderTest extends ScriptedTest {

  ShouldRetryHeaderTest(Driver driver) {
    this.driver = driver;
  }

  /** The response {@code request} ends with, closed, and its outcome. */
  static RetryOutcome outcome(Call.Factory client, Request request) throws IOException {
    try (Response r = client.newCall(request).execute()) {
      return RetryOutcome.of(r);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"false", "FALSE", "False"})
  void falseEndsARetryableResponseAtOnce(String value) throws IOException {
    script.status(503, "X-Should-Retry", value).thenAlways(200);
    RetryOutcome o = outcome(client(quietRetry()), get());
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(o.giveUpReason()).isEqualTo(GiveUpReason.SERVER_SAID_NO_RETRY);
    assertThat(o.attempts()).isEqualTo(1);
  }

  @Test
  void falseIsReportedAsTheReasonToGiveUp() throws IOException {
    script.status(429, "X-Should-Retry", "false").thenAlways(200);
    assertThat(code(client(retry()), get())).isEqualTo(429);
    assertThat(events.lines()).containsExactly("start 1", "gaveUp 1 SERVER_SAID_NO_RETRY HTTP 429");
  }

  @Test
  void falseOnAResponseThatEndsTheCallAnywayIsAPlainReturn() throws IOException {
    script.status(404, "X-Should-Retry", "false");
    RetryOutcome o = outcome(client(quietRetry()), get());
    assertThat(o.giveUpReason()).isNull();
    assertThat(script.attempts()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(ints = {500, 409, 502, 400})
  void trueRetriesAnErrorStatusThatIsOtherwiseReturned(int code) throws IOException {
    script.status(code, "X-Should-Retry", "true").status(200);
    assertThat(code(client(quietRetry()), get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(2);
  }

  @Test
  void trueIsCaseInsensitive() throws IOException {
    script.status(500, "X-Should-Retry", "True").status(200);
    assertThat(code(client(retry()), get())).isEqualTo(200);
    assertThat(events.lines())
        .containsExactly("start 1", "retry 1 HTTP 500", "start 2", "succeeded 2 HTTP 200");
  }

  @Test
  void trueNeverRetriesASuccess() throws IOException {
    script.status(200, "X-Should-Retry", "true").thenAlways(200);
    assertThat(code(client(quietRetry()), get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void trueOnAKeylessPost500DoesNotRetry() throws IOException {
    script.status(500, "X-Should-Retry", "true").thenAlways(200);
    Request keyless = post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    RetryOutcome o = outcome(client(quietRetry()), keyless);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(o.giveUpReason()).isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT);
  }

  @Test
  void trueOnAKeyedPost500Retries() throws IOException {
    script.status(500, "X-Should-Retry", "true").status(200);
    assertThat(code(client(quietRetry()), post())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(2);
    assertThat(script.requests().get(1).header("Idempotency-Key")).isEqualTo("k1");
  }

  @Test
  void trueStaysWithinTheRetries() throws IOException {
    script.thenAlways(Script.response(500, Headers.of("X-Should-Retry", "true")));
    RetryOutcome o = outcome(client(quietRetry().maxRetries(2)), get());
    assertThat(script.attempts()).isEqualTo(3);
    assertThat(o.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
  }

  @Test
  void trueStaysWithinTheDeadline() throws IOException {
    script.thenAlways(Script.response(500, Headers.of("X-Should-Retry", "true")));
    RetryPolicy.Builder policy =
        quietRetry().jitter(Jitter.NONE).deadline(100, TimeUnit.MILLISECONDS);
    RetryOutcome o = outcome(client(policy), get());
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(o.giveUpReason()).isEqualTo(GiveUpReason.DEADLINE_EXCEEDED);
    assertThat(time.sleeps()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "yes", "1", "no", "0", "true, false", "truee", "\"true\""})
  void anyOtherValueIsIgnoredAsIfAbsent(String value) throws IOException {
    script.status(500, "X-Should-Retry", value).status(503, "X-Should-Retry", value).status(200);
    Call.Factory client = client(quietRetry());
    assertThat(code(client, get())).as("a 500 returned").isEqualTo(500);
    assertThat(code(client, get())).as("a 503 retried").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(3);
  }

  @Test
  void absentChangesNothing() throws IOException {
    script.status(500).status(503).status(200);
    Call.Factory client = client(quietRetry());
    assertThat(code(client, get())).isEqualTo(500);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(3);
  }

  @Test
  void aRepeatedHeaderIsIgnored() throws IOException {
    script
        .status(500, "X-Should-Retry", "true", "X-Should-Retry", "true")
        .status(503, "X-Should-Retry", "false", "x-should-retry", "false")
        .status(200);
    Call.Factory client = client(quietRetry());
    assertThat(code(client, get())).as("a 500 returned").isEqualTo(500);
    assertThat(code(client, get())).as("a 503 retried").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(3);
  }

  @Test
  void turnedOffTheHeaderIsIgnored() throws IOException {
    script.status(500, "X-Should-Retry", "true").status(503, "X-Should-Retry", "false").status(200);
    Call.Factory client = client(quietRetry().obeyShouldRetryHeader(false));
    assertThat(code(client, get())).as("a 500 returned").isEqualTo(500);
    assertThat(code(client, get())).as("a 503 retried").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(3);
  }
}
