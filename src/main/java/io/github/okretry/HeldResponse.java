package io.github.okretry;

import java.io.IOException;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;

/**
 * The failed response of a call whose retry its budget holds ({@code
 * RetryTokenBucket.Payment.HELD}): what the caller gets, as the server sent it, if the retry is
 * never sent. The driver hands it over when it settles the WAIT ({@link Step#settle}); it keeps a
 * copy with the body buffered, up to {@link #BODY_LIMIT_BYTES}, and closes the original, so no
 * connection idles through the wait. Made at a call's first held retry; like its call, not
 * thread-safe.
 */
final class HeldResponse {

  /** The most of a held response's body kept: error bodies are small, and a held call waits. */
  static final long BODY_LIMIT_BYTES = 64 * 1024;

  private @Nullable Response response;

  /**
   * Keeps {@code inHand} (then closed by the driver) with its body buffered; a body that fails to
   * read is kept empty.
   */
  void keep(Response inHand) {
    ResponseBody body;
    try {
      body = inHand.peekBody(BODY_LIMIT_BYTES);
    } catch (IOException e) { // the status and headers are the answer; the body was lost on the way
      body = ResponseBody.create(new byte[0], inHand.body().contentType());
    }
    response = inHand.newBuilder().body(body).build();
  }

  /** The response kept, and forgotten here; null if none. */
  @Nullable Response take() {
    Response r = response;
    response = null;
    return r;
  }
}
