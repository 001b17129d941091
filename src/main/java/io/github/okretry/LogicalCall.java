package io.github.okretry;

import io.github.okretry.internal.Classifier;
import io.github.okretry.internal.Decision;
import io.github.okretry.internal.FailureHistory;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.RetryPolicy;
import io.github.okretry.internal.SendTracker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Set;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * The state of one logical call across its attempts, and every decision about it: whether to
 * wait before an attempt, and what to do after one. It performs no I/O and never sleeps, so the
 * blocking {@link RetryInterceptor} and the non-blocking {@link RetryingCallFactory} drive the
 * same rules, each in its own way. Not thread-safe: one logical call is driven by one thread at
 * a time.
 */
final class LogicalCall {

  /** Idempotent by RFC 9110 §9.2.2: sending them twice has the effect of sending them once. */
  private static final Set<String> IDEMPOTENT_METHODS =
      Set.of("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE");

  // Request.tag(Class) wraps the class in a new KClass on every call; this is on every call's path.
  private static final KClass<RetryOverrides> OVERRIDES = JvmClassMappingKt.getKotlinClass(RetryOverrides.class);

  private final RetryInterceptor config;
  private final Request request;
  private final int maxRetries;
  private final long deadlineNanos;
  private final boolean deadlineIsCallTimeout; // OkHttp enforces that one itself
  private final boolean repeatableBody;
  private final boolean idempotent;
  private final boolean needsTracker;

  private int attempt;
  private long previousDelayNanos;
  private FailureHistory earlier; // bounded: first and last few
  private SendTracker tracker;
  private Call trackedCall;
  private String lastFailure;
  private int throttledCode; // set when beforeAttempt() stops for ORIGIN_THROTTLED
  private long throttledWaitNanos;

  /**
   * @param callTimeoutNanos OkHttp's call timeout for this call, or 0 for none; it started a
   *     moment before this object is made
   */
  LogicalCall(RetryInterceptor config, Request original, long callTimeoutNanos) {
    this.config = config;
    this.request = config.keys.stamp(original);
    RetryOverrides overrides = request.tag(OVERRIDES);
    this.maxRetries = overrides != null ? overrides.maxRetries().orElse(config.maxRetries) : config.maxRetries;
    Duration own = config.deadline;
    if (overrides != null) own = overrides.deadline().orElse(own);
    long ownNanos = own != null ? own.toNanos() : RetryPolicy.NO_DEADLINE;
    this.deadlineIsCallTimeout = callTimeoutNanos > 0 && callTimeoutNanos <= ownNanos;
    this.deadlineNanos = deadlineNanos(deadlineIsCallTimeout ? callTimeoutNanos : ownNanos);
    RequestBody body = request.body();
    this.repeatableBody = body == null || !(body.isOneShot() || body.isDuplex());
    // A blank key header counts as no key: it must never make a request safe to repeat.
    this.idempotent = IDEMPOTENT_METHODS.contains(request.method()) || config.keys.hasKey(request);
    this.needsTracker =
        (!idempotent && repeatableBody && maxRetries > 0) || config.listener != RetryListener.NONE;
    this.previousDelayNanos = config.policy.backoff().baseNanos();
  }

  /**
   * The end of the call on the monotonic clock, {@code budgetNanos} from now: the per-request or
   * configured deadline, or OkHttp's {@code callTimeout}, whichever ends first.
   */
  private long deadlineNanos(long budgetNanos) {
    if (budgetNanos == RetryPolicy.NO_DEADLINE) return RetryPolicy.NO_DEADLINE;
    long now = config.time.nanoTime();
    long end = now + budgetNanos;
    // Keep NO_DEADLINE meaning "none" even if a huge budget lands on it.
    return end < now || end == RetryPolicy.NO_DEADLINE ? RetryPolicy.NO_DEADLINE - 1 : end;
  }

  /** The request every attempt sends, with its idempotency key if it has one. */
  Request request() {
    return request;
  }

  /**
   * True if nothing underneath okretry may send this request twice: OkHttp's own {@code
   * retryOnConnectionFailure} must be off for its attempts.
   */
  boolean mustNotRepeatUnderneath() {
    return !idempotent;
  }

  boolean hasDeadline() {
    return deadlineNanos != RetryPolicy.NO_DEADLINE;
  }

  /**
   * True if the deadline is okretry's own (configured or per request) rather than OkHttp's call
   * timeout, so okretry must also cut short an attempt still in flight when it passes: shrunk
   * I/O timeouts bound each read and write, not a peer that trickles bytes.
   */
  boolean needsDeadlineWatch() {
    return hasDeadline() && !deadlineIsCallTimeout;
  }

  /** Time left before the deadline, or {@link RetryPolicy#NO_DEADLINE}. */
  long remainingNanos() {
    return deadlineNanos == RetryPolicy.NO_DEADLINE
        ? RetryPolicy.NO_DEADLINE
        : deadlineNanos - config.time.nanoTime();
  }

  /**
   * Consults the origin-wide {@code Retry-After} before an attempt: null to go now, a retry
   * decision to wait first (then ask again), or a stop for {@link GiveUpReason#ORIGIN_THROTTLED},
   * after which the caller gets {@link #throttledResponse}.
   */
  Decision beforeAttempt() {
    OriginGate gate = config.originGate;
    if (gate == null) return null;
    long now = config.time.nanoTime();
    OriginGate.Closed closed = gate.check(request.url(), now);
    if (closed == null) return null;
    long wait = closed.notBeforeNanos() - now;
    long remaining = remainingNanos();
    if (wait > config.policy.maxRetryAfterNanos() || wait >= remaining) {
      throttledCode = closed.code();
      throttledWaitNanos = wait;
      config.notifyGaveUp(request, attempt, GiveUpReason.ORIGIN_THROTTLED, "HTTP " + closed.code() + " (origin)");
      return Decision.stop(GiveUpReason.ORIGIN_THROTTLED);
    }
    return Decision.waitThenRetry(config.policy.spreadUpward(wait, remaining, config.random));
  }

  /**
   * A local response standing for the server's, for a call that cannot wait out the origin's
   * {@code Retry-After}: same status, a {@code Retry-After} for the time still left, no body.
   * Nothing was sent.
   */
  Response throttledResponse() {
    long seconds = (throttledWaitNanos + 999_999_999L) / 1_000_000_000L;
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(throttledCode)
        .message("Throttled locally by okretry: origin asked to wait")
        .header("Retry-After", Long.toString(seconds))
        .body(ResponseBody.create("", (MediaType) null))
        .sentRequestAtMillis(config.clock.millis())
        .receivedResponseAtMillis(config.clock.millis())
        .build();
  }

  /** Records that an attempt is about to go out on {@code call}. */
  void attemptStarting(Call call) {
    attempt++;
    config.notifyAttemptStarted(request, attempt);
    if (!needsTracker) return;
    if (trackedCall != call) { // the interceptor has one call; the async factory one per attempt
      if (config.listener == RetryListener.NONE) {
        tracker = SendTracker.attach(call);
      } else {
        tracker = new ListeningTracker();
        call.addEventListener(tracker);
      }
      trackedCall = call;
    }
    tracker.reset();
  }

  /** Reports each network request of the current attempt to the listener. */
  private final class ListeningTracker extends SendTracker {
    @Override
    protected void onNetworkRequest(int requestInAttempt) {
      config.notifyNetworkRequest(request, attempt, requestInAttempt);
    }
  }

  /**
   * Decides after the current attempt ended with {@code response} or {@code error}: null when the
   * response is not a failure and goes to the caller as it is; a retry, with the response already
   * closed and the error kept for the final exception; or a stop, after which the caller returns
   * the response or throws {@link #failure(IOException)}.
   */
  Decision afterAttempt(Response response, IOException error, boolean canceled, boolean interrupted)
      throws IOException {
    boolean retryable;
    boolean provenUnprocessed;
    long retryAfterNanos = RetryAfter.ABSENT;
    if (response != null) {
      if (!isRetryable(response)) {
        if (attempt == 1) config.budget.deposit();
        config.notifySucceeded(request, response, attempt);
        return null;
      }
      retryable = true;
      provenUnprocessed = Classifier.provesNotProcessed(response);
      retryAfterNanos = RetryAfter.delayNanos(response, config.clock);
      if (retryAfterNanos != RetryAfter.ABSENT && config.originGate != null && provenUnprocessed) {
        // Never close the origin for longer than any call would wait: a hostile "68 years" would
        // otherwise lock every call out long after the server recovered.
        long now = config.time.nanoTime();
        long closedFor = Math.min(retryAfterNanos, config.policy.maxRetryAfterNanos());
        config.originGate.close(request.url(), now, now + closedFor, response.code());
      }
    } else if (!canceled && !interrupted && hasDeadline() && remainingNanos() <= 0) {
      // The attempt ran into the deadline (its shrunk timeouts or the deadline watch).
      lastFailure = RetryInterceptor.describe(null, error);
      config.notifyGaveUp(request, attempt, GiveUpReason.DEADLINE_EXCEEDED, lastFailure);
      return Decision.stop(GiveUpReason.DEADLINE_EXCEEDED);
    } else {
      retryable = !canceled && !interrupted && isRetryable(error);
      // Never sent (no network request's headers were completely written: e.g. a connection shut
      // down by GOAWAY before the stream opened), or refused unprocessed. Without a tracker the
      // request is idempotent, or cannot be repeated anyway.
      provenUnprocessed =
          (tracker != null && !tracker.requestSent()) || Classifier.provesNotProcessed(error);
    }
    lastFailure = RetryInterceptor.describe(response, error);
    if (canceled || interrupted) {
      // Checked for responses too: a retry that cannot happen must not spend a budget token.
      GiveUpReason reason = canceled ? GiveUpReason.CANCELED : GiveUpReason.INTERRUPTED;
      config.notifyGaveUp(request, attempt, reason, lastFailure);
      if (response != null) {
        // The wait this response would lead to can no longer happen: end as a wait would.
        response.close();
        throw failure(canceled ? new IOException("Canceled") : new InterruptedIOException("interrupted"));
      }
      return Decision.stop(reason);
    }

    Decision decision =
        config.policy.decide(
            attempt,
            maxRetries,
            retryable,
            repeatableBody && (idempotent || provenUnprocessed),
            retryAfterNanos,
            remainingNanos(),
            previousDelayNanos,
            config.random);
    if (decision.isRetry() && !config.budget.tryWithdraw(config.time.nanoTime())) {
      decision = Decision.stop(GiveUpReason.BUDGET_EXHAUSTED);
    }
    if (!decision.isRetry()) {
      config.notifyGaveUp(request, attempt, decision.giveUp(), lastFailure);
      return decision;
    }

    config.notifyRetryScheduled(request, attempt, lastFailure, decision.delayNanos());
    if (response != null) {
      response.close(); // don't hold a pooled connection idle through the wait
    } else {
      if (earlier == null) earlier = new FailureHistory();
      earlier.add(error);
    }
    // Decorrelated jitter grows from its own previous draw; a server's Retry-After is not one.
    if (retryAfterNanos == RetryAfter.ABSENT) previousDelayNanos = decision.delayNanos();
    return decision;
  }

  /** A wait between attempts (or before the first) ended early by a cancel or an interrupt. */
  void waitFailed(IOException e, boolean interrupted) {
    String failure = lastFailure != null ? lastFailure : RetryInterceptor.describe(null, e);
    config.notifyGaveUp(
        request, attempt, interrupted ? GiveUpReason.INTERRUPTED : GiveUpReason.CANCELED, failure);
  }

  /**
   * The classifier's answer; a {@code retryOnResponse} predicate that throws ends the call with an
   * {@link IOException} (an interceptor must throw nothing else) and does not leak the response.
   */
  private boolean isRetryable(Response response) throws IOException {
    try {
      return config.classifier.isRetryable(response);
    } catch (RuntimeException e) {
      response.close();
      config.notifyGaveUp(request, attempt, GiveUpReason.NOT_RETRYABLE, "retryOnResponse predicate threw");
      throw failure(new IOException("okretry: the retryOnResponse predicate threw", e));
    }
  }

  private boolean isRetryable(IOException error) throws IOException {
    try {
      return config.classifier.isRetryable(error);
    } catch (RuntimeException e) {
      config.notifyGaveUp(request, attempt, GiveUpReason.NOT_RETRYABLE, "retryOnException predicate threw");
      IOException wrapped = new IOException("okretry: the retryOnException predicate threw", e);
      wrapped.addSuppressed(error);
      throw failure(wrapped);
    }
  }

  /**
   * The exception for an attempt okretry itself cut short at the deadline: a {@link
   * SocketTimeoutException}, as OkHttp's own timeouts are, with the cancel as its cause.
   */
  static IOException deadlineTimeout(IOException cause) {
    if (cause instanceof SocketTimeoutException) return cause;
    SocketTimeoutException timeout = new SocketTimeoutException("okretry deadline exceeded");
    timeout.initCause(cause);
    return timeout;
  }

  /** The deadline watch canceled the call during a wait (a wait that ended just too late). */
  IOException deadlinePassedWhileWaiting(IOException e) {
    config.notifyGaveUp(request, attempt, GiveUpReason.DEADLINE_EXCEEDED, lastFailure != null ? lastFailure : "deadline");
    return deadlineTimeout(e);
  }

  /**
   * {@code last} with the failures of earlier attempts attached as suppressed: at most the first
   * and the last few, with a marker counting those left out ({@link FailureHistory}).
   */
  IOException failure(IOException last) {
    if (earlier != null) {
      earlier.attachTo(last);
      earlier = null;
    }
    return last;
  }
}
