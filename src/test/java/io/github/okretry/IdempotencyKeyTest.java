package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import okhttp3.Call;
import okhttp3.Request;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Idempotency keys: which requests get one, one key per logical call reused on every attempt, the
 * caller's key (tag or header) never replaced, a blank header counted as no key, the header name
 * and quoting, and the {@link IdempotencyKey} value type. With real sockets: {@link
 * IdempotencyKeyIntegrationTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class IdempotencyKeyTest extends ScriptedTest {

  IdempotencyKeyTest(Driver driver) {
    this.driver = driver;
  }

  static Request tagged(Request request, IdempotencyKey key) {
    return request.newBuilder().tag(IdempotencyKey.class, key).build();
  }

  @Nested
  class WhichRequestsGetAKey {
    @Test
    void nonIdempotentMethodsAndRequestsAskingForOneGetAKeyAndTheCallersKeyWins()
        throws IOException {
      script.thenAlways(200);
      Call.Factory client = client(quietRetry());
      code(client, post());
      code(client, request("PATCH"));
      code(client, request("PUT"));
      code(client, get());
      code(client, tagged(get(), IdempotencyKey.generate()));
      code(client, tagged(post(), IdempotencyKey.of("mine")));
      code(
          client,
          tagged(
              post().newBuilder().header("Idempotency-Key", "header-wins").build(),
              IdempotencyKey.of("tag")));
      code(client, tagged(post(), IdempotencyKey.none()));
      assertThat(script.requests())
          .extracting(r -> r.header("Idempotency-Key"))
          .containsExactly("k1", "k1", null, null, "k1", "mine", "header-wins", null);
    }

    @Test
    void generationCanBeTurnedOff() throws IOException {
      script.status(200);
      code(client(quietRetry().generateIdempotencyKeys(false)), post());
      assertThat(script.requests().get(0).header("Idempotency-Key")).isNull();
    }

    @Test
    void headerNameAndQuotingAreConfigurable() throws IOException {
      script.status(200);
      RetryPolicy.Builder b =
          retry()
              .idempotencyKeyHeader("X-Request-Key")
              .quoteIdempotencyKey(true)
              .keyGenerator(() -> "k1");
      client(b).newCall(tagged(get(), IdempotencyKey.generate())).execute().close();
      assertThat(script.requests().get(0).header("X-Request-Key")).isEqualTo("\"k1\"");
      assertThat(script.requests().get(0).header("Idempotency-Key")).isNull();

      Script quoted = new Script().status(200);
      code(
          quoted.client(
              quietRetry()
                  .keyGenerator(() -> "a\"b\\c")
                  .quoteIdempotencyKey(true)
                  .idempotencyKeyHeader("X-Key")
                  .build()),
          post());
      assertThat(quoted.requests().get(0).header("X-Key"))
          .as("quotes and backslashes escaped")
          .isEqualTo("\"a\\\"b\\\\c\"");
      assertThat(IdempotencyKeys.structuredFieldString("k"))
          .as("a one-character key")
          .isEqualTo("\"k\"");
    }
  }

  @Nested
  class OneKeyPerCall {
    @Test
    void aPostGetsOneGeneratedKeyReusedOnEveryAttempt() throws IOException {
      AtomicInteger generated = new AtomicInteger();
      script.status(503).fail(new SocketTimeoutException("timeout")).status(200);
      client(retry().keyGenerator(() -> "key-" + generated.incrementAndGet()))
          .newCall(post())
          .execute()
          .close();
      assertThat(script.requests())
          .extracting(r -> r.header("Idempotency-Key"))
          .containsExactly("key-1", "key-1", "key-1");
      assertThat(generated).hasValue(1);
    }

    @Test
    void theCallersTagAndHeaderAreUsedOnEveryAttemptAndNeverReplaced() throws IOException {
      script.status(503).status(200).status(200);
      Call.Factory c = client(retry());
      c.newCall(tagged(post(), IdempotencyKey.of("order-42"))).execute().close();
      c.newCall(
              tagged(
                  post().newBuilder().header("Idempotency-Key", "mine").build(),
                  IdempotencyKey.of("tag")))
          .execute()
          .close();
      assertThat(script.requests())
          .extracting(r -> r.header("Idempotency-Key"))
          .containsExactly("order-42", "order-42", "mine");
    }
  }

  /** A blank header (a missing value that app code filled with "") is no key; it is left as set. */
  @Nested
  class BlankKeys {
    @ParameterizedTest(name = "[{0}] blank: {1}")
    @CsvSource(
        delimiter = '|',
        value = {
          "''         | true",
          "' '        | true",
          "'\t \t'    | true",
          "'\"\"'     | true",
          "'\" \t\"'  | true",
          "' \"\" '   | true",
          "'\"'       | false",
          "'a'        | false",
          "' a '      | false",
          "'\"a\"'    | false",
          "'\"\"\"\"' | false",
        })
    void blankKeys(String value, boolean blank) {
      assertThat(IdempotencyKeys.isBlank(value)).isEqualTo(blank);
    }

    @Test
    void aBlankHeaderIsNoKeyAndIsLeftAsTheCallerSetIt() {
      IdempotencyKeys keys = new IdempotencyKeys("Idempotency-Key", false, true, () -> "generated");
      Request blank =
          new Request.Builder()
              .url("http://example.test/")
              .header("Idempotency-Key", "")
              .post(okhttp3.RequestBody.create(new byte[0]))
              .build();
      assertThat(keys.hasKey(blank)).isFalse();
      assertThat(keys.stamp(blank)).isSameAs(blank);
      Request keyed = blank.newBuilder().header("Idempotency-Key", "k").build();
      assertThat(keys.hasKey(keyed)).isTrue();
      assertThat(
              keys.hasKey(keys.stamp(blank.newBuilder().removeHeader("Idempotency-Key").build())))
          .isTrue();
    }
  }

  @Nested
  class Values {
    @Test
    void ofGenerateAndNone() {
      assertThat(IdempotencyKey.of("a").hashCode()).isNotEqualTo(IdempotencyKey.of("b").hashCode());
      assertThat(IdempotencyKey.of("k"))
          .isEqualTo(IdempotencyKey.of("k"))
          .hasSameHashCodeAs(IdempotencyKey.of("k"))
          .isNotEqualTo(IdempotencyKey.of("j"))
          .isNotEqualTo(IdempotencyKey.generate())
          .isNotEqualTo("k");
      assertThat(IdempotencyKey.none().equals(IdempotencyKey.none())).isTrue();
      assertThat(IdempotencyKey.generate().equals(IdempotencyKey.generate())).isTrue();
      assertThat(IdempotencyKey.none().equals(IdempotencyKey.generate())).isFalse();
      assertThat(IdempotencyKey.none().equals(IdempotencyKey.of("k"))).isFalse();
      assertThat(IdempotencyKey.of("secret").toString()).doesNotContain("secret");
      assertThat(IdempotencyKey.none()).hasToString("IdempotencyKey.none()");
      assertThat(IdempotencyKey.generate()).hasToString("IdempotencyKey.generate()");
      assertThat(IdempotencyKey.none().generate).isFalse();
      assertThat(IdempotencyKey.generate().generate).isTrue();
      assertThat(IdempotencyKey.of("k").generate).isFalse();
      assertThat(IdempotencyKey.generate().value).isNull();
      assertThat(IdempotencyKey.of("k").value).isEqualTo("k");
      assertThat(IdempotencyKey.none().value).isNull();
      assertThat(IdempotencyKey.of("!~")).isNotNull();
      assertThatThrownBy(() -> IdempotencyKey.of("a b"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("index 1: U+0020");
      assertThatThrownBy(() -> IdempotencyKey.of("a\u007f"))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> IdempotencyKey.of(null)).isInstanceOf(NullPointerException.class);
    }

    static Stream<Arguments> badKeys() {
      return Stream.of(
          bad("empty key", () -> IdempotencyKey.of(""), "empty", ""),
          bad(
              "key with CR LF",
              () -> IdempotencyKey.of("a\r\nX-Evil: 1"),
              "not visible ASCII",
              "U+000D"),
          bad("key with space", () -> IdempotencyKey.of("a b"), "not visible ASCII", "U+0020"),
          bad(
              "key with non-ASCII",
              () -> IdempotencyKey.of("ключ"),
              "not visible ASCII",
              "U+043A"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badKeys")
    void badKeysAreRejectedNamingTheCharacter(Executable key, String problem, String character) {
      assertRejectedNaming(key, problem, character);
    }
  }
}
