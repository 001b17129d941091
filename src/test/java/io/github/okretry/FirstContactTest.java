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
 * Issue 36 item 4's first contact, on fake time and both drivers: a call's place among the sends
 * an origin that never answered may have in flight is given back however the call ends, so
 * calls made one after another never wait for a first answer. (A crowd held for one:
 * {@link GitHubCrowdTest}, {@code GitHubLimitsTest}.)
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class FirstContactTest extends ScriptedTest {

  FirstContactTest(Driver driver) {
    this.driver = driver;
  }

  static Request get(String path) {
    return new Request.Builder().url("http://fresh.test" + path).build();
  }

  @Test
  void callsWhoseResponsePredicateThrowsGiveTheirPlaceBack() throws IOException {
    script.thenAlways(200);
    Call.Factory calls = client(quietRetry().retryOnResponse(r -> {
      if (r.request().url().encodedPath().equals("/boom")) throw new IllegalStateException("boom");
      return false;
    }));
    for (int i = 0; i < 12; i++) {
      assertThatThrownBy(() -> calls.newCall(get("/boom")).execute()).isInstanceOf(IOException.class)
          .hasMessageContaining("retryOnResponse predicate threw");
    }
    try (Response r = calls.newCall(get("/ok")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).as("nothing held: one call at a time").isEmpty();
    assertThat(script.attempts()).isEqualTo(13);
  }

  @Test
  void callsThatFailWithoutAnAnswerGiveTheirPlaceBack() throws IOException {
    script.fail(new IOException("reset")).fail(new IOException("reset")).fail(new IOException("reset"))
        .fail(new IOException("reset")).fail(new IOException("reset")).fail(new IOException("reset"))
        .fail(new IOException("reset")).fail(new IOException("reset")).fail(new IOException("reset"))
        .fail(new IOException("reset")).fail(new IOException("reset")).thenAlways(200);
    Call.Factory calls = client(quietRetry().maxRetries(0));
    for (int i = 0; i < 11; i++) {
      assertThatThrownBy(() -> calls.newCall(get("/")).execute()).isInstanceOf(IOException.class);
    }
    try (Response r = calls.newCall(get("/")).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(time.sleeps()).as("nothing held: one call at a time").isEmpty();
  }
}
