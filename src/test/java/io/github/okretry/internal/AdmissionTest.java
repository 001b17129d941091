package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Admission}, the decision before an attempt: its three kinds as values, and the local
 * response a throttled call gets (docs/semantics.md, "Origin gate"). Through a call: {@code
 * OriginWideRetryAfterTest}, {@code PacingHooksTest}.
 */
@Tag("unit")
class AdmissionTest {
  static final long S = 1_000_000_000L;

  @Test
  void onlyAThrottledAdmissionCarriesTheOriginsStatus() {
    assertThat(Admission.throttled(429, 5 * S).code()).isEqualTo(429);
    assertThat(Admission.throttled(429, 5 * S).waitNanos()).isEqualTo(5 * S);
    assertThat(Admission.waitFor(5 * S).code()).isZero();
    assertThat(Admission.go().code()).isZero();
  }

  @Test
  void admissionsAreValues() {
    assertThat(Admission.go()).isEqualTo(Admission.go()).isNotEqualTo(Admission.waitFor(0)).isNotEqualTo("GO");
    assertThat(Admission.waitFor(7)).isEqualTo(Admission.waitFor(7)).hasSameHashCodeAs(Admission.waitFor(7))
        .isNotEqualTo(Admission.waitFor(8));
    assertThat(Admission.throttled(503, 7)).isEqualTo(Admission.throttled(503, 7))
        .isNotEqualTo(Admission.throttled(429, 7)).isNotEqualTo(Admission.throttled(503, 8))
        .isNotEqualTo(Admission.waitFor(7));
  }

  @Test
  void theLocalResponseStandsForTheOriginsAnswer() throws IOException {
    Request request = new Request.Builder().url("https://a.test/x").build();
    try (Response r = Admission.throttled(503, 1_500_000_001L).localResponse(request, 1_234L)) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.protocol()).isEqualTo(Protocol.HTTP_1_1);
      assertThat(r.message()).isEqualTo("Throttled locally by okretry: origin asked to wait");
      assertThat(r.header("Retry-After")).as("whole seconds, rounded up").isEqualTo("2");
      assertThat(r.request()).isSameAs(request);
      assertThat(r.body().string()).isEmpty();
      assertThat(r.sentRequestAtMillis()).isEqualTo(1_234L);
      assertThat(r.receivedResponseAtMillis()).isEqualTo(1_234L);
    }
    try (Response exact = Admission.throttled(429, 3 * S).localResponse(request, 0)) {
      assertThat(exact.header("Retry-After")).isEqualTo("3");
    }
  }
}
