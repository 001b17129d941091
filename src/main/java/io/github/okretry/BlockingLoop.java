package io.github.okretry;

import io.github.okretry.internal.SendTracker;
import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.io.InterruptedIOException;
import kotlin.jvm.functions.Function0;
import okhttp3.Call;
import okhttp3.Interceptor.Chain;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The blocking driver's loop ({@link RetryInterceptor}): it acts on each {@link Step} of one
 * logical call on the thread that runs the call, sending on the interceptor's chain and sleeping
 * between attempts, and decides nothing itself.
 */
final class BlockingLoop {

  private BlockingLoop() {}

  /**
   * Runs one logical call for {@code request} (stamped) on {@code chain}, {@code callTimeoutNanos}
   * OkHttp's (0 for none), acting on each step. Most calls need no state for their first attempt
   * ({@link LogicalCall#open}): it goes within okretry's own deadline alone, and the call's state
   * is made only if it goes on ({@link LogicalCall#firstEnded}). {@code waits} sleeps between
   * attempts (the policy's time, or one that a close of its owner ends).
   */
  // firstEnded makes no state only for a response that ends the call: then response is there.
  @SuppressWarnings("NullAway")
  static Response run(
      Chain chain, RetryPolicy policy, Request request, long callTimeoutNanos, TimeSource waits)
      throws IOException {
    // Read before open() reports the attempt: a slow listener spends the call's time, as with
    // state; and the attempt's length, which a skipped retry counts, is known with no deadline too.
    long startNanos = policy.time.nanoTime();
    LogicalCall logical = LogicalCall.open(policy, request, callTimeoutNanos);
    if (logical != null) return run(chain, logical, null, waits);
    // Its own deadline is all the time the call has: timeouts shrunk to what is left of it (the
    // listener may have spent some), a watch; at least 1 ns, as an attempt with state gets.
    long ownNanos = LogicalCall.deadlineNanos(RequestTags.overrides(request), policy); // 0: none
    long leftNanos =
        ownNanos != 0 ? Math.max(1, ownNanos - (policy.time.nanoTime() - startNanos)) : 0;
    Chain attemptChain =
        ConnectionCheck.route(
            leftNanos != 0 ? AttemptSettings.withTimeoutsWithin(chain, leftNanos) : chain,
            policy,
            request.url());
    SendTracker tracker = SendTracker.attach(chain.call(), null); // OkHttp's own resends count
    DeadlineWatch watch = DeadlineWatch.start(chain.call(), leftNanos);
    Object outcome = send(attemptChain, request);
    int seen = seen(chain.call(), watch);
    Response response = outcome instanceof Response ? (Response) outcome : null;
    Throwable error = response == null ? (Throwable) outcome : null;
    logical =
        LogicalCall.firstEnded(
            policy, request, startNanos, response, error, seen, tracker, chain.call());
    if (logical == null) {
      tracker.forgetConnection(); // the caller's call may outlive it
      return response;
    }
    if (logical.decidedToRetry()) {
      ConnectionCheck.retrying(policy, tracker, chain.getDns(), request.url(), response, error);
    }
    try {
      return run(chain, logical, response, waits);
    } finally {
      tracker.forgetConnection(); // its attempts' tracker (watchedBy), if none was stopped
    }
  }

  /**
   * Runs {@code logical} from its next step, {@code response} in hand (of an attempt made without
   * state; else null): each step acted on, none decided here.
   */
  // A RETURN always has a response: the one in hand or okretry's own (Step.settle).
  @SuppressWarnings("NullAway")
  private static Response run(
      Chain chain, LogicalCall logical, @Nullable Response response, TimeSource waits)
      throws IOException {
    try {
      return drive(chain, logical, response, waits);
    } finally {
      logical.close(); // ended: done already; thrown out of: its kept body is given back here
    }
  }

  @SuppressWarnings("NullAway") // as run()
  private static Response drive(
      Chain chain, LogicalCall logical, @Nullable Response response, TimeSource waits)
      throws IOException {
    Call call = chain.call();
    TimeSource time = logical.policy.time;
    Attempt attempt = null; // the last sent: its watch of the call stops when this pass ends
    for (Step step = logical.next(null); ; ) {
      switch (step.kind()) {
        case SEND:
          attempt = Attempt.of(step);
          Chain attemptChain = AttemptSettings.apply(chain, attempt, time);
          attempt.attachTo(call);
          DeadlineWatch watch = DeadlineWatch.start(call, attempt.watchNanos());
          Object outcome = send(attemptChain, attempt.request());
          int seen = seen(call, watch);
          response = outcome instanceof Response ? (Response) outcome : null;
          Throwable error = response == null ? (Throwable) outcome : null;
          step = logical.ended(attempt, response, error, seen);
          if (!step.ends()) { // a retry: the interceptor has no hedges to DROP
            // Here, in the chain, the call still holds the connection that failed
            ConnectionCheck.retrying(
                logical.policy, attempt.tracker(), chain.getDns(), attempt.url(), response, error);
          }
          break;
        case WAIT:
          step.settle(response); // not held idle through the wait
          response = null;
          step = logical.next(sleep(step.waitNanos(), call, waits));
          break;
        case RETURN:
          stopWatching(attempt);
          return step.settle(response);
        default:
          stopWatching(attempt);
          step.settle(response);
          if (step.timedOut()) call.tag(TimedOut.class, TimedOut.MARK); // for whoever runs the call
          throw BlockingLoop.<IOException>rethrow(step.failure());
      }
    }
  }

  /**
   * A later pass on this call (an interceptor above that proceeds again) is a logical call of its
   * own: the watch this one left on the OkHttp call hears none of its requests.
   */
  private static void stopWatching(@Nullable Attempt attempt) {
    if (attempt != null) attempt.stopWatching();
  }

  /**
   * The tag of a call this loop ended because its time ran out ({@link Step#timedOut}), so that
   * whoever runs the call (a factory's {@code execute()}) reports it as canceled, as OkHttp reports
   * a call whose timeout fired. Its one value also supplies itself, so tagging allocates no lambda.
   */
  enum TimedOut implements Function0<TimedOut> {
    MARK;

    @Override
    public TimedOut invoke() {
      return this;
    }
  }

  /**
   * What this driver saw of its one call, for {@link LogicalCall#ended}: {@code watch} (null for
   * none) is stopped first, so that it cannot fire while user code runs on the outcome.
   */
  static int seen(Call call, @Nullable DeadlineWatch watch) {
    boolean watchFired = watch != null && watch.stop();
    return (watchFired ? Seen.WATCH_FIRED : 0)
        | (call.isCanceled() ? Seen.CALLER_CANCELED | Seen.ATTEMPT_CANCELED : 0)
        | (Thread.currentThread().isInterrupted() ? Seen.INTERRUPTED : 0);
  }

  /**
   * Sends {@code request} on {@code chain}: its response, or what the send threw (an IOException,
   * or any other throw from below, unchecked or checked and undeclared, which ends the call with
   * one onGaveUp), as one value, so that both kinds of attempt share this and allocate nothing for
   * it.
   */
  private static Object send(Chain chain, Request request) {
    try {
      return chain.proceed(request);
    } catch (Exception e) {
      // OkHttp 5 can throw a raw, undeclared InterruptedException while connecting, and it
      // clears the interrupt flag: restore the flag and report it as Java I/O does.
      if (!(e instanceof InterruptedException)) return e;
      Thread.currentThread().interrupt();
      return new InterruptedIOException("interrupted").initCause(e);
    } catch (Error e) {
      return e;
    }
  }

  /**
   * Throws {@code failure} as it is: an IOException, an unchecked throw from below, or a checked
   * one a Kotlin interceptor or body threw undeclared, which reaches the caller as it came.
   */
  // The cast is erased: any Throwable leaves as itself, declared as E for the compiler.
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException rethrow(Throwable failure) throws E {
    throw (E) failure;
  }

  /** Waits; returns what ended the wait early (a cancel, an interrupt, a close), or null. */
  private static @Nullable IOException sleep(long delayNanos, Call call, TimeSource waits) {
    try {
      waits.sleep(delayNanos, call);
      return null;
    } catch (IOException e) {
      return e;
    }
  }
}
