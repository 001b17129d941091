package io.github.okretry.examples;

import io.github.okretry.GiveUpReason;
import io.github.okretry.RetryListener;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;

/**
 * OpenTelemetry HTTP client spans from okretry's {@link RetryListener} events, one per request
 * sent, with {@code http.request.resend_count} on every resend as the HTTP semantic conventions
 * ask: "the ordinal number of request resending attempt (for any reason, including redirects)".
 *
 * <p>A span starts with each attempt ({@link #onAttemptStarted}), so an attempt whose connection
 * failed gets one too, and again whenever OkHttp sends the attempt's request once more by itself
 * underneath okretry ({@link #onNetworkRequest} with {@code requestInAttempt > 1}: its {@code
 * retryOnConnectionFailure}, a 503 with {@code Retry-After: 0}, a redirect). The resend count is
 * counted per logical call, so after an OkHttp repeat in attempt 1, attempt 2's span says 2, not 1:
 * both {@code attempt > 1} and {@code requestInAttempt > 1} are resends. A span ends at the next
 * event of its call, which comes right after its response headers (or failure): a retry scheduled,
 * the call's end, or OkHttp's next request. That last kind of span has no status code, since its
 * response went to OkHttp, not to okretry.
 *
 * <p>A hedge ({@link #onHedgeStarted}, from a {@code RetryingCallFactory} with a {@code
 * HedgingPolicy}) is a resend too and counts in {@code http.request.resend_count}, but its span
 * opens beside the span of the attempt it hedges, which stays open. Listeners are not told which
 * attempt in flight answered first: when the call ends, the span opened last gets the outcome, and
 * the others still open end without a status (the attempts okretry canceled, or the one that won if
 * it was not the last).
 *
 * <p>Spans are children of the context current when the call's first attempt starts: the caller's,
 * for {@code execute()}. Attribute names are the stable HTTP ones; {@code error.type} is the status
 * code, or the exception's simple class name (what okretry reports). This listener does not put a
 * {@code traceparent} header on requests: trace propagation stays with your HTTP instrumentation.
 *
 * <p>Per-call state is keyed by the {@link Request} instance okretry passes to the listener, which
 * is the same for every event of one logical call, and dropped when the call ends.
 */
final class HttpClientSpans implements RetryListener {
  static final AttributeKey<String> HTTP_REQUEST_METHOD =
      AttributeKey.stringKey("http.request.method");
  static final AttributeKey<String> URL_FULL = AttributeKey.stringKey("url.full");
  static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
  static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  static final AttributeKey<Long> HTTP_RESPONSE_STATUS_CODE =
      AttributeKey.longKey("http.response.status_code");
  static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  static final AttributeKey<Long> HTTP_REQUEST_RESEND_COUNT =
      AttributeKey.longKey("http.request.resend_count");

  private static final Pattern HTTP_STATUS = Pattern.compile("^HTTP (\\d{3})");

  private final Tracer tracer;

  /** Logical calls in flight, by identity (Request does not override equals). */
  private final Map<Request, Sends> calls = Collections.synchronizedMap(new IdentityHashMap<>());

  HttpClientSpans(Tracer tracer) {
    this.tracer = tracer;
  }

  @Override
  public void onAttemptStarted(Request request, int attempt) {
    Sends sends = attempt == 1 ? new Sends(Context.current()) : calls.get(request);
    if (sends == null) return; // the first attempt started before this listener was there
    if (attempt == 1) calls.put(request, sends);
    sends.start(request);
  }

  @Override
  public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
    if (requestInAttempt == 1) return; // the attempt's span is already open
    Sends sends = calls.get(request);
    if (sends == null) return;
    sends.end(null, null); // OkHttp took the previous response and sends the request again
    sends.start(request);
  }

  @Override
  public void onHedgeStarted(Request request, int attempt, long afterNanos) {
    Sends sends = calls.get(request);
    if (sends != null) sends.hedging(); // the next start opens a span beside the open one
  }

  @Override
  public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
    Sends sends = calls.get(request);
    if (sends != null) sends.endWithFailure(reason);
  }

  @Override
  public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
    Sends sends = calls.remove(request);
    if (sends != null) sends.endWithFailure(lastFailure); // no-op if a wait was canceled
  }

  @Override
  public void onSucceeded(Request request, Response response, int attempts) {
    Sends sends = calls.remove(request);
    if (sends == null) return;
    int code = response.code();
    // For a client span, 4xx and 5xx are errors even when okretry does not retry them.
    sends.end((long) code, code >= 400 ? Integer.toString(code) : null);
  }

  /**
   * One logical call's requests: how many went out so far, and the span of the current one. Its
   * events come one at a time, but not always on one thread (enqueue, a cancel): synchronized.
   */
  private final class Sends {
    final Context parent;
    long sent;
    Span open;
    boolean hedge; // the next start is a hedge: the open span stays open beside it
    final java.util.List<Span> alsoOpen =
        new java.util.ArrayList<>(); // spans of attempts a hedge runs beside

    synchronized void hedging() {
      hedge = true;
    }

    Sends(Context parent) {
      this.parent = parent;
    }

    synchronized void start(Request request) {
      HttpUrl url = request.url();
      SpanBuilder span =
          tracer
              .spanBuilder(request.method())
              .setSpanKind(SpanKind.CLIENT)
              .setParent(parent)
              .setAttribute(HTTP_REQUEST_METHOD, request.method())
              .setAttribute(URL_FULL, url.newBuilder().username("").password("").build().toString())
              .setAttribute(SERVER_ADDRESS, url.host())
              .setAttribute(SERVER_PORT, (long) url.port());
      // "Recommended if and only if request was retried": absent on the first send.
      if (sent > 0) span.setAttribute(HTTP_REQUEST_RESEND_COUNT, sent);
      sent++;
      if (hedge && open != null) alsoOpen.add(open);
      hedge = false;
      open = span.startSpan();
    }

    /**
     * Ends the open span after a failure described as okretry does ("HTTP 503",
     * "SocketTimeoutException: timeout").
     */
    synchronized void endWithFailure(String failure) {
      Matcher status = HTTP_STATUS.matcher(failure);
      if (status.find()) {
        end(Long.parseLong(status.group(1)), status.group(1));
      } else {
        int colon = failure.indexOf(':');
        end(null, colon < 0 ? failure : failure.substring(0, colon));
      }
    }

    synchronized void end(Long statusCode, String errorType) {
      for (Span other : alsoOpen) {
        other.end(); // attempts in flight beside a hedge: outcome unknown here
      }
      alsoOpen.clear();
      Span span = open;
      if (span == null) return;
      open = null;
      if (statusCode != null) span.setAttribute(HTTP_RESPONSE_STATUS_CODE, statusCode);
      if (errorType != null) {
        span.setAttribute(ERROR_TYPE, errorType);
        span.setStatus(StatusCode.ERROR);
      }
      span.end();
    }
  }
}
