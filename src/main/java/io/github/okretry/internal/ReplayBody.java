package io.github.okretry.internal;

import java.io.IOException;
import java.io.OutputStream;
import okhttp3.MediaType;
import okhttp3.RequestBody;
import okio.Buffer;
import okio.BufferedSink;
import okio.ForwardingSink;
import okio.Okio;
import org.jspecify.annotations.Nullable;

/**
 * A one-shot request body that keeps what its first write sends, up to its {@link ReplayBuffer}'s
 * limits, so that a retry writes the same bytes again. Written once, it streams from the body it
 * wraps and keeps a copy in full okio segments; kept whole, it is no longer one-shot and each later
 * write replays the copy. Past a limit, or if the first write did not end, it keeps nothing: it can
 * then not be written again ({@link #whyNotKept}). Its call gives the bytes back when it ends
 * ({@link #release}).
 *
 * <p>Thread-safe: the write runs on OkHttp's thread while the call may end on another.
 */
public final class ReplayBody extends RequestBody {
  private static final int NOT_STARTED = 0; // the body it wraps is still unread
  private static final int KEEPING = 1; // its first write is under way
  private static final int KEPT = 2; // its first write ended, all of it kept
  private static final int NOT_KEPT = 3; // past a limit, or its first write failed
  private static final int RELEASED = 4; // its call ended

  private final RequestBody body;
  private final ReplayBuffer buffer;
  private final Buffer kept = new Buffer(); // guarded by this
  private @Nullable OutputStream keptStream; // guarded by this: writes into kept, made once
  private int state = NOT_STARTED; // guarded by this
  private long heldBytes; // guarded by this: taken from the buffer's total
  private @Nullable String whyNotKept; // guarded by this

  ReplayBody(RequestBody body, ReplayBuffer buffer) {
    this.body = body;
    this.buffer = buffer;
  }

  @Override
  public @Nullable MediaType contentType() {
    return body.contentType();
  }

  /**
   * The wrapped body's length until all of it is kept; then what it replays (a stream's length may
   * be what is left of it: 0 once it was read).
   */
  @Override
  public long contentLength() throws IOException {
    synchronized (this) {
      if (state == KEPT) return kept.size();
    }
    return body.contentLength();
  }

  /** True until all of it is kept: until then a write after the first has nothing to send. */
  @Override
  public synchronized boolean isOneShot() {
    return state != KEPT;
  }

  @Override
  public void writeTo(BufferedSink sink) throws IOException {
    Buffer copy = null;
    boolean keeping;
    synchronized (this) {
      if (state == KEPT) {
        copy = kept.copy(); // shares the segments
      } else if (state != NOT_STARTED) {
        throw new IOException("okretry: " + whyNotKept() + "; it cannot be written again");
      } else if (body.contentLength() > buffer.perCallBytes) {
        notKept(tooLarge()); // known at once: written as it is, nothing kept
      } else {
        state = KEEPING;
      }
      keeping = state == KEEPING;
    }
    if (copy != null) {
      sink.writeAll(copy);
      return;
    }
    if (!keeping) {
      body.writeTo(sink);
      return;
    }
    BufferedSink tee = Okio.buffer(new Tee(sink));
    boolean whole = false;
    try {
      body.writeTo(tee);
      // To the socket's buffer; OkHttp flushes it. A body may close its sink (an OutputStream
      // closed after writing), as plain OkHttp allows: closing it emitted everything already.
      if (tee.isOpen()) tee.emit();
      whole = true;
    } finally {
      writeEnded(whole);
    }
  }

  /** Keeps {@code byteCount} bytes of {@code source} as they go out, if they fit. */
  private synchronized void keep(Buffer source, long byteCount) {
    if (state != KEEPING) return;
    if (byteCount > buffer.perCallBytes - heldBytes) {
      notKept(tooLarge());
    } else if (!buffer.acquire(byteCount)) {
      notKept(
          "a one-shot body was not kept: its calls' "
              + ReplayBuffer.size(buffer.perClientBytes)
              + " for replay was in use");
    } else {
      heldBytes += byteCount;
      // Copied into its own full segments: a shared segment would pin a whole 8 KiB array for
      // each small write (a body that flushes every 1 000 bytes kept 8 times its size).
      try {
        source.copyTo(keptStream(), 0, byteCount);
      } catch (IOException e) {
        throw new AssertionError(e); // a Buffer's stream does not throw
      }
    }
  }

  private OutputStream keptStream() { // guarded by this
    OutputStream out = keptStream;
    return out != null ? out : (keptStream = kept.outputStream());
  }

  private synchronized void writeEnded(boolean whole) {
    if (state != KEEPING) return;
    if (whole) {
      state = KEPT;
    } else {
      notKept("a one-shot body was not kept: its first attempt did not write it whole");
    }
  }

  private String tooLarge() {
    return "a one-shot body of more than "
        + ReplayBuffer.size(buffer.perCallBytes)
        + " was not kept";
  }

  /** Keeps nothing from now on, for {@code why}. Guarded by this. */
  private void notKept(String why) {
    state = NOT_KEPT;
    whyNotKept = why;
    free();
  }

  private void free() { // guarded by this
    kept.clear();
    buffer.release(heldBytes);
    heldBytes = 0;
  }

  /**
   * True if a retry can write this body: kept whole, or never read (its first attempt failed before
   * writing it, so the body it wraps is still there).
   */
  public synchronized boolean replayable() {
    return state == KEPT || state == NOT_STARTED;
  }

  /** Why a retry cannot write it, for the log: which limit it passed, or that its write failed. */
  public synchronized String whyNotKept() {
    String why = whyNotKept;
    if (why != null) return why;
    return state == KEEPING
        ? "a one-shot body was not kept yet: its first write is still under way"
        : "a one-shot body was not kept: its call ended";
  }

  /** Its call ended: the bytes it keeps go back to the total. Again: nothing more. */
  public synchronized void release() {
    if (state == RELEASED) return;
    if (state != NOT_KEPT) whyNotKept = null;
    state = RELEASED;
    free();
  }

  /** Its sink: each write is kept (while it fits) and passed on. */
  private final class Tee extends ForwardingSink {
    Tee(BufferedSink sink) {
      super(sink);
    }

    @Override
    public void write(Buffer source, long byteCount) throws IOException {
      keep(source, byteCount);
      super.write(source, byteCount);
    }
  }
}
