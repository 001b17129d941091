package io.github.okretry;

import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.io.InterruptedIOException;
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
   * Acts on each step of {@code logical}; {@code response} is one already in hand, or null;
   * {@code waits} sleeps between attempts (the policy's time, or one that a close of its owner
   * ends).
   */
  static Response run(Chain chain, LogicalCall logical, @Nullable Response response, TimeSource waits)
      throws IOException {
    Call call = chain.call();
    TimeSource time = logical.policy.time;
    for (Step step = logical.next(null); ; ) {
      switch (step.kind()) {
        case SEND:
          Attempt attempt = step.attempt();
          Chain attemptChain = AttemptSettings.apply(chain, attempt, time);
          attempt.attachTo(call);
          DeadlineWatch watch = DeadlineWatch.start(call, attempt.watchNanos());
          Throwable error = null;
          try {
            response = proceed(attemptChain, attempt.request());
          } catch (IOException | RuntimeException | Error e) {
            error = e;
          }
          // The outcome is in hand: stop the watch before user code (a predicate, a listener) runs
          // on it, so a response decided before the deadline reaches the caller.
          boolean fired = watch != null && watch.stop();
          step = logical.ended(attempt, response, error, seen(call, fired));
          break;
        case WAIT:
          if (response != null) response.close(); // not held idle through the wait
          response = null;
          step = logical.next(sleep(step.waitNanos(), call, waits));
          break;
        case RETURN:
          Response out = step.responseOr(response);
          if (response != null && out != response) response.close(); // a local one stands for it
          return out;
        default:
          if (response != null) response.close();
          Throwable failure = step.failure();
          if (failure instanceof RuntimeException) throw (RuntimeException) failure;
          if (failure instanceof Error) throw (Error) failure;
          throw (IOException) failure;
      }
    }
  }

  /**
   * Makes the first attempt of a call {@link StatelessAttempt#open} made no state for, bounded as {@link
   * #run} bounds any attempt by okretry's own deadline, which is all the time the call has (its
   * timeouts shrunk to it, a {@link DeadlineWatch}); the state is made only if the call goes on.
   */
  static Response runStateless(
      Chain chain, RetryPolicy policy, Request request, TimeSource waits) throws IOException {
    long deadlineNanos = RetryOverrides.deadlineNanos(RequestTags.overrides(request), policy); // 0: none
    long startNanos = deadlineNanos == 0 ? 0 : policy.time.nanoTime();
    Chain attemptChain = deadlineNanos == 0 ? chain : AttemptSettings.withTimeoutsWithin(chain, deadlineNanos);
    DeadlineWatch watch = DeadlineWatch.start(chain.call(), deadlineNanos);
    Response response = null;
    Throwable error = null;
    try {
      response = proceed(attemptChain, request);
    } catch (IOException | RuntimeException | Error e) {
      error = e; // a throw from below ends the call with one onGaveUp, as in the loop
    }
    boolean fired = watch != null && watch.stop(); // before any user code, as in the loop
    LogicalCall logical =
        StatelessAttempt.ended(policy, request, startNanos, response, error, seen(chain.call(), fired));
    return logical == null ? response : run(chain, logical, response, waits);
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
