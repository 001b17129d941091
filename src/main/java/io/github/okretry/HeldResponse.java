package io.github.okretry;

import java.io.IOException;
import okhttp3.MediaType;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.Okio;
import okio.Source;
import okio.Timeout;
import org.jspecify.annotations.Nullable;

/**
 * The failed response a call ends with when the retry it waited for is never sent ({@link
 * RetryBudget.Verdict#SKIP} to the end, or a stop after its wait): the status line and headers as
 * the server sent them, and a body that says it was not kept. No body is kept through a wait (10
 * 000 waiting calls would keep 10 000 error pages) and none is read for it (that would be I/O in
 * the call state, or on OkHttp's dispatcher thread): the driver closes the response at the wait, as
 * at every wait, and this copy is made of the closed one when the call ends. Reading its body
 * throws an {@link IOException} that says why, as a body cut short by the network does; its {@code
 * Content-Length} header is still the server's.
 */
final class HeldResponse {

  private HeldResponse() {}

  /** {@code closed}'s status and headers, with a body that says it was not kept. */
  static Response of(Response closed) {
    return closed
        .newBuilder()
        .body(new NotKept(closed.body().contentType(), closed.code()))
        .build();
  }

  /** A body whose bytes were let go when its call waited; reading it throws. */
  private static final class NotKept extends ResponseBody {
    private final @Nullable MediaType contentType;
    private final int code;

    NotKept(@Nullable MediaType contentType, int code) {
      this.contentType = contentType;
      this.code = code;
    }

    @Override
    public @Nullable MediaType contentType() {
      return contentType;
    }

    @Override
    public long contentLength() {
      return -1; // unknown: what the server sent was not kept
    }

    @Override
    public BufferedSource source() {
      return Okio.buffer(
          new Source() {
            @Override
            public long read(Buffer sink, long byteCount) throws IOException {
              throw new IOException(
                  "okretry: the body of this HTTP "
                      + code
                      + " was not kept while its call waited for a retry its budget did not send"
                      + " (RetryOutcome.of(response) says why)");
            }

            @Override
            public Timeout timeout() {
              return Timeout.NONE;
            }

            @Override
            public void close() {}
          });
    }
  }
}
