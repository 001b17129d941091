package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The origin-wide {@code Retry-After} ({@code originWideRetryAfter(true)}) on both drivers, on fake
 * time. Real sockets, real redirects and many callers: {@link OriginWideRetryAfterTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class ThrottledOriginTest extends ScriptedTest {

  ThrottledOriginTest(Driver driver) {
    this.driver = driver;
  }

  static Request at(String url) {
    return new Request.Builder().url(url).build();
  }

  /**
   * Issue 15.2: A answered 302 to B (followed below okretry, so the response's request is B's), and
   * B 503 with {@code Retry-After: 30}. The origin closed is B, the one that answered, not A.
   */
  @Test
  void afterARedirectTheOriginThatAnsweredIsClosed() throws IOException {
    script
        .then(
            (chain, attempt) ->
                new Response.Builder()
                    .request(at("http://b.test/moved"))
                    .protocol(Protocol.HTTP_1_1)
                    .code(503)
                    .message("Unavailable")
                    .header("Retry-After", "30")
                    .body(new Script.TrackingBody("b"))
                    .build())
        .thenAlways(200);
    Call.Factory client =
        client(retry().originWideRetryAfter(true).deadline(Duration.ofSeconds(5)));
    try (Response r = client.newCall(at("http://a.test/start")).execute()) {
      assertThat(r.code()).as("30 s does not fit 5 s: returned at once").isEqualTo(503);
      assertThat(r.request().url().host()).isEqualTo("b.test");
    }
    assertThat(code(client, at("http://a.test/again"))).as("A asked no one to wait").isEqualTo(200);
    assertThat(script.attempts()).isEqualTo(2);
    try (Response r = client.newCall(at("http://b.test/direct")).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.message()).contains("okretry");
    }
    assertThat(script.attempts()).as("B hears nothing more").isEqualTo(2);
    assertThat(time.sleeps()).isEmpty();
  }
}
