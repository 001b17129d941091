package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 36 item 4, on fake time and both drivers: a send no quota pacer counts is counted in flight
 * by its origin's gate until it ends, however it ends (so a quota first heard of counts it), and is
 * let go then: calls made one after another leave nothing counted, and a quota they then learn is
 * not spent by sends long over. (A crowd: {@link GitHubCrowdTest}.)
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class UncountedSendsTest extends ScriptedTest {

  UncountedSendsTest(Driver driver) {
    this.driver = driver;
  }

  /** A quota of 20 a second, 5 left: spent if 5 or more sends are still counted in flight. */
  static final String[] QUOTA = {
    "RateLimit-Policy", "\"default\";q=20;w=1", "RateLimit", "\"default\";r=5;t=1"
  };

  static Request get(String path) {
    return new Request.Builder().url("http://fresh.test" + path).build();
  }

  @Test
  void callsWhoseResponsePredicateThrowsGiveTheirPlaceBack() throws IOException {
    script.thenAlways(Script.response(200, okhttp3.Headers.of(QUOTA)));
    Call.Factory calls =
        client(
            quietRetry()
                .retryOnResponse(
                    r -> {
                      if (r.request().url().encodedPath().equals("/boom")) {
                        throw new IllegalStateException("boom");
                      }
                      return false;
                    }));
    for (int i = 0; i < 12; i++) {
      assertThatThrownBy(() -> calls.newCall(get("/boom")).execute())
          .isInstanceOf(IOException.class)
          .hasMessageContaining("retryOnResponse predicate threw");
    }
    for (int i = 0; i < 2; i++) {
      try (Response r = calls.newCall(get("/ok")).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
    }
    assertThat(time.sleeps()).as("5 of 20 left, none in flight: not held").isEmpty();
    assertThat(script.attempts()).isEqualTo(14);
  }

  @Test
  void callsThatFailWithoutAnAnswerGiveTheirPlaceBack() throws IOException {
    script
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .fail(new IOException("reset"))
        .thenAlways(Script.response(200, okhttp3.Headers.of(QUOTA)));
    Call.Factory calls = client(quietRetry().maxRetries(0));
    for (int i = 0; i < 11; i++) {
      assertThatThrownBy(() -> calls.newCall(get("/")).execute()).isInstanceOf(IOException.class);
    }
    for (int i = 0; i < 2; i++) {
      try (Response r = calls.newCall(get("/")).execute()) {
        assertThat(r.code()).isEqualTo(200);
      }
    }
    assertThat(time.sleeps()).as("5 of 20 left, none in flight: not held").isEmpty();
  }
}
