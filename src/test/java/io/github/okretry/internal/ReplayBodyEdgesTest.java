package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import okhttp3.MediaType;
import okhttp3.RequestBody;
import okio.Buffer;
import okio.BufferedSink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link ReplayBody} at its edges: a body that closes its sink, the length of a replay. */
@Tag("unit")
class ReplayBodyEdgesTest {

  /**
   * A one-shot body that writes through {@code sink.outputStream()} and closes the stream, as
   * Jackson's {@code ObjectMapper.writeValue(OutputStream, v)} does by default (AUTO_CLOSE_TARGET).
   * OkHttp accepts this (its own close of the request sink is idempotent).
   */
  static RequestBody closesItsSink(String text) {
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
          out.write(text.getBytes(StandardCharsets.UTF_8));
        }
      }
    };
  }

  @Test
  void aBodyThatClosesItsSinkIsWrittenAsWithoutTheWrapper() throws IOException {
    Buffer plain = new Buffer();
    closesItsSink("{\"a\":1}").writeTo(plain); // unwrapped: fine
    assertThat(plain.readUtf8()).isEqualTo("{\"a\":1}");

    ReplayBuffer buffer = new ReplayBuffer(1024, 4096);
    ReplayBody body = buffer.wrap(closesItsSink("{\"a\":1}"));
    Buffer sink = new Buffer();
    // The body closed the tee: emitting it again would throw IllegalStateException("closed")
    body.writeTo(sink);
    assertThat(sink.readUtf8()).isEqualTo("{\"a\":1}");
    assertThat(body.replayable()).isTrue();
    body.release();
    assertThat(buffer.usedBytes()).isZero();
  }

  /**
   * A one-shot body over a stream whose length is what is left of it (a common shape: {@code
   * contentLength() = in.available()}). Kept whole, a replay writes all the kept bytes, but says
   * the wrapped body's length now: OkHttp then sends {@code Content-Length: 0} and fails the write
   * ("expected 0 bytes but received 5").
   */
  @Test
  void aReplayedBodySaysTheLengthOfWhatItReplays() throws IOException {
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
    ReplayBody body = new ReplayBuffer(1024, 4096).wrap(stream);
    assertThat(body.contentLength()).isEqualTo(5);
    body.writeTo(new Buffer());
    Buffer replay = new Buffer();
    body.writeTo(replay);
    assertThat(replay.size()).isEqualTo(5);
    assertThat(body.contentLength()).as("the length a retry's headers say").isEqualTo(5);
    body.release();
  }
}
