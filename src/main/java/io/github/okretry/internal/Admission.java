package io.github.okretry.internal;

import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;

/**
 * What to do before an attempt, one of three: {@linkplain Kind#GO go} now, {@linkplain Kind#WAIT
 * wait} first (then ask again), or stop, {@linkplain Kind#THROTTLED throttled}: the origin asked
 * every caller to wait longer than this call can, so the caller gets a local response with the
 * stored status and nothing is sent.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class Admission {

  /** The three kinds of admission. */
  public enum Kind {
    GO,
    WAIT,
    THROTTLED
  }

  private static final Admission GO = new Admission(Kind.GO, 0, 0);

  private final Kind kind;
  private final long waitNanos;
  private final int code;

  private Admission(Kind kind, long waitNanos, int code) {
    this.kind = kind;
    this.waitNanos = waitNanos;
    this.code = code;
  }

  /** Send the attempt now. */
  public static Admission go() {
    return GO;
  }

  /** Wait {@code waitNanos}, then ask again. */
  public static Admission waitFor(long waitNanos) {
    if (waitNanos < 0) throw new IllegalArgumentException("waitNanos < 0: " + waitNanos);
    return new Admission(Kind.WAIT, waitNanos, 0);
  }

  /**
   * Do not send: the origin answered {@code code} and asked to wait {@code waitNanos} more, which
   * this call cannot.
   */
  public static Admission throttled(int code, long waitNanos) {
    return new Admission(Kind.THROTTLED, waitNanos, code);
  }

  public Kind kind() {
    return kind;
  }

  /** For {@link Kind#WAIT} the wait; for {@link Kind#THROTTLED} what the origin still asks. */
  public long waitNanos() {
    return waitNanos;
  }

  /** For {@link Kind#THROTTLED}: the status the origin answered; else 0. */
  public int code() {
    return code;
  }

  /**
   * For {@link Kind#THROTTLED}: a local response standing for the origin's, for {@code request}:
   * the stored status, a {@code Retry-After} for the time still asked (whole seconds, rounded
   * up), an empty body, and a message that says okretry made it.
   */
  public Response localResponse(Request request, long nowMillis) {
    long seconds = (waitNanos + 999_999_999L) / 1_000_000_000L;
    return localResponse(request, code, "Throttled locally by okretry: origin asked to wait", nowMillis)
        .newBuilder()
        .header("Retry-After", Long.toString(seconds))
        .build();
  }

  /**
   * A local response standing for the origin's {@code code} when nothing is sent: an empty body
   * and {@code message}, which says okretry made it.
   */
  public static Response localResponse(Request request, int code, String message, long nowMillis) {
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message(message)
        .body(ResponseBody.create("", (MediaType) null))
        .sentRequestAtMillis(nowMillis)
        .receivedResponseAtMillis(nowMillis)
        .build();
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Admission)) return false;
    Admission other = (Admission) o;
    return kind == other.kind && waitNanos == other.waitNanos && code == other.code;
  }

  @Override
  public int hashCode() {
    return 31 * (31 * kind.hashCode() + (int) (waitNanos ^ (waitNanos >>> 32))) + code;
  }

  @Override
  public String toString() {
    switch (kind) {
      case GO:
        return "Admission.go()";
      case WAIT:
        return "Admission.waitFor(" + waitNanos + " ns)";
      default:
        return "Admission.throttled(" + code + ", " + waitNanos + " ns)";
    }
  }
}
