package io.github.okretry;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import org.jspecify.annotations.Nullable;

/**
 * The failed response of a call whose retry its budget holds ({@code
 * RetryTokenBucket.Payment.HELD}): what the caller gets, as the server sent it, if the retry is
 * never sent. The driver hands it over when it settles the WAIT ({@link Step#settle}); it keeps a
 * copy with the body buffered, as much of it as arrives within {@link #BODY_LIMIT_BYTES} and the
 * time it is given, and closes the original, so no connection idles through the wait. Made at a
 * call's first held retry; like its call, not thread-safe.
 */
final class HeldResponse {

  /** The most of a held response's body kept: error bodies are small, and a held call waits. */
  static final long BODY_LIMIT_BYTES = 64 * 1024;

  private @Nullable Response response;
  private long readNanos; // how long the body may take to arrive, > 0

  /**
   * The next response kept may take {@code readNanos} to read: the call's time left, at most {@link
   * io.github.okretry.internal.Tuning#HELD_BODY_READ_NANOS}.
   */
  void readWithin(long readNanos) {
    this.readNanos = Math.max(1, readNanos);
  }

  /**
   * Keeps {@code inHand} (then closed by the driver) with what of its body arrives in time and
   * within the limit: a trickling server holds the call no longer than that, and what it did send
   * is kept. A body cut short has its {@code Content-Length} set to what was kept.
   */
  void keep(Response inHand) {
    ResponseBody original = inHand.body();
    Buffer kept = new Buffer();
    try {
      BufferedSource source = original.source();
      source.timeout().deadline(readNanos, TimeUnit.NANOSECONDS);
      BufferedSource peek = source.peek();
      while (kept.size() < BODY_LIMIT_BYTES
          && peek.read(kept, BODY_LIMIT_BYTES - kept.size()) != -1) {
        // what arrived so far is in kept
      }
    } catch (IOException e) {
      // Slow or broken: the status, the headers and what came are the answer.
    }
    long size = kept.size();
    Response.Builder copy =
        inHand.newBuilder().body(ResponseBody.create(kept.readByteArray(), original.contentType()));
    if (inHand.header("Content-Length") != null && original.contentLength() != size) {
      copy.header("Content-Length", Long.toString(size));
    }
    response = copy.build();
  }

  /** The response kept, and forgotten here; null if none. */
  @Nullable Response take() {
    Response r = response;
    response = null;
    return r;
  }
}
