package io.github.okretry;

import io.github.okretry.internal.LogText;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place that tells the {@link RetryListener} and writes okretry's DEBUG log, so both
 * drivers report the same events in the same order (they reach it only through {@link
 * LogicalCall}). A listener that throws is logged at WARN and ignored: it can never change a call's
 * outcome. The log names the method and the redacted URL, never a header value.
 */
final class Events {

  // One of three loggers, with RetryInterceptor's (a call passed through) and AsyncLoop's, named
  // RetryingCall after the call it reports on; "io.github.okretry" covers them.
  private static final Logger log = LoggerFactory.getLogger(Events.class);

  private final RetryListener listener;
  private final boolean hearsNetworkRequests;

  /** The look okretry makes: by reflection. */
  static final MethodLookup REFLECTION = Events::declarerOfOnNetworkRequest;

  Events(RetryListener listener) {
    this(listener, REFLECTION);
  }

  /** Events whose override check asks {@code lookup}: tests make it fail as a platform may. */
  Events(RetryListener listener, MethodLookup lookup) {
    this.listener = listener;
    this.hearsNetworkRequests = overridesOnNetworkRequest(listener, lookup);
  }

  /**
   * The class that declares the {@code onNetworkRequest} a listener class runs: a seam over the one
   * reflective look okretry makes, so that a test can make it fail as a platform does.
   */
  interface MethodLookup {
    Class<?> declarerOfOnNetworkRequest(Class<?> listenerClass) throws NoSuchMethodException;
  }

  private static Class<?> declarerOfOnNetworkRequest(Class<?> listenerClass)
      throws NoSuchMethodException {
    Method method =
        listenerClass.getMethod("onNetworkRequest", Request.class, int.class, int.class);
    // Below Android API 24, D8 and R8 move a default method's body to a companion class and give
    // each class that inherits it a synthetic method forwarding there: not the app's override.
    return method.isSynthetic() ? RetryListener.class : method.getDeclaringClass();
  }

  /** True if a listener is set, so work done only to feed it can be skipped when none is. */
  boolean hasListener() {
    return listener != RetryListener.NONE;
  }

  /**
   * True if each network request of an attempt must be watched (an {@code EventListener} on the
   * call): a listener implements {@link RetryListener#onNetworkRequest}, or one is set and the
   * DEBUG log notes OkHttp's own retries. Read once per call.
   */
  boolean watchesNetworkRequests() {
    return hasListener() && (hearsNetworkRequests || log.isDebugEnabled());
  }

  /**
   * True unless {@code listener} keeps RetryListener's empty onNetworkRequest: a reflective look,
   * once per policy, that only saves a listener without it the cost of watching each call's network
   * requests (a synthetic method, the forwarder Android's desugaring adds, is no override). Where
   * the look fails, okretry assumes the method is overridden and watches: every event is still
   * delivered, and only the first attempt's saving is lost. The look fails with {@code
   * NoSuchMethodException} where a shrinker renamed the method, with a {@code LinkageError} ({@code
   * NoClassDefFoundError}) where another public method of the listener's class names a class that
   * is not there (reflection resolves them all), and with GraalVM's {@code
   * MissingReflectionRegistrationError}, an {@code Error}, in a native image that throws for
   * reflection it has no metadata for. Only the VM's own failures (out of memory or stack) pass.
   */
  static boolean overridesOnNetworkRequest(RetryListener listener, MethodLookup lookup) {
    Throwable failure;
    try {
      return lookup.declarerOfOnNetworkRequest(listener.getClass()) != RetryListener.class;
    } catch (NoSuchMethodException | RuntimeException e) { // SecurityException among them
      failure = e;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Error e) { // LinkageError, GraalVM's MissingReflectionRegistrationError
      failure = e;
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "Cannot tell whether {} implements RetryListener.onNetworkRequest ({}); watching each"
              + " call's network requests",
          listener.getClass().getName(),
          failure.toString());
    }
    return true;
  }

  void attemptStarted(Request request, int attempt) {
    if (!hasListener()) return;
    try {
      listener.onAttemptStarted(request, attempt);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onAttemptStarted threw; ignored", e);
    }
  }

  void hedgeStarted(Request request, int attempt, long afterNanos) {
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} no answer after {} ms; hedging with attempt {}",
          request.method(),
          request.url().redact(),
          TimeUnit.NANOSECONDS.toMillis(afterNanos),
          attempt);
    }
    if (!hasListener()) return;
    try {
      listener.onHedgeStarted(request, attempt, afterNanos);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onHedgeStarted threw; ignored", e);
    }
  }

  /**
   * Attempt {@code winner} answered first while {@code othersInFlight} more were in flight: they
   * are canceled.
   */
  void hedgeWon(Request request, int winner, boolean winnerIsHedge, int othersInFlight) {
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} attempt {} ({}) answered first; canceling {} other attempt(s) in flight",
          request.method(),
          request.url().redact(),
          winner,
          winnerIsHedge ? "a hedge" : "not a hedge",
          othersInFlight);
    }
  }

  void networkRequest(Request request, int attempt, int requestInAttempt) {
    if (requestInAttempt > 1 && log.isDebugEnabled()) {
      log.debug(
          "{} {} attempt {}: OkHttp sent request {} by itself (its own retry or a follow-up)",
          request.method(),
          request.url().redact(),
          attempt,
          requestInAttempt);
    }
    if (!hasListener()) return;
    try {
      listener.onNetworkRequest(request, attempt, requestInAttempt);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onNetworkRequest threw; ignored", e);
    }
  }

  void retryScheduled(Request request, int attempt, String failure, long delayNanos) {
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} attempt {} failed ({}); retrying in {} ms",
          request.method(),
          request.url().redact(),
          attempt,
          failure,
          TimeUnit.NANOSECONDS.toMillis(delayNanos));
    }
    if (!hasListener()) return;
    try {
      listener.onRetryScheduled(request, attempt, failure, delayNanos);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onRetryScheduled threw; ignored", e);
    }
  }

  void gaveUp(Request request, int attempts, GiveUpReason reason, String failure) {
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} gave up after {} attempt(s): {} ({})",
          request.method(),
          request.url().redact(),
          attempts,
          reason,
          failure);
    }
    if (!hasListener()) return;
    try {
      listener.onGaveUp(request, attempts, reason, failure);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onGaveUp threw; ignored", e);
    }
  }

  void succeeded(Request request, Response response, int attempts) {
    if (attempts > 1 && log.isDebugEnabled()) {
      log.debug(
          "{} {} {}",
          request.method(),
          request.url().redact(),
          returnedAfterRetries(response.code(), attempts));
    }
    if (!hasListener()) return;
    try {
      listener.onSucceeded(request, response, attempts);
    } catch (RuntimeException e) {
      log.warn("RetryListener.onSucceeded threw; ignored", e);
    }
  }

  /**
   * What the debug line says of a response handed to the caller after retries: a 2xx succeeded;
   * anything else (a 500, a 404, a 304) was returned because okretry does not retry it.
   */
  static String returnedAfterRetries(int code, int attempts) {
    return code >= 200 && code < 300
        ? "succeeded on attempt " + attempts + " (HTTP " + code + ")"
        : "returned HTTP " + code + " from attempt " + attempts + " (not retryable)";
  }

  /**
   * A short, header-free description of an attempt's outcome, for listeners and logs. An
   * exception's message may quote what a server sent (a malformed status line), so it is escaped
   * and cut short ({@link LogText}).
   */
  static String describe(@Nullable Response response, @Nullable Throwable error) {
    if (response != null) return describeStatus(response.code());
    if (error == null) return "no outcome";
    String type = error.getClass().getSimpleName();
    if (type.isEmpty()) type = error.getClass().getName(); // an anonymous class
    String message = error.getMessage();
    return message == null ? type : type + ": " + LogText.safe(message);
  }

  /**
   * "HTTP 503": a constant for the statuses retried by default or commonly configured, so that a
   * retried call does not build the same string at each failure; built for any other.
   */
  static String describeStatus(int code) {
    switch (code) {
      case 408:
        return "HTTP 408";
      case 425:
        return "HTTP 425";
      case 429:
        return "HTTP 429";
      case 500:
        return "HTTP 500";
      case 502:
        return "HTTP 502";
      case 503:
        return "HTTP 503";
      case 504:
        return "HTTP 504";
      default:
        return "HTTP " + code;
    }
  }
}
