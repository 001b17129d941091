package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.ReplayBufferIntegrationTest.RealDriver;
import io.github.okretry.ReplayBufferIntegrationTest.Sender;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One-shot bodies over sockets, both drivers: a body that closes its stream, as plain OkHttp
 * allows, is sent; a replayed stream says the length of what it replays.
 */
@Tag("integration")
class ReplayedStreamIntegrationTest {

  MockWebServer server;
  final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closing) c.close();
    server.close();
  }

  OkHttpClient client() {
    return new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build();
  }

  RetryPolicy policy() {
    return RetryPolicy.builder().baseDelay(Duration.ofMillis(5)).build();
  }

  /** As Jackson's writeValue(OutputStream): writes through an OutputStream and closes it. */
  static RequestBody jsonClosingItsStream(String json) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return MediaType.get("application/json");
      }

      @Override
      public boolean isOneShot() {
        return true;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        try (OutputStream out = sink.outputStream()) {
          out.write(json.getBytes(StandardCharsets.UTF_8));
        }
      }
    };
  }

  /**
   * Plain OkHttp sends it; with okretry the first attempt throws IllegalStateException("closed").
   */
  @ParameterizedTest
  @EnumSource(RealDriver.class)
  void aOneShotBodyThatClosesItsStreamIsSent(RealDriver driver) throws Exception {
    server.enqueue(new MockResponse.Builder().body("ok").build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    Request plain =
        new Request.Builder().url(server.url("/")).put(jsonClosingItsStream("{}")).build();
    try (Response r = client().newCall(plain).execute()) {
      assertThat(r.code()).as("without okretry").isEqualTo(200);
    }
    Sender sender = driver.calls(client(), policy(), closing);
    Request request =
        new Request.Builder().url(server.url("/")).put(jsonClosingItsStream("{}")).build();
    try (Response r = sender.execute(request)) {
      assertThat(r.code()).isEqualTo(200);
    }
  }

  /**
   * An idempotent PUT of a one-shot stream whose contentLength() is what is left of it: answered
   * 503, its retry from the kept copy says Content-Length: 0 and fails to write 5 bytes.
   */
  @ParameterizedTest
  @EnumSource(RealDriver.class)
  void aReplayedStreamSaysTheLengthItSends(RealDriver driver) throws Exception {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().body("ok").build());
    InputStream in = new ByteArrayInputStream("hello".getBytes(StandardCharsets.UTF_8));
    RequestBody stream =
        new RequestBody() {
          @Override
          public MediaType contentType() {
            return null;
          }

          @Override
          public long contentLength() throws IOException {
            return in.available();
          }

          @Override
          public boolean isOneShot() {
            return true;
          }

          @Override
          public void writeTo(BufferedSink sink) throws IOException {
            byte[] b = new byte[16];
            for (int n; (n = in.read(b)) != -1; ) sink.write(b, 0, n);
          }
        };
    Sender sender = driver.calls(client(), policy(), closing);
    try (Response r =
        sender.execute(new Request.Builder().url(server.url("/")).put(stream).build())) {
      assertThat(r.code()).isEqualTo(200);
    }
    server.takeRequest();
    assertThat(server.takeRequest().getBody().utf8()).isEqualTo("hello");
  }
}
