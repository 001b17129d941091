package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ProtocolException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 15.6: text a server controls never reaches a listener string (nor okretry's debug lines,
 * which print the same strings) as it was sent. A malformed status line becomes part of OkHttp's
 * {@link ProtocolException} message; okretry escapes its control characters and cuts it short.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class UntrustedTextTest {

  final List<String> descriptions = new CopyOnWriteArrayList<>();

  OkHttpClient client() {
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .timeSource(new FakeTime())
                .maxRetries(1)
                .retryOnException(
                    e -> true) // so the text goes through onRetryScheduled as well as onGaveUp
                .listener(
                    new RetryListener() {
                      @Override
                      public void onRetryScheduled(
                          Request request, int attempt, String reason, long delayNanos) {
                        descriptions.add(reason);
                      }

                      @Override
                      public void onGaveUp(
                          Request request, int attempts, GiveUpReason reason, String lastFailure) {
                        descriptions.add(lastFailure);
                      }
                    })
                .build());
    return LeakCheck.track(retry.install(new OkHttpClient.Builder()).build());
  }

  /**
   * {@code text} as the raw bytes of its UTF-8 encoding, one char per byte, for {@link RawServer}.
   */
  static String utf8Bytes(String text) {
    return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
  }

  @Test
  void controlCharactersInAMalformedStatusLineAreEscaped() throws Exception {
    // ANSI colour, a bare CR that would forge a log line, a C1 CSI, a right-to-left override, a
    // NUL.
    String statusLine =
        "HTTP/1.1 200\u001b[31m OK\rINFO forged: payment approved\u009b2J\u202Etxt.exe\u0000";
    try (RawServer server = new RawServer(RawServer.after(0, utf8Bytes(statusLine + "\r\n\r\n")))) {
      assertThatThrownBy(
              () -> client().newCall(new Request.Builder().url(server.url()).build()).execute())
          .isInstanceOf(ProtocolException.class);
    }
    assertThat(descriptions)
        .hasSize(2)
        .allSatisfy(
            d -> {
              assertThat(d).startsWith("ProtocolException: Unexpected status line: HTTP/1.1 200");
              assertThat(controlCharacters(d)).isEmpty();
              assertThat(d)
                  .contains(
                      "\\u001b[31m OK\\r"
                          + "INFO forged: payment approved\\u009b2J\\u202etxt.exe\\u0000");
            });
  }

  @Test
  void aHugeMessageIsCutShort() throws Exception {
    String statusLine = "HTTP/1.1 200x" + "A".repeat(100_000);
    try (RawServer server = new RawServer(RawServer.after(0, statusLine + "\r\n\r\n"))) {
      assertThatThrownBy(
              () -> client().newCall(new Request.Builder().url(server.url()).build()).execute())
          .isInstanceOf(ProtocolException.class);
    }
    assertThat(descriptions)
        .hasSize(2)
        .allSatisfy(
            d -> {
              assertThat(d.length()).isLessThanOrEqualTo(300);
              assertThat(d).endsWith("more chars)");
            });
  }

  /** Every C0, DEL, C1 and bidirectional control in {@code s}, as code points. */
  static List<Integer> controlCharacters(String s) {
    List<Integer> found = new ArrayList<>();
    s.codePoints()
        .forEach(
            c -> {
              if (c < 0x20
                  || (c >= 0x7f && c <= 0x9f)
                  || (c >= 0x202a && c <= 0x202e)
                  || (c >= 0x2066 && c <= 0x2069)) {
                found.add(c);
              }
            });
    return found;
  }
}
