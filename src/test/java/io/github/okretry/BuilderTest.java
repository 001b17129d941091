package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad configuration fails fast, with a message naming the setting and the value. */
class BuilderTest {

  static Stream<Arguments> badSettings() {
    return Stream.of(
        bad("negative retries", () -> RetryInterceptor.builder().maxRetries(-1), "maxRetries", "-1"),
        bad("zero base delay", () -> RetryInterceptor.builder().baseDelay(Duration.ZERO), "baseDelay", "PT0S"),
        bad("negative base delay", () -> RetryInterceptor.builder().baseDelay(Duration.ofMillis(-5)), "baseDelay", "-0.005"),
        bad("overlong max delay", () -> RetryInterceptor.builder().maxDelay(Duration.ofDays(2)), "maxDelay", "PT48H"),
        bad("zero deadline", () -> RetryInterceptor.builder().deadline(Duration.ZERO), "deadline", "PT0S"),
        bad("negative max Retry-After", () -> RetryInterceptor.builder().maxRetryAfter(Duration.ofSeconds(-1)), "maxRetryAfter", "-1"),
        bad("multiplier 1", () -> RetryInterceptor.builder().multiplier(1.0), "multiplier", "1.0"),
        bad("multiplier 0.5", () -> RetryInterceptor.builder().multiplier(0.5), "multiplier", "0.5"),
        bad("multiplier NaN", () -> RetryInterceptor.builder().multiplier(Double.NaN), "multiplier", "NaN"),
        bad("multiplier infinite", () -> RetryInterceptor.builder().multiplier(Double.POSITIVE_INFINITY), "multiplier", "Infinity"),
        bad("spread above 1", () -> RetryInterceptor.builder().retryAfterSpread(1.5), "retryAfterSpread", "1.5"),
        bad("status 42", () -> RetryInterceptor.builder().retryOnStatus(42), "retryOnStatus", "42"),
        bad("header with space", () -> RetryInterceptor.builder().idempotencyKeyHeader("Idem Key"), "idempotencyKeyHeader", "Idem Key"),
        bad("empty key", () -> IdempotencyKey.of(""), "empty", ""),
        bad("key with CR LF", () -> IdempotencyKey.of("a\r\nX-Evil: 1"), "not visible ASCII", "U+000D"),
        bad("key with space", () -> IdempotencyKey.of("a b"), "not visible ASCII", "U+0020"),
        bad("key with non-ASCII", () -> IdempotencyKey.of("ключ"), "not visible ASCII", "U+043A"),
        bad("per-request negative retries", () -> RetryOverrides.builder().maxRetries(-2), "maxRetries", "-2"),
        bad("per-request overlong deadline", () -> RetryOverrides.builder().deadline(Duration.ofDays(3)), "deadline", "PT72H"));
  }

  static Arguments bad(String name, Executable setting, String field, String value) {
    return Arguments.of(Named.of(name, setting), field, value);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badSettings")
  void rejectsBadSettingsNamingThem(Executable setting, String field, String value) {
    assertThatThrownBy(setting::execute)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(field)
        .hasMessageContaining(value);
  }

  @Test
  void nullsAreRejectedWithNpe() {
    assertThatThrownBy(() -> RetryInterceptor.builder().baseDelay(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("baseDelay");
    assertThatThrownBy(() -> RetryInterceptor.builder().jitter(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().listener(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> IdempotencyKey.of(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    RetryInterceptor r = RetryInterceptor.create();
    assertThat(r.maxRetries()).isEqualTo(3);
    assertThat(r.baseDelay()).isEqualTo(Duration.ofMillis(200));
    assertThat(r.maxDelay()).isEqualTo(Duration.ofSeconds(10));
    assertThat(r.multiplier()).isEqualTo(2.0);
    assertThat(r.jitter()).isEqualTo(Jitter.FULL);
    assertThat(r.deadline()).isEmpty();
    assertThat(r.maxRetryAfter()).isEqualTo(Duration.ofSeconds(60));
    assertThat(r.retryStatuses()).containsExactly(429, 503);
    assertThat(r.idempotencyKeyHeader()).isEqualTo("Idempotency-Key");
  }

  @Test
  void maxDelayBelowBaseDelayIsAllowed() {
    RetryInterceptor r = RetryInterceptor.builder().baseDelay(Duration.ofSeconds(5)).maxDelay(Duration.ofSeconds(1)).build();
    assertThat(r.maxDelay()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void buildTakesASnapshotAndToBuilderMakesVariations() {
    RetryInterceptor.Builder builder = RetryInterceptor.builder().maxRetries(1).retryOnStatus(502);
    RetryInterceptor first = builder.build();
    builder.maxRetries(7).retryOnStatus(504);
    assertThat(first.maxRetries()).isEqualTo(1);
    assertThat(first.retryStatuses()).containsExactly(429, 502, 503);
    RetryInterceptor variation = first.toBuilder().deadline(Duration.ofSeconds(3)).build();
    assertThat(variation.maxRetries()).isEqualTo(1);
    assertThat(variation.retryStatuses()).containsExactly(429, 502, 503);
    assertThat(variation.deadline()).contains(Duration.ofSeconds(3));
    assertThat(first.deadline()).isEmpty();
  }

  @Test
  void idempotencyKeyValueTypes() {
    assertThat(IdempotencyKey.of("order-42")).isEqualTo(IdempotencyKey.of("order-42"));
    assertThat(IdempotencyKey.of("order-42").value()).isEqualTo("order-42");
    assertThat(IdempotencyKey.of("order-42").toString()).doesNotContain("order-42");
    assertThat(IdempotencyKey.generate().isGenerated()).isTrue();
    assertThat(IdempotencyKey.none().isNone()).isTrue();
    assertThat(IdempotencyKey.none().value()).isNull();
    assertThat(RetryOverrides.noRetries().maxRetries()).isEqualTo(0);
    assertThat(RetryOverrides.builder().build().deadlineNanos()).isNull();
  }
}
