package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import okhttp3.MediaType;
import okhttp3.RequestBody;
import okio.BufferedSink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link RepeatSafety}: when a request may be sent again. */
@Tag("unit")
class RepeatSafetyTest {

  @ParameterizedTest
  @ValueSource(strings = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "QUERY"})
  void idempotentMethods(String method) {
    assertThat(RepeatSafety.idempotent(method, false)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"POST", "PATCH", "get", "CONNECT"})
  void otherMethodsOnlyWithAKey(String method) {
    assertThat(RepeatSafety.idempotent(method, false)).isFalse();
    assertThat(RepeatSafety.idempotent(method, true)).isTrue();
  }

  static RequestBody body(boolean oneShot, boolean duplex) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return null;
      }

      @Override
      public void writeTo(BufferedSink sink) {}

      @Override
      public boolean isOneShot() {
        return oneShot;
      }

      @Override
      public boolean isDuplex() {
        return duplex;
      }
    };
  }

  @Test
  void aBodyIsRepeatableUnlessOneShotOrDuplex() {
    assertThat(RepeatSafety.repeatableBody(null)).isTrue();
    assertThat(RepeatSafety.repeatableBody(body(false, false))).isTrue();
    assertThat(RepeatSafety.repeatableBody(body(true, false))).isFalse();
    assertThat(RepeatSafety.repeatableBody(body(false, true))).isFalse();
  }

  static final RequestBody ONE_SHOT = body(true, false);

  @Test
  void safeToRepeatNeedsARepeatableBodyAndIdempotenceOrProofOfNoProcessing() {
    boolean provenUnprocessed = true;
    assertThat(RepeatSafety.of("GET", false, null).safeToRepeat(!provenUnprocessed)).isTrue();
    assertThat(RepeatSafety.of("POST", false, null).safeToRepeat(provenUnprocessed)).isTrue();
    assertThat(RepeatSafety.of("POST", false, null).safeToRepeat(!provenUnprocessed)).isFalse();
    assertThat(RepeatSafety.of("POST", true, null).safeToRepeat(!provenUnprocessed))
        .as("a key")
        .isTrue();
    assertThat(RepeatSafety.of("PUT", false, ONE_SHOT).safeToRepeat(provenUnprocessed)).isFalse();
  }

  @Test
  void sendProofIsNeededOnlyWhereAFailureCouldBeRetriedOnIt() {
    assertThat(RepeatSafety.of("POST", false, null).needsSendProof(3)).isTrue();
    assertThat(RepeatSafety.of("POST", true, null).needsSendProof(3))
        .as("idempotent anyway")
        .isFalse();
    assertThat(RepeatSafety.of("POST", false, ONE_SHOT).needsSendProof(3))
        .as("cannot repeat anyway")
        .isFalse();
    assertThat(RepeatSafety.of("POST", false, null).needsSendProof(0)).as("no retries").isFalse();
  }

  @Test
  void theFourKindsAreSharedValues() {
    assertThat(RepeatSafety.of("GET", false, null))
        .isSameAs(RepeatSafety.of("PUT", false, body(false, false)))
        .hasToString("RepeatSafety{idempotent, repeatable body}");
    assertThat(RepeatSafety.of("POST", false, ONE_SHOT).isIdempotent()).isFalse();
    assertThat(RepeatSafety.of("POST", true, ONE_SHOT).isIdempotent()).as("a key").isTrue();
    assertThat(RepeatSafety.of("POST", true, ONE_SHOT))
        .hasToString("RepeatSafety{idempotent, one-shot body}")
        .isNotSameAs(RepeatSafety.of("POST", false, ONE_SHOT));
  }
}
