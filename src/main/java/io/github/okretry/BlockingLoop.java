package io.github.okretry;

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
   * Runs one logical call for {@code request} (stamped) on {@code chain}, acting on each step;
   * {@code logical} is its state, or null if {@link StatelessAttempt#open} made none: its first
   * attempt then goes without state, bounded by okretry's own deadline alone (the state is made
   * only if the call goes on). {@code waits} sleeps between attempts (the policy's time, or one
   * that a close of its owner ends).
   */
  // logical is null only until the first attempt, made without state, has ended: an attempt in
  // hand, and every step after that one (a WAIT among them), comes from it. A RETURN always has a
  // response: the one in hand or okretry's own (Step.settle).
  @SuppressWarnings("NullAway")
  static Response run(
      Chain chain,
      RetryPolicy policy,
      Request request,
      @Nullable LogicalCall logical,
      TimeSource waits)
      throws IOException {
    Call call = chain.call();
    TimeSource time = policy.time;
    Response response = null;
    for (Step step = logical != null ? logical.next(null) : StatelessAttempt.FIRST; ; ) {
      switch (step.kind()) {
        case SEND:
          Attempt attempt = logical != null ? Attempt.of(step) : null;
          Chain attemptChain;
          long watchNanos;
          long startNanos =
              0; // without state: when the attempt started, if its deadline runs from it
          if (attempt != null) {
            attemptChain = AttemptSettings.apply(chain, attempt, time);
            attempt.attachTo(call);
            watchNanos = attempt.watchNanos();
          } else { // its own deadline is all the time the call has: timeouts shrunk to it, a watch
            watchNanos =
                LogicalCall.deadlineNanos(RequestTags.overrides(request), policy); // 0: none
            if (watchNanos != 0) startNanos = time.nanoTime();
            attemptChain =
                watchNanos == 0 ? chain : AttemptSettings.withTimeoutsWithin(chain, watchNanos);
          }
          DeadlineWatch watch = DeadlineWatch.start(call, watchNanos);
          Throwable error = null;
          try {
            response = proceed(attemptChain, attempt != null ? attempt.request() : request);
          } catch (IOException | RuntimeException | Error e) {
            error = e; // a throw from below ends the call with one onGaveUp
          }
          // The outcome is in hand: stop the watch before user code runs on it
          // (DeadlineWatch.stop).
          int seen = seen(call, watch != null && watch.stop());
          if (attempt != null) {
            step = logical.ended(attempt, response, error, seen);
          } else { // a response that ends the call by its status alone needs no state
            logical = StatelessAttempt.ended(policy, request, startNanos, response, error, seen);
            step = logical != null ? logical.next(null) : Step.RETURN;
          }
          break;
        case WAIT:
          step.settle(response); // not held idle through the wait
          response = null;
          step = logical.next(sleep(step.waitNanos(), call, waits));
          break;
        case RETURN:
          return step.settle(response);
        default:
          step.settle(response);
          if (step.timedOut()) call.tag(TimedOut.class, TimedOut.MARK); // for whoever runs the call
          Throwable failure = step.failure();
          if (failure instanceof RuntimeException) throw (RuntimeException) failure;
          if (failure instanceof Error) throw (Error) failure;
          throw (IOException) failure;
      }
    }
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

  /** What this driver saw of its one call, for {@link LogicalCall#ended}. */
  static int seen(Call call, boolean watchFired) {
    return (watchFired ? Seen.WATCH_FIRED : 0)
        | (call.isCanceled() ? Seen.CALLER_CANCELED | Seen.ATTEMPT_CANCELED : 0)
        | (Thread.currentThread().isInterrupted() ? Seen.INTERRUPTED : 0);
  }

  static Response proceed(Chain chain, Request request) throws IOException {
    try {
      return chain.proceed(request);
    } catch (Exception e) {
      // OkHttp 5 can throw a raw, undeclared InterruptedException while connecting, and it
      // clears the interrupt flag: restore the flag and report it as Java I/O does.
      if (!(e instanceof InterruptedException)) throw e;
      Thread.currentThread().interrupt();
      throw (IOException) new InterruptedIOException("interrupted").initCause(e);
    }
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
