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
  @ValueSource(strings = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
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
      @Override public MediaType contentType() { return null; }
      @Override public void writeTo(BufferedSink sink) {}
      @Override public boolean isOneShot() { return oneShot; }
      @Override public boolean isDuplex() { return duplex; }
    };
  }

  @Test
  void aBodyIsRepeatableUnlessOneShotOrDuplex() {
    assertThat(RepeatSafety.repeatableBody(null)).isTrue();
    assertThat(RepeatSafety.repeatableBody(body(false, false))).isTrue();
    assertThat(RepeatSafety.repeatableBody(body(true, false))).isFalse();
    assertThat(RepeatSafety.repeatableBody(body(false, true))).isFalse();
  }

  @Test
  void safeToRepeatNeedsARepeatableBodyAndIdempotenceOrProofOfNoProcessing() {
    assertThat(RepeatSafety.safeToRepeat(true, true, false)).isTrue();
    assertThat(RepeatSafety.safeToRepeat(true, false, true)).isTrue();
    assertThat(RepeatSafety.safeToRepeat(true, false, false)).isFalse();
    assertThat(RepeatSafety.safeToRepeat(false, true, true)).isFalse();
  }

  @Test
  void sendProofIsNeededOnlyWhereAFailureCouldBeRetriedOnIt() {
    assertThat(RepeatSafety.needsSendProof(true, false, 3)).isTrue();
    assertThat(RepeatSafety.needsSendProof(true, true, 3)).as("idempotent anyway").isFalse();
    assertThat(RepeatSafety.needsSendProof(false, false, 3)).as("cannot repeat anyway").isFalse();
    assertThat(RepeatSafety.needsSendProof(true, false, 0)).as("no retries").isFalse();
  }
}
