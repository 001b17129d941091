package io.github.okretry;

import io.github.okretry.internal.Durations;
import java.io.IOException;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.reflect.KClass;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * What happened to one logical call, read from what its caller holds: the response (also Retrofit's
 * {@code Response.raw()}) or the exception, on either driver, with no listener.
 *
 * <pre>{@code
 * try (Response response = client.newCall(request).execute()) {
 *   RetryOutcome outcome = RetryOutcome.of(response);   // 3 attempts, waited 0.6 s, PROCESSED
 * } catch (IOException e) {
 *   RetryOutcome outcome = RetryOutcome.of(e);          // null if okretry did not end the call
 *   if (outcome != null && outcome.processing() == RetryOutcome.Processing.NOT_PROCESSED) { ... }
 * }
 * }</pre>
 *
 * <p>A response carries it as a tag of its request; an exception as its last {@linkplain
 * Throwable#getSuppressed() suppressed} exception, whose message says it too ({@code "okretry:
 * after 4 attempts: RETRIES_EXHAUSTED (4 requests, waited 1.4 s: backoff 0.4 s + server wait 1 s,
 * may have been processed, keyed)"}), the exception's own type and message unchanged. A call that
 * succeeds at its first attempt is not marked, so that it costs nothing: its response reads as one
 * attempt that ended the call by its status, which is also how any response okretry did not handle
 * reads. Immutable.
 */
public final class RetryOutcome {

  /** Whether the server may have acted on the request, over all the attempts of the call. */
  public enum Processing {
    /**
     * No attempt can have been processed: each was refused (429, 503, HTTP/2 {@code
     * REFUSED_STREAM}) or failed to connect ({@code ConnectException}, {@code
     * NoRouteToHostException}, {@code UnknownHostException}), and that is about the request okretry
     * sent (not a redirect's GET, nor after a failure OkHttp recovered from underneath that may
     * have reached the server); or it failed before its request headers were written whole (taken
     * as proof only where okretry needs it: a non-idempotent request without a key, or a listener
     * that implements {@link RetryListener#onNetworkRequest}); also a call that sent no attempt.
     */
    NOT_PROCESSED,
    /**
     * No response came back, and some attempt failed where the server may have received it: a
     * timeout, a reset, a cancel mid-attempt. Where okretry does not take its watch as proof, a
     * failure before any request was written also reads as this: it errs towards caution.
     */
    MAYBE,
    /**
     * Some attempt got a response that does not prove its request refused: anything but 429 and
     * 503, and those too when they answer a request OkHttp followed a response with that was not
     * itself a refusal (a redirect's GET, after a 303).
     */
    PROCESSED
  }

  /** No instant to come back at: the server named none the call did not wait for. */
  static final long NO_COME_BACK = Long.MIN_VALUE;

  /** No instant the origin last answered at: the budget did not end the call, or does not know. */
  static final long NOT_ANSWERED = Long.MIN_VALUE;

  private static final KClass<Mark> MARK = JvmClassMappingKt.getKotlinClass(Mark.class);
  private static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

  /**
   * How deep {@link #of(Throwable)} looks through causes: OkHttp's {@code timeout} over what the
   * chain threw, under an {@code ExecutionException} or {@code CompletionException} or two, with
   * room to spare; a bound also ends a cycle of causes.
   */
  private static final int MAX_CAUSES = 8;

  private final int attempts;
  private final int requestsSent;
  private final long backoffNanos; // the time waited, by kind (CallRecord's kinds)
  private final long serverWaitNanos;
  private final long pacingNanos;
  private final long budgetNanos;
  private final long comeBackAtMillis; // NO_COME_BACK for none
  private final long lastAnsweredAtMillis; // NOT_ANSWERED for none
  private final @Nullable GiveUpReason giveUpReason;
  private final @Nullable String idempotencyKey;
  private final Processing processing;
  private final int code; // the status of the response the caller got; 0 for an exception

  RetryOutcome(
      int attempts,
      int requestsSent,
      long backoffNanos,
      long serverWaitNanos,
      long pacingNanos,
      long budgetNanos,
      long comeBackAtMillis,
      long lastAnsweredAtMillis,
      @Nullable GiveUpReason giveUpReason,
      @Nullable String idempotencyKey,
      Processing processing,
      int code) {
    this.attempts = attempts;
    this.requestsSent = requestsSent;
    this.backoffNanos = backoffNanos;
    this.serverWaitNanos = serverWaitNanos;
    this.pacingNanos = pacingNanos;
    this.budgetNanos = budgetNanos;
    this.comeBackAtMillis = comeBackAtMillis;
    this.lastAnsweredAtMillis = lastAnsweredAtMillis;
    this.giveUpReason = giveUpReason;
    this.idempotencyKey = idempotencyKey;
    this.processing = processing;
    this.code = code;
  }

  /**
   * The outcome of the call that returned {@code response}. A response okretry did not mark (a call
   * that succeeded at its first attempt, or a response from a client without okretry) reads as one
   * attempt ended by its status: its network requests counted from its {@link
   * Response#priorResponse()} chain (redirects, auth), its key read from the {@code
   * Idempotency-Key} header (a policy with another {@code idempotencyKeyHeader} is not known here),
   * {@link Processing#PROCESSED} unless it proves its request was not processed (a 429 or 503 to
   * that request, not to one OkHttp followed a redirect with).
   *
   * @param response a response a call returned
   * @return its outcome, never null
   * @throws NullPointerException if {@code response} is null
   */
  public static RetryOutcome of(Response response) {
    if (response == null) throw new NullPointerException("response == null");
    Mark mark = response.request().tag(MARK);
    RetryOutcome marked = mark != null ? mark.outcome() : null;
    if (marked != null) return marked;
    return new RetryOutcome(
        1,
        requestsIn(response),
        0,
        0,
        0,
        0,
        NO_COME_BACK,
        NOT_ANSWERED,
        null,
        response.request().header(DEFAULT_KEY_HEADER),
        Classifier.provesNotProcessed(response) ? Processing.NOT_PROCESSED : Processing.PROCESSED,
        response.code());
  }

  /**
   * The network requests {@code response} shows: itself and each response of its {@link
   * Response#priorResponse()} chain (redirects, auth), except one OkHttp's cache answered without
   * asking the network (a conditional request it revalidated counts: that one was sent). What an
   * attempt no tracker watched is counted as, on either path, so a redirect counts on a first
   * attempt's success and on a retried call's attempts alike. OkHttp's silent resends do not show
   * there: a call that made one marks its response ({@code Attempt.resentUnseen}).
   */
  static int requestsIn(Response response) {
    int requests = 0;
    for (Response r = response; r != null; r = r.priorResponse()) {
      if (r.networkResponse() != null || r.cacheResponse() == null) requests++;
    }
    return requests;
  }

  /**
   * {@code request} without an outcome's mark: itself unless it was built from a response okretry
   * marked ({@code response.request().newBuilder()}, which keeps every tag), as a new call.
   */
  static Request unmarked(Request request) {
    return request.tag(MARK) == null ? request : request.newBuilder().tag(MARK, null).build();
  }

  /**
   * The outcome of the call that threw {@code failure}, read from it or, if it carries none, from
   * its causes, the nearest first, up to 8 deep: so also from the {@code InterruptedIOException}
   * ("timeout") OkHttp throws when its {@code callTimeout} ends a call, whose cause is what okretry
   * threw, and from an {@code ExecutionException} of a call run on an executor. Null if okretry did
   * not end a call with it (an unchecked exception thrown below okretry, {@code "canceled due to
   * …"}, an exception from elsewhere). Retrofit's {@code HttpException} holds a response instead:
   * {@code RetryOutcome.of(httpException.response().raw())}.
   *
   * @param failure what a call threw, or what an enqueued call's {@code onFailure} got
   * @return its outcome, or null
   * @throws NullPointerException if {@code failure} is null
   */
  public static @Nullable RetryOutcome of(Throwable failure) {
    if (failure == null) throw new NullPointerException("failure == null");
    Throwable t = failure;
    for (int depth = 0; t != null && depth < MAX_CAUSES; depth++) {
      RetryOutcome outcome = carried(t);
      if (outcome != null) return outcome;
      t = t.getCause();
    }
    return null;
  }

  /** The outcome {@code t} itself carries as its last {@link Summary}, or null for none. */
  static @Nullable RetryOutcome carried(Throwable t) {
    Throwable[] suppressed = t.getSuppressed();
    for (int i = suppressed.length - 1; i >= 0; i--) {
      if (suppressed[i] instanceof Summary) return ((Summary) suppressed[i]).outcome;
    }
    return null;
  }

  /**
   * Attempts okretry sent, including the first and any hedges.
   *
   * @return the attempts, 0 if the call ended before its first was sent
   */
  public int attempts() {
    return attempts;
  }

  /**
   * Network requests sent: the requests whose headers each attempt wrote whole, OkHttp's own silent
   * resends (a POST resent after a pooled connection dropped it, a 408, a 503 with {@code
   * Retry-After: 0}), redirects and auth follow-ups included, on either driver, with or without a
   * listener; none for a response from OkHttp's cache. An attempt that wrote none counts as one, as
   * its {@link #processing()} may stand for a request sent, except where okretry takes that as
   * proof that it was not sent (a non-idempotent request without a key, or a listener that
   * implements {@link RetryListener#onNetworkRequest}): then 0. A hedge, and an attempt canceled
   * unheard when another answered for the call, count as one each.
   *
   * @return the network requests sent, 0 or more
   */
  public int requestsSent() {
    return requestsSent;
  }

  /**
   * The time the call spent waiting between attempts, in nanoseconds, on the policy's clock: the
   * sum of its {@linkplain #backoffNanos() backoff}, {@linkplain #serverWaitNanos() server wait},
   * {@linkplain #pacingNanos() pacing} and {@linkplain #budgetNanos() budget}.
   *
   * @return nanoseconds waited, 0 for a call that did not wait
   */
  public long waitedNanos() {
    return backoffNanos + serverWaitNanos + pacingNanos + budgetNanos;
  }

  /**
   * The part of {@link #waitedNanos()} spent in okretry's own backoff between attempts (with its
   * jitter), in nanoseconds: waits after a failure the server did not say when to retry.
   *
   * @return nanoseconds of backoff, 0 for none
   */
  public long backoffNanos() {
    return backoffNanos;
  }

  /**
   * The part of {@link #waitedNanos()} spent waiting as the server asked, in nanoseconds: a {@code
   * Retry-After} (or {@code retry-after-ms}) on the response a retry followed, any upward spread
   * included, or, without one, the reset of a quota the response said was spent.
   *
   * @return nanoseconds of server wait, 0 for none
   */
  public long serverWaitNanos() {
    return serverWaitNanos;
  }

  /**
   * The part of {@link #waitedNanos()} spent behind other calls before an attempt could go, in
   * nanoseconds: a turn among the calls waiting on the same origin, the origin gate held shut by a
   * {@code Retry-After} another call got ({@code originWideRetryAfter}), a published quota's pacer
   * ({@code quotaPacing}).
   *
   * @return nanoseconds of pacing, 0 for none
   */
  public long pacingNanos() {
    return pacingNanos;
  }

  /**
   * The part of {@link #waitedNanos()} spent on retries the {@link RetryBudget} skipped, in
   * nanoseconds: each skipped retry's wait for the next, and the short grace after the last one for
   * the origin to be seen to work.
   *
   * @return nanoseconds of budget, 0 for none
   */
  public long budgetNanos() {
    return budgetNanos;
  }

  /**
   * When the server asked the call to come back, if it ended without waiting for it: the instant,
   * in milliseconds since the epoch on this machine's clock, of a wait the server named that
   * okretry would not make, the call ending for it ({@link GiveUpReason#RETRY_AFTER_TOO_LONG}: a
   * {@code Retry-After} or a spent published quota's reset longer than {@code maxRetryAfter};
   * {@link GiveUpReason#DEADLINE_EXCEEDED}: one past the deadline; {@link
   * GiveUpReason#ORIGIN_THROTTLED} and a turn behind the origin's crowd that came too late: the
   * origin's). An HTTP-date is measured against the response's {@code Date} header, so the server's
   * clock skew is not in it; the wait is clamped to 0 to 24 hours, rounded up to the millisecond.
   * For a caller that schedules the work again (a queue, Android's {@code WorkManager}).
   *
   * @return the instant to come back at, in epoch milliseconds, or null if the call ended
   *     otherwise, or the server named none
   */
  public @Nullable Long comeBackAtMillis() {
    return comeBackAtMillis == NO_COME_BACK ? null : comeBackAtMillis;
  }

  /**
   * When the call's origin last answered, if the {@link RetryBudget} ended the call ({@link
   * GiveUpReason#NO_RECENT_SUCCESS}, {@link GiveUpReason#BUDGET_EXHAUSTED}): the instant, in
   * milliseconds since the epoch on this machine's clock, a call of the budget to the request's
   * origin (scheme, host, port) last got a response that shows a server working (below 500, not 408
   * or 429, not from OkHttp's cache), to the millisecond. The budget notes an origin's answers only
   * from its first failure on, so that a client whose calls succeed pays nothing for this, and
   * forgets them once the origin has gone 30 s without a failure (its memory), as then it may have
   * missed a later one: null if the origin has not answered within that memory (an answer before
   * its failures began is not known). For a caller that tells an origin down for a while from one
   * that answered a moment ago.
   *
   * @return the instant the origin last answered, in epoch milliseconds, or null if the call ended
   *     otherwise, or the budget does not know
   */
  public @Nullable Long lastAnsweredAtMillis() {
    return lastAnsweredAtMillis == NOT_ANSWERED ? null : lastAnsweredAtMillis;
  }

  /**
   * Why okretry gave up, or null if the call ended on a response it does not treat as a failure (a
   * success, or a status it does not retry, such as a 404), the caller holding that response.
   *
   * @return why the call gave up, or null if it did not
   */
  public @Nullable GiveUpReason giveUpReason() {
    return giveUpReason;
  }

  /**
   * The idempotency key sent with every attempt of the call.
   *
   * @return the key header's value as sent, or null if none was sent
   */
  public @Nullable String idempotencyKey() {
    return idempotencyKey;
  }

  /**
   * Whether the server may have acted on the request, over all the call's attempts.
   *
   * @return {@link Processing#NOT_PROCESSED}, {@link Processing#MAYBE} or {@link
   *     Processing#PROCESSED}
   */
  public Processing processing() {
    return processing;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof RetryOutcome)) return false;
    RetryOutcome that = (RetryOutcome) o;
    return attempts == that.attempts
        && requestsSent == that.requestsSent
        && backoffNanos == that.backoffNanos
        && serverWaitNanos == that.serverWaitNanos
        && pacingNanos == that.pacingNanos
        && budgetNanos == that.budgetNanos
        && comeBackAtMillis == that.comeBackAtMillis
        && lastAnsweredAtMillis == that.lastAnsweredAtMillis
        && giveUpReason == that.giveUpReason
        && processing == that.processing
        && code == that.code
        && (idempotencyKey == null
            ? that.idempotencyKey == null
            : idempotencyKey.equals(that.idempotencyKey));
  }

  @Override
  public int hashCode() {
    int h = attempts;
    h = 31 * h + requestsSent;
    h = 31 * h + (int) (backoffNanos ^ (backoffNanos >>> 32));
    h = 31 * h + (int) (serverWaitNanos ^ (serverWaitNanos >>> 32));
    h = 31 * h + (int) (pacingNanos ^ (pacingNanos >>> 32));
    h = 31 * h + (int) (budgetNanos ^ (budgetNanos >>> 32));
    h = 31 * h + (int) (comeBackAtMillis ^ (comeBackAtMillis >>> 32));
    h = 31 * h + (int) (lastAnsweredAtMillis ^ (lastAnsweredAtMillis >>> 32));
    h = 31 * h + (giveUpReason != null ? giveUpReason.hashCode() : 0);
    h = 31 * h + (idempotencyKey != null ? idempotencyKey.hashCode() : 0);
    h = 31 * h + code;
    return 31 * h + processing.hashCode();
  }

  /**
   * One line, e.g. {@code "RetryOutcome{after 4 attempts: RETRIES_EXHAUSTED (4 requests, waited 1.4
   * s: backoff 0.4 s + server wait 1 s, may have been processed, keyed)}"}: the time waited, then
   * each kind it was spent as that is not 0 ({@code backoff}, {@code server wait}, {@code pacing},
   * {@code budget}, as their getters), then {@code come back at} and {@code origin last answered
   * at} an instant in UTC where {@link #comeBackAtMillis()} and {@link #lastAnsweredAtMillis()} are
   * not null; the key's value is never printed. A call that did not give up says {@code SUCCEEDED}
   * for a response under 400, and what it got for a status okretry does not retry: {@code "after 1
   * attempt: returned HTTP 404, not retryable (…)"}.
   */
  @Override
  public String toString() {
    return "RetryOutcome{" + summary() + "}";
  }

  /**
   * The line that {@link #toString()} wraps, and that an exception's suppressed {@link Summary}
   * says.
   */
  String summary() {
    StringBuilder s =
        new StringBuilder("after ")
            .append(attempts)
            .append(attempts == 1 ? " attempt: " : " attempts: ");
    if (giveUpReason != null) {
      s.append(giveUpReason.name());
    } else if (code >= 400) {
      s.append("returned HTTP ").append(code).append(", not retryable");
    } else {
      s.append("SUCCEEDED");
    }
    s.append(" (")
        .append(requestsSent)
        .append(requestsSent == 1 ? " request, waited " : " requests, waited ");
    s.append(Durations.seconds(waitedNanos())).append(" s");
    int total = s.length();
    waited(s, total, "backoff", backoffNanos);
    waited(s, total, "server wait", serverWaitNanos);
    waited(s, total, "pacing", pacingNanos);
    waited(s, total, "budget", budgetNanos);
    if (comeBackAtMillis != NO_COME_BACK) {
      s.append(", come back at ").append(Durations.instant(comeBackAtMillis));
    }
    if (lastAnsweredAtMillis != NOT_ANSWERED) {
      s.append(", origin last answered at ").append(Durations.instant(lastAnsweredAtMillis));
    }
    s.append(", ").append(words(processing)).append(", ");
    return s.append(idempotencyKey != null ? "keyed)" : "no key)").toString();
  }

  /**
   * Appends to {@code s} the part of the time waited spent as {@code kind}, {@code nanos}, if any:
   * after the total (which ends at {@code total}) a colon, then each kind joined by {@code " + "}.
   */
  private static void waited(StringBuilder s, int total, String kind, long nanos) {
    if (nanos == 0) return;
    s.append(s.length() == total ? ": " : " + ").append(kind).append(' ');
    s.append(Durations.seconds(nanos)).append(" s");
  }

  private static String words(Processing p) {
    return p == Processing.NOT_PROCESSED
        ? "not processed"
        : p == Processing.MAYBE ? "may have been processed" : "processed";
  }

  /**
   * How a response carries its call's outcome: a tag of the request okretry sends from the second
   * attempt on, which has the outcome once the call ends (a response of a first attempt that does
   * not end the call as a plain success is rebuilt with it: {@link #onto}). Its one kind is the
   * call's record of what happened ({@code CallRecord}), which holds nothing of the call's state.
   */
  abstract static class Mark {

    /** The call's outcome once it ended; null before. */
    abstract @Nullable RetryOutcome outcome();

    /** {@code request} with this mark as a tag. */
    final Request on(Request request) {
      return request.newBuilder().tag(MARK, this).build();
    }

    @Override
    public final String toString() {
      RetryOutcome o = outcome();
      return o != null ? o.toString() : "RetryOutcome{pending}";
    }

    /**
     * {@code response} itself if its request carries this mark, else a copy whose request does
     * (same body).
     */
    final Response onto(Response response) {
      if (response.request().tag(MARK) == this) return response;
      return response.newBuilder().request(on(response.request())).build();
    }
  }

  /**
   * The suppressed exception that carries a failed call's outcome on its exception: its message is
   * the outcome's {@linkplain #summary() summary}. No stack trace: it says what happened, not
   * where.
   */
  static final class Summary extends IOException {
    private static final long serialVersionUID = 1L;
    final transient RetryOutcome outcome;

    Summary(RetryOutcome outcome) {
      super("okretry: " + outcome.summary());
      this.outcome = outcome;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
