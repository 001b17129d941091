package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The attempt number sent to the server ({@link RetryPolicy.Builder#attemptHeader}), on both
 * drivers: off by default; when named, {@code attempt=N; max=M} on every attempt, N from 1, M the
 * most attempts the call may make after a per-request override.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class AttemptHeaderTest extends ScriptedTest {

  AttemptHeaderTest(Driver driver) {
    this.driver = driver;
  }

  @Test
  void offByDefault() throws IOException {
    script.status(503).status(200);
    assertThat(code(client(quietRetry()), get())).isEqualTo(200);
    assertThat(script.requests()).allSatisfy(r -> assertThat(r.header("amz-sdk-request")).isNull());
  }

  @Test
  void everyAttemptCarriesItsNumberAndTheMost() throws IOException {
    script.status(503).status(503).status(200);
    assertThat(code(client(quietRetry().attemptHeader("amz-sdk-request")), get())).isEqualTo(200);
    assertThat(script.requests())
        .extracting(r -> r.header("amz-sdk-request"))
        .containsExactly("attempt=1; max=4", "attempt=2; max=4", "attempt=3; max=4");
  }

  @Test
  void theMostAttemptsFollowAPerRequestOverride() throws IOException {
    script.status(503).status(503).status(200);
    Request request =
        get()
            .newBuilder()
            .tag(RetryOverrides.class, RetryOverrides.builder().maxRetries(1).build())
            .build();
    assertThat(code(client(quietRetry().maxRetries(5).attemptHeader("Retry-Attempt")), request))
        .isEqualTo(503);
    assertThat(script.requests())
        .extracting(r -> r.header("Retry-Attempt"))
        .containsExactly("attempt=1; max=2", "attempt=2; max=2");
  }

  @Test
  void aKeyedPostIsNumberedBesideItsKey() throws IOException {
    script.status(503).status(200);
    Request post = get().newBuilder().post(RequestBody.create(new byte[] {1})).build();
    assertThat(code(client(quietRetry().attemptHeader("amz-sdk-request")), post)).isEqualTo(200);
    assertThat(script.requests())
        .extracting(r -> r.header("amz-sdk-request") + " " + r.header("Idempotency-Key"))
        .containsExactly("attempt=1; max=4 k1", "attempt=2; max=4 k1");
  }

  @Test
  void aSuccessAtOnceIsNumberedToo() throws IOException {
    script.status(200);
    assertThat(code(client(quietRetry().maxRetries(0).attemptHeader("amz-sdk-request")), get()))
        .isEqualTo(200);
    assertThat(script.requests().get(0).header("amz-sdk-request")).isEqualTo("attempt=1; max=1");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "amz sdk", "a:b", "attempt\n"})
  void aNameThatIsNotATokenIsRejected(String name) {
    assertRejectedNaming(() -> RetryPolicy.builder().attemptHeader(name), "attemptHeader", name);
  }

  @Test
  void nullIsRejected() {
    assertThatThrownBy(() -> RetryPolicy.builder().attemptHeader(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("attemptHeader");
  }
}
