package io.github.okretry.internal;

import java.util.concurrent.atomic.AtomicLong;
import okhttp3.RequestBody;
import org.jspecify.annotations.Nullable;

/**
 * The bytes a policy's calls may keep of their one-shot request bodies, so that a retry can write
 * them again (gRPC's retry buffer, proposal A6: a limit per call and a total per channel): each
 * call keeps up to {@link #perCallBytes}, all of them together up to {@link #perClientBytes}. One
 * per policy, shared by its calls; the two limits are fixed, the bytes in use are taken and given
 * back atomically. A call with no body, or a body that can be written again, never meets it.
 */
public final class ReplayBuffer {

  /** The most one call keeps; 0: none is kept, and a one-shot body is never repeated. */
  public final long perCallBytes;

  /** The most all calls keep at once. */
  public final long perClientBytes;

  private final AtomicLong usedBytes = new AtomicLong();

  /**
   * @throws IllegalArgumentException if either limit is negative, or {@code perClientBytes} is
   *     below {@code perCallBytes}
   */
  public ReplayBuffer(long perCallBytes, long perClientBytes) {
    if (perCallBytes < 0 || perClientBytes < perCallBytes) {
      throw new IllegalArgumentException(
          "replayBuffer: perCallBytes " + perCallBytes + ", perClientBytes " + perClientBytes);
    }
    this.perCallBytes = perCallBytes;
    this.perClientBytes = perClientBytes;
  }

  /**
   * {@code body} wrapped to keep what its first attempt writes, or null if it needs no wrapper
   * (none, one that can be written again, a duplex body) or none is kept ({@code perCallBytes} 0).
   * Allocates nothing unless it wraps.
   */
  public @Nullable ReplayBody wrap(@Nullable RequestBody body) {
    return body != null && keeps(body) ? new ReplayBody(body, this) : null;
  }

  /** True if {@link #wrap} would wrap {@code body}: a one-shot body, not duplex, and a limit. */
  public boolean keeps(@Nullable RequestBody body) {
    return perCallBytes > 0 && body != null && body.isOneShot() && !body.isDuplex();
  }

  /** Takes {@code bytes} from the total if they fit: true if they did. */
  boolean acquire(long bytes) {
    for (; ; ) {
      long used = usedBytes.get();
      if (bytes > perClientBytes - used) return false;
      if (usedBytes.compareAndSet(used, used + bytes)) return true;
    }
  }

  /** Gives back {@code bytes} taken by {@link #acquire}. */
  void release(long bytes) {
    if (bytes != 0) usedBytes.addAndGet(-bytes);
  }

  /** The bytes all calls keep now; for tests and diagnostics. */
  public long usedBytes() {
    return usedBytes.get();
  }

  /** {@code bytes} in words: "1 MiB", "512 KiB", "1000 bytes". */
  static String size(long bytes) {
    if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) return (bytes >> 20) + " MiB";
    if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) return (bytes >> 10) + " KiB";
    return bytes + " bytes";
  }

  @Override
  public String toString() {
    return "ReplayBuffer{perCallBytes=" + perCallBytes + ", perClientBytes=" + perClientBytes + "}";
  }
}
