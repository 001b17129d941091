package io.github.okretry;

import io.github.okretry.internal.Classifier;
import io.github.okretry.internal.Decision;
import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RetryAfter;
import io.github.okretry.internal.RetryPolicy;
import io.github.okretry.internal.SendTracker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
  private List<IOException> earlier;
  private SendTracker tracker;
  private Call trackedCall;
  private String lastFailure;
  private int throttledCode; // set when beforeAttempt() stops for ORIGIN_THROTTLED
  private long throttledWaitNanos;

  // Pacing (OriginPacer): a retry that waits on an origin's Retry-After, or a call the origin
  // gate holds, takes a release time from that origin's pacer once its own wait is over.
  private static final int NOT_PACED = 0, WAITING = 1, RELEASED = 2;
  private int pacing = NOT_PACED;
  private String pacedOrigin; // the origin whose pacer this call waits on
  private long pacedLatestNanos; // the latest it may go, whatever the pacer says
  private long pacedSlotNanos; // its release time once RELEASED
  private static final long NOT_TIMED = Long.MIN_VALUE;
  private long attemptStartedNanos = NOT_TIMED; // set only while some origin is paced

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
    this.idempotent =
        IDEMPOTENT_METHODS.contains(request.method())
            || request.header(config.keys.headerName()) != null;
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
   * Consults the origin before an attempt: the origin-wide {@code Retry-After} gate (if on), then,
   * for a call waiting on the origin (a retry after a 429/503 {@code Retry-After}, or a call the
   * gate held), the origin's pacer. Null to go now, a retry decision to wait first (then ask
   * again), or a stop for {@link GiveUpReason#ORIGIN_THROTTLED}, after which the caller gets
   * {@link #throttledResponse}.
   */
  Decision beforeAttempt() {
    if (config.originWideRetryAfter) {
      long now = config.time.nanoTime();
      OriginGate.Closed closed = config.originGate.check(request.url(), now);
      if (closed != null) {
        long wait = closed.notBeforeNanos() - now;
        long remaining = remainingNanos();
        if (wait > config.policy.maxRetryAfterNanos() || wait >= remaining) {
          throttledCode = closed.code();
          throttledWaitNanos = wait;
          config.notifyGaveUp(request, attempt, GiveUpReason.ORIGIN_THROTTLED, "HTTP " + closed.code() + " (origin)");
          return Decision.stop(GiveUpReason.ORIGIN_THROTTLED);
        }
        // A call held at the gate joins the crowd waiting on the origin: paced like a retry.
        if (pacing == NOT_PACED) {
          waitOn(OriginGate.origin(request.url()), now + config.policy.latestWaitNanos(wait, remaining));
        }
        return Decision.waitThenRetry(config.policy.spreadUpward(wait, remaining, config.random));
      }
    }
    return pace();
  }

  /**
   * Once this call's own wait on an origin is over, takes a release time from the origin's
   * pacer: null to go now, or the wait until it (after which the caller asks again and goes).
   */
  private Decision pace() {
    if (pacing != WAITING) return null;
    long now = config.time.nanoTime();
    pacedSlotNanos = config.originGate.reserve(pacedOrigin, now, pacedLatestNanos);
    pacing = RELEASED; // one wait for the turn, then go: however the clock behaves
    return pacedSlotNanos - now > 0 ? Decision.waitThenRetry(pacedSlotNanos - now) : null;
  }

  private void waitOn(String origin, long latestNanos) {
    pacing = WAITING;
    pacedOrigin = origin;
    pacedLatestNanos = latestNanos;
  }

  /**
   * Tells the origin's pacer what it answered: to this call's paced attempt, or, for any other
   * admitted call, that the origin admits this client's calls (only if it has a pacer).
   */
  private void tellPacer(Response response, boolean refused, long retryAfterNanos) {
    if (pacing == RELEASED) {
      pacing = NOT_PACED;
      if (response == null) return; // an exception says nothing about the origin's pace
      config.originGate.released(pacedOrigin, pacedSlotNanos, !refused, retryAfterNanos, config.time.nanoTime());
    } else if (response != null && !refused && attemptStartedNanos != NOT_TIMED) {
      config.originGate.admitted(response.request().url(), attemptStartedNanos);
    }
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
    // Only while some origin is paced: its pacer hears of the calls it does not pace, so it
    // does not mistake their load for its own spacing (OriginPacer).
    attemptStartedNanos = NOT_TIMED;
    if (pacing != RELEASED && config.originGate.size() > 0) {
      attemptStartedNanos = config.time.nanoTime();
      config.originGate.sent(request.url(), attemptStartedNanos);
    }
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
    boolean throttled = false; // a 429/503 with a Retry-After: the server said when to come back
    long retryAfterNanos = RetryAfter.ABSENT;
    if (response != null) {
      if (!isRetryable(response)) {
        tellPacer(response, Classifier.provesNotProcessed(response), RetryAfter.ABSENT);
        if (attempt == 1) config.budget.deposit();
        config.notifySucceeded(request, response, attempt);
        return null;
      }
      retryable = true;
      provenUnprocessed = Classifier.provesNotProcessed(response);
      retryAfterNanos = RetryAfter.delayNanos(response, config.clock);
      throttled = provenUnprocessed && retryAfterNanos != RetryAfter.ABSENT;
      tellPacer(response, provenUnprocessed, retryAfterNanos);
      if (throttled && config.originWideRetryAfter) {
        // Never close the origin for longer than any call would wait: a hostile "68 years" would
        // otherwise lock every call out long after the server recovered. The origin closed is
        // the one that answered: after a redirect, not the one first asked.
        long now = config.time.nanoTime();
        long closedFor = Math.min(retryAfterNanos, config.policy.maxRetryAfterNanos());
        config.originGate.close(response.request().url(), now, now + closedFor, response.code());
      }
    } else if (!canceled && !interrupted && hasDeadline() && remainingNanos() <= 0) {
      // The attempt ran into the deadline (its shrunk timeouts or the deadline watch).
      tellPacer(null, false, RetryAfter.ABSENT);
      lastFailure = RetryInterceptor.describe(null, error);
      config.notifyGaveUp(request, attempt, GiveUpReason.DEADLINE_EXCEEDED, lastFailure);
      return Decision.stop(GiveUpReason.DEADLINE_EXCEEDED);
    } else {
      tellPacer(null, false, RetryAfter.ABSENT);
      retryable = !canceled && !interrupted && isRetryable(error);
      // Never written (the tracker saw no request headers), or refused unprocessed. Without a
      // tracker the request is idempotent, or cannot be repeated anyway.
      provenUnprocessed =
          (tracker != null && !tracker.requestStarted()) || Classifier.provesNotProcessed(error);
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

    long remaining = remainingNanos();
    Decision decision =
        config.policy.decide(
            attempt,
            maxRetries,
            retryable,
            repeatableBody && (idempotent || provenUnprocessed),
            retryAfterNanos,
            remaining,
            previousDelayNanos,
            config.random);
    // A retry that waits out the server's own Retry-After costs the budget less (RetryBudget).
    if (decision.isRetry() && !config.budget.tryWithdraw(throttled, config.time.nanoTime())) {
      decision = Decision.stop(GiveUpReason.BUDGET_EXHAUSTED);
    }
    if (!decision.isRetry()) {
      config.notifyGaveUp(request, attempt, decision.giveUp(), lastFailure);
      return decision;
    }
    if (throttled) {
      // After its Retry-After this retry joins the origin's crowd, paced by the origin that
      // answered, within the same bounds as the spread: the ceiling, half the time left.
      waitOn(
          OriginGate.origin(response.request().url()),
          config.time.nanoTime() + config.policy.latestWaitNanos(retryAfterNanos, remaining));
    }

    config.notifyRetryScheduled(request, attempt, lastFailure, decision.delayNanos());
    if (response != null) {
      response.close(); // don't hold a pooled connection idle through the wait
    } else {
      if (earlier == null) earlier = new ArrayList<>(Math.min(maxRetries, 16));
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
      throw new IOException("okretry: the retryOnResponse predicate threw", e);
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

  /** {@code last} with the failures of earlier attempts attached as suppressed. */
  IOException failure(IOException last) {
    if (earlier != null) {
      for (IOException e : earlier) {
        if (e != last) last.addSuppressed(e);
      }
      earlier = null;
    }
    return last;
  }
}
