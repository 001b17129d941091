package io.github.okretry;

import io.github.okretry.internal.CallTimeouts;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.EventListener;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The async driver's loop for one enqueued {@link RetryingCall}: it acts on each {@link Step}
 * (sends an attempt as its own OkHttp call, schedules a wait, delivers once) and decides nothing
 * itself. Between attempts nothing runs and no thread is held, only a scheduled task.
 *
 * <p>With hedging, a second attempt may be in flight beside the first (an {@link AsyncHedging}
 * leg, its own OkHttp call and callback), sent when the hedge timer fires.
 * Their callbacks and the timer may then run at once on different threads, while a {@link
 * LogicalCall} is single-threaded: every question to it while attempts are in flight is asked
 * under {@link #lock}, and what it answers is acted on after the lock is released (no callback
 * or cancel runs under it). The first step that is not a DROP ends the round: the hedge timer is
 * canceled, and if the call is over, every other attempt in flight is canceled; their outcomes,
 * when they come, find the call {@link #finished} and are closed unread.
 */
final class AsyncLoop implements Callback {

  private static final Logger log = LoggerFactory.getLogger(RetryingCall.class);

  final RetryingCall call;
  private final Callback callback;
  final LogicalCall logical;
  private final AtomicBoolean delivered = new AtomicBoolean();
  /** Orders a wait's scheduled task with the cancel that may end the wait. */
  private final Object waitLock = new Object();
  private @Nullable ScheduledFuture<?> pending; // guarded by waitLock; null between waits
  /** Bounds the attempt in flight by okretry's own deadline; stopped once its outcome is in. */
  private volatile @Nullable DeadlineWatch watch;
  /** The attempt in flight, sent by send() and handed back to the call by after(). */
  private volatile @Nullable Attempt inFlight;
  /** True while enqueue() runs the first step on the caller's thread. */
  volatile boolean starting;
  /** True while a scheduled step runs on the factory's scheduler thread. */
  private volatile boolean onScheduler;
  /** Serializes the logical call while attempts are in flight: two callbacks and a hedge timer may run at once. */
  final Object lock = new Object();
  private boolean primaryFlying; // guarded by lock: the attempt of next()'s SEND is in flight
  private @Nullable AsyncHedging hedging; // guarded by lock: made when the call first may hedge
  boolean finished; // guarded by lock: a RETURN or THROW was decided

  AsyncLoop(RetryingCall call, Callback callback) {
    this.call = call;
    this.callback = callback;
    this.logical =
        LogicalCall.start(call.factory.policy, call.factory.policy.keys.stamp(call.request),
            CallTimeouts.nanosAllowed(call.timeout), call.factory.hedging);
  }

  /** A wait is over: from now on a cancel acts on the next attempt, not on the wait. */
  private void afterWait() {
    synchronized (waitLock) {
      pending = null;
    }
    onScheduler = true;
    try {
      next();
    } catch (RuntimeException | Error t) {
      // Thrown from a scheduled task it would vanish into the task's future: hand it to the
      // thread's handler instead, as a throw on an OkHttp dispatcher thread would reach it.
      Thread thread = Thread.currentThread();
      thread.getUncaughtExceptionHandler().uncaughtException(thread, t);
    } finally {
      onScheduler = false;
    }
  }

  /** Asks for the next step, after a wait or at the start, and acts on it. */
  void next() {
    try {
      call.factory.waiting.remove(this);
      IOException ended =
          call.canceled ? new IOException("Canceled")
              : call.factory.isClosed() ? new IOException("RetryingCallFactory is closed")
              : null;
      act(logical.next(ended), null);
    } catch (RuntimeException | Error t) {
      crashed(t);
      throw t;
    }
  }

  /** Does what {@code step} says; {@code response} is the attempt's, if one is in hand. */
  private void act(Step step, @Nullable Response response) {
    Response out = step.settle(response); // the caller's, for a RETURN; else closed
    switch (step.kind()) {
      case SEND:
        send(step.attempt());
        return;
      case WAIT:
        schedule(step.waitNanos());
        return;
      case RETURN:
        deliverResponse(out);
        return;
      case DROP:
        return; // another attempt in flight answers for the call
      default:
        // As a plain OkHttp call whose timeout fired reports isCanceled(), whichever of the
        // attempt's call timeout or its shrunk read timeout happened to fire first.
        if (step.timedOut()) call.timedOut = true;
        deliverFailure((IOException) step.failure());
    }
  }

  private void send(Attempt attempt) {
    // Each attempt is its own OkHttp call, which would start the client's full callTimeout (or
    // none) afresh: bound it instead by what the logical call has left. call.timeout() gets
    // OkHttp's own timeout semantics (it also bounds reading the body); okretry's own deadline,
    // as in the interceptor, bounds the attempt until its outcome is in hand and no longer (a
    // DeadlineWatch stopped in decide()), so a slow predicate or listener cannot cancel a
    // response decided in time.
    Call sent = newCall(attempt);
    call.current = sent;
    inFlight = attempt;
    attempt.attachTo(sent);
    if (call.canceled) sent.cancel(); // cancel() may have run before current was set
    watch = DeadlineWatch.start(sent, attempt.watchNanos());
    synchronized (lock) {
      primaryFlying = true;
      long hedgeNanos = logical.hedgeDelayNanos();
      AsyncHedging h = hedging;
      if (h == null && hedgeNanos > 0) hedging = h = new AsyncHedging(this);
      if (h != null) h.roundStarted(hedgeNanos);
    }
    sent.enqueue(this);
  }

  Call newCall(Attempt attempt) {
    Call sent = call.factory.attemptClient.newCall(
        attempt.request().newBuilder().tag(Attempt.class, attempt).build());
    sent.timeout().timeout(attempt.callTimeoutNanos(), TimeUnit.NANOSECONDS);
    for (EventListener l : call.eventListeners) sent.addEventListener(l);
    return sent;
  }

  @Override
  public void onResponse(Call attempt, Response response) {
    after(attempt, null, response, null);
  }

  @Override
  public void onFailure(Call attempt, IOException e) {
    after(attempt, null, null, e);
  }

  /** {@code attempt} ended: the primary's ({@code leg} null) or a hedge's. */
  void after(Call attempt, AsyncHedging.@Nullable Leg leg, @Nullable Response response, @Nullable IOException error) {
    try {
      DeadlineWatch w;
      if (leg == null) {
        w = watch;
        watch = null;
      } else {
        w = leg.watch;
        leg.watch = null;
      }
      boolean fired = w != null && w.stop(); // before any user code runs on the outcome
      int seen =
          (fired ? Seen.WATCH_FIRED : 0)
              | (call.canceled ? Seen.CALLER_CANCELED : 0)
              | (attempt.isCanceled() ? Seen.ATTEMPT_CANCELED : 0);
      Step step;
      List<Call> losers = null;
      synchronized (lock) {
        if (finished) { // a loser, canceled when another answered for the call
          if (response != null) response.close();
          return;
        }
        AsyncHedging h = hedging;
        if (leg == null) {
          primaryFlying = false;
        } else {
          if (h != null) h.ended(leg);
          if (!leg.departed) { // it never left the dispatcher: never an attempt of the call
            if (response != null) response.close();
            return;
          }
        }
        try {
          step = logical.ended(leg == null ? inFlight : leg.attempt, response, error, seen);
        } catch (Error e) {
          if (response != null) response.close();
          throw e;
        }
        if (step.kind() != Step.Kind.DROP) { // the round is over
          if (h != null) h.roundEnded();
          // Ending the call: every other attempt. Waiting for a retry: the hedge still queued, if any
          // (one in flight would have made this a DROP); it would never go.
          losers = attemptsInFlight();
          if (step.kind() != Step.Kind.WAIT) {
            finished = true;
            // The call's own call from now on, so isCanceled() reports the winner, not a loser canceled.
            if (leg != null) call.current = attempt;
          }
        }
      }
      if (losers != null) {
        for (Call loser : losers) loser.cancel(); // their outcomes find the call finished
      }
      act(step, response);
    } catch (RuntimeException | Error t) {
      crashed(t);
      throw t; // into OkHttp's AsyncCall, which cancels the attempt and rethrows it
    }
  }

  /** The OkHttp calls of this round still in flight, or null for none. */
  private @Nullable List<Call> attemptsInFlight() { // guarded by lock
    List<Call> calls = null;
    Call primary = call.current;
    if (primaryFlying && primary != null) {
      calls = new ArrayList<>(2);
      calls.add(primary);
    }
    AsyncHedging h = hedging;
    return h != null ? h.addInFlight(calls) : calls;
  }

  /**
   * The caller canceled (or user code threw): the hedge timer is dropped and every hedge in
   * flight canceled, as {@link RetryingCall#cancel} cancels the attempt in {@code current}.
   */
  void cancelHedges() {
    AsyncHedging h;
    synchronized (lock) {
      h = hedging;
    }
    if (h != null) h.cancelAll();
  }

  /**
   * User code (a predicate, a listener, the callback) or a bug threw {@code t} while this call
   * was driven. As OkHttp's AsyncCall does for an interceptor that throws, the call is canceled
   * and, unless the callback already ran, it gets {@code IOException("canceled due to " + t)}
   * with {@code t} as its cause (as OkHttp 5.5 does); the caller then rethrows {@code t}. Never
   * a silent hang.
   */
  private void crashed(Throwable t) {
    call.canceled = true;
    Call sent = call.current;
    if (sent != null) sent.cancel();
    cancelHedges();
    DeadlineWatch w = watch;
    if (w != null) w.stop();
    ScheduledFuture<?> f;
    synchronized (waitLock) {
      f = pending;
      pending = null;
    }
    if (f != null) f.cancel(false);
    call.factory.waiting.remove(this);
    log.warn("{} threw {}; the call is canceled", call, t.toString());
    IOException failure = new IOException("canceled due to " + t);
    failure.initCause(t);
    try {
      deliverFailure(failure);
    } catch (RuntimeException | Error callbackThrew) {
      t.addSuppressed(callbackThrew);
    }
  }

  private void schedule(long delayNanos) {
    call.factory.waiting.add(this);
    try {
      // Under the lock, so the task cannot start (and schedule the next wait) before its own
      // future is recorded: a stale future would hide the live one from cancel() and close().
      synchronized (waitLock) {
        pending = call.factory.scheduler.schedule(this::afterWait, delayNanos, TimeUnit.NANOSECONDS);
      }
    } catch (RejectedExecutionException e) {
      call.factory.waiting.remove(this);
      act(logical.next(new IOException("RetryingCallFactory is closed", e)), null);
      return;
    }
    call.factory.watchScheduler();
    if (call.canceled || call.factory.isClosed()) endWait(call.canceled ? "Canceled" : "RetryingCallFactory is closed");
  }

  /**
   * Ends a wait at once: the retry task is dropped and the caller told on another thread (the
   * thread calling cancel() or close() runs no listener or callback, and so never throws what
   * they throw).
   */
  void endWait(String why) {
    ScheduledFuture<?> f;
    synchronized (waitLock) {
      f = pending;
    }
    if (f != null && f.cancel(false)) {
      call.factory.waiting.remove(this);
      offThisThread(() -> {
        try {
          act(logical.next(new IOException(why)), null);
        } catch (RuntimeException | Error t) {
          crashed(t);
          throw t;
        }
      });
    }
  }

  private void deliverResponse(Response response) {
    if (!delivered.compareAndSet(false, true)) {
      response.close();
      return;
    }
    onCallbackThread(() -> respond(response));
  }

  private void respond(Response response) {
    try {
      callback.onResponse(call, response);
    } catch (IOException e) {
      log.warn("Callback.onResponse threw for {}", call, e);
      response.close();
    }
  }

  private void deliverFailure(IOException e) {
    if (!delivered.compareAndSet(false, true)) return;
    onCallbackThread(() -> callback.onFailure(call, e));
  }

  /**
   * Runs a callback: on a dispatcher thread if the outcome was decided inside enqueue() (a
   * callback never runs on the enqueuing thread) or on the scheduler thread (a slow callback
   * must not hold up every waiting retry), else here. If the dispatcher was shut down, here
   * after all, as OkHttp itself calls back when its executor rejects a call: enqueue() returns
   * normally and the callback still runs exactly once.
   */
  private void onCallbackThread(Runnable callbackRun) {
    if (starting || onScheduler) {
      try {
        call.factory.attemptClient.dispatcher().executorService().execute(callbackRun);
        return;
      } catch (RejectedExecutionException e) {
        // fall through: call back on this thread
      }
    }
    callbackRun.run();
  }

  /**
   * Runs {@code task} (a listener, a callback) on the client's dispatcher, as OkHttp calls
   * back. If the dispatcher was shut down, here after all, but what it throws is logged, never
   * passed to the caller of cancel() or close().
   */
  private void offThisThread(Runnable task) {
    try {
      call.factory.attemptClient.dispatcher().executorService().execute(task);
      return;
    } catch (RejectedExecutionException e) {
      // fall through
    }
    try {
      task.run();
    } catch (RuntimeException | Error t) {
      log.warn("A callback or listener of {} threw; ignored here", call, t);
    }
  }
}
