package io.github.okretry;

import io.github.okretry.internal.CallTimeouts;
import io.github.okretry.internal.SendTracker;
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
 * (sends an attempt as its own OkHttp call, a {@link Leg}; schedules a wait; delivers once) and
 * decides nothing itself. Between attempts nothing runs and no thread is held, only a scheduled
 * task.
 *
 * <p>With hedging several legs fly: a SEND arms a timer ({@link Attempt#hedgeAfterNanos}), at which
 * the loop asks {@link LogicalCall#next} again, and a SEND then is a hedge. Legs' callbacks and the
 * timer may run at once on different threads, while a {@link LogicalCall} is single-threaded: every
 * question to it while attempts are in flight is asked under {@link #lock}, and acted on after the
 * lock is released (no callback or cancel runs under it). The first step that is not a DROP ends
 * the round: the timer is stale and every other leg is canceled, its outcome closed unread.
 */
final class AsyncLoop {

  private static final Logger log = LoggerFactory.getLogger(RetryingCall.class);

  private final RetryingCall call;
  private final Callback callback;
  private final LogicalCall logical;
  private final AtomicBoolean delivered = new AtomicBoolean();
  // Orders a wait's task with the cancel that may end the wait
  private final Object waitLock = new Object();
  private @Nullable ScheduledFuture<?> pending; // guarded by waitLock; null between waits
  volatile boolean starting; // while enqueue() runs the first step on the caller's thread
  // While a scheduled step runs on the factory's scheduler thread
  private volatile boolean onScheduler;

  /**
   * Serializes the logical call while attempts are in flight: two callbacks and a hedge timer may
   * run at once.
   */
  private final Object lock = new Object();

  // Guarded by lock: this round's, in flight or queued
  private final List<Leg> legs = new ArrayList<>(2);
  private @Nullable ScheduledFuture<?> hedgeTimer; // guarded by lock
  private int round; // guarded by lock: a hedge timer of an earlier round does nothing
  private boolean finished; // guarded by lock: a RETURN or THROW was decided

  AsyncLoop(RetryingCall call, Callback callback) {
    this.call = call;
    this.callback = callback;
    this.logical =
        LogicalCall.start(
            call.factory.policy,
            call.factory.policy.keys.stamp(call.request),
            CallTimeouts.nanosAllowed(call.timeout),
            call.factory.hedging);
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
      uncaught(t);
    } finally {
      onScheduler = false;
    }
  }

  private static void uncaught(Throwable t) {
    // Thrown from a scheduled task it would vanish into the task's future: the thread's handler
    // gets it instead, as a throw on an OkHttp dispatcher thread would reach it.
    Thread thread = Thread.currentThread();
    thread.getUncaughtExceptionHandler().uncaughtException(thread, t);
  }

  /** Asks for the next step, after a wait or at the start, and acts on it. */
  void next() {
    call.factory.waiting.remove(this);
    resume(
        call.canceled
            ? new IOException("Canceled")
            : call.factory.isClosed() ? new IOException("RetryingCallFactory is closed") : null);
  }

  /**
   * Asks for the next step with no attempt in flight ({@code endedBy}: what cut the wait short) and
   * acts on it.
   */
  private void resume(@Nullable IOException endedBy) {
    try {
      act(logical.next(endedBy), null);
    } catch (RuntimeException | Error t) {
      crashed(t);
      throw t;
    }
  }

  /** Does what {@code step} says; {@code response} is the attempt's, if one is in hand. */
  @SuppressWarnings("NullAway") // a RETURN always has a response: the one in hand or okretry's own
  private void act(Step step, @Nullable Response response) {
    Response out = step.settle(response); // the caller's, for a RETURN; else closed
    switch (step.kind()) {
      case SEND:
        fly(Attempt.of(step)).go();
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

  /**
   * {@code attempt}, a SEND, as a new leg in flight, to {@link Leg#go}; the hedge it arms, if any.
   */
  private Leg fly(Attempt attempt) {
    synchronized (lock) {
      Leg leg = new Leg(attempt);
      legs.add(leg);
      if (!attempt.hedge) call.current = leg.sent; // a hedge becomes the call's own only if it wins
      arm(attempt.hedgeAfterNanos);
      return leg;
    }
  }

  /**
   * Schedules the hedge timer of this round after {@code delayNanos} (0: none). Guarded by lock.
   */
  private void arm(long delayNanos) {
    if (delayNanos <= 0) return;
    int armedRound = round;
    try {
      hedgeTimer =
          call.factory.scheduler.schedule(
              () -> hedgeDue(armedRound), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // the factory is closing: no hedge, the attempts in flight answer alone
    }
  }

  /** The hedge timer fired (on the scheduler thread): a wait with attempts in flight is over. */
  private void hedgeDue(int armedRound) {
    try {
      Leg leg;
      synchronized (lock) {
        if (round != armedRound || finished) return; // the round ended: the timer was stale
        hedgeTimer = null;
        if (call.canceled || call.factory.isClosed()) return;
        Step step = logical.next(null);
        if (step.kind() != Step.Kind.SEND) return; // a DROP: no hedge now
        leg = fly(Attempt.of(step));
      }
      leg.go();
    } catch (RuntimeException | Error t) {
      uncaught(t);
    }
  }

  /** {@code leg}'s attempt ended with {@code response} or {@code error}. */
  private void after(Leg leg, @Nullable Response response, @Nullable IOException error) {
    leg.onCall.attempt = null; // the response reaches its call: it keeps no attempt alive
    try {
      // The watch stops before any user code runs on the outcome.
      int seen =
          (leg.watch != null && leg.watch.stop() ? Seen.WATCH_FIRED : 0)
              | (call.canceled ? Seen.CALLER_CANCELED : 0)
              | (leg.sent.isCanceled() ? Seen.ATTEMPT_CANCELED : 0);
      Step step;
      List<Leg> losers = null;
      synchronized (lock) {
        legs.remove(leg);
        // A loser, canceled when another answered for the call (its outcome unread), or a hedge
        // that never left the dispatcher (never an attempt of the call).
        if (finished || !leg.departed) {
          Step.DROP.settle(response); // closes it
          return;
        }
        try {
          step = logical.ended(leg.attempt, response, error, seen);
        } catch (Error e) {
          Step.DROP.settle(response);
          throw e;
        }
        if (step.kind() != Step.Kind.DROP) {
          losers = endRound();
          if (step.kind() != Step.Kind.WAIT) {
            finished = true;
            // The call's own from now on: isCanceled() reports the winner, not a loser
            call.current = leg.sent;
          }
        }
      }
      cancel(losers); // their outcomes find the call finished, or never departed
      // A retry, or a failure dropped while another attempt answers for the call: either way no
      // later attempt goes back over its connection
      SendTracker tracker = leg.attempt.tracker();
      if (!step.ends()) {
        ConnectionCheck.retrying(
            logical.policy,
            tracker,
            call.factory.attemptClient.dns(),
            leg.attempt.url(),
            response,
            error);
      }
      if (tracker != null) tracker.forgetConnection(); // the caller's call may outlive the attempt
      act(step, response);
    } catch (RuntimeException | Error t) {
      crashed(t);
      throw t; // into OkHttp's AsyncCall, which cancels the attempt and rethrows it
    }
  }

  /**
   * The round is over (guarded by lock): its hedge timer is stale; returns its legs, to cancel, or
   * null for none.
   */
  private @Nullable List<Leg> endRound() {
    round++;
    ScheduledFuture<?> t = hedgeTimer;
    hedgeTimer = null;
    if (t != null) t.cancel(false);
    List<Leg> losers = legs.isEmpty() ? null : new ArrayList<>(legs);
    legs.clear();
    return losers;
  }

  private static void cancel(@Nullable List<Leg> legs) { // outside the lock: a cancel may call back
    if (legs != null) {
      for (Leg leg : legs) {
        leg.sent.cancel();
      }
    }
  }

  /**
   * The caller canceled (or user code threw): the hedge timer is dropped and every leg canceled, as
   * {@link RetryingCall#cancel} cancels {@code current}.
   */
  void cancelAll() {
    List<Leg> flying;
    synchronized (lock) {
      flying = endRound();
    }
    cancel(flying);
  }

  /**
   * User code (a predicate, a listener, the callback) or a bug threw {@code t} while this call was
   * driven. As OkHttp's AsyncCall does for an interceptor that throws, the call is canceled and,
   * unless the callback already ran, it gets {@code IOException("canceled due to " + t)} with
   * {@code t} as its cause (as OkHttp 5.5 does); the caller then rethrows {@code t}. Never a silent
   * hang.
   */
  private void crashed(Throwable t) {
    call.canceled = true;
    Call sent = call.current;
    if (sent != null) sent.cancel();
    cancelAll(); // their watches stop as their outcomes come
    ScheduledFuture<?> f;
    synchronized (waitLock) {
      f = pending;
      pending = null;
    }
    if (f != null) f.cancel(false);
    call.factory.waiting.remove(this);
    logical.close(); // its kept body, if any, is given back: no attempt will write it
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
        pending =
            call.factory.scheduler.schedule(this::afterWait, delayNanos, TimeUnit.NANOSECONDS);
      }
    } catch (RejectedExecutionException e) {
      call.factory.waiting.remove(this);
      act(logical.next(new IOException("RetryingCallFactory is closed", e)), null);
      return;
    }
    call.factory.watchScheduler();
    if (call.canceled || call.factory.isClosed()) {
      endWait(call.canceled ? "Canceled" : "RetryingCallFactory is closed");
    }
  }

  /**
   * Ends a wait at once: the retry task is dropped and the caller told on another thread (the
   * thread calling cancel() or close() runs no listener or callback, and so never throws what they
   * throw).
   */
  void endWait(String why) {
    ScheduledFuture<?> f;
    synchronized (waitLock) {
      f = pending;
    }
    if (f != null && f.cancel(false)) {
      call.factory.waiting.remove(this);
      onDispatcher(() -> resume(new IOException(why)), true);
    }
  }

  private void deliverResponse(Response response) {
    if (!delivered.compareAndSet(false, true)) {
      response.close();
      return;
    }
    onCallbackThread(
        () -> {
          try {
            callback.onResponse(call, response);
          } catch (IOException e) {
            log.warn("Callback.onResponse threw for {}", call, e);
            response.close();
          }
        });
  }

  private void deliverFailure(IOException e) {
    if (!delivered.compareAndSet(false, true)) return;
    onCallbackThread(() -> callback.onFailure(call, e));
  }

  /**
   * Runs a callback: on a dispatcher thread if the outcome was decided inside enqueue() (a callback
   * never runs on the enqueuing thread) or on the scheduler thread (a slow callback must not hold
   * up every waiting retry), else here.
   */
  private void onCallbackThread(Runnable callbackRun) {
    if (starting || onScheduler) onDispatcher(callbackRun, false);
    else callbackRun.run();
  }

  /**
   * Runs {@code task} (a listener, a callback) on the client's dispatcher, as OkHttp calls back. If
   * the dispatcher was shut down, here after all, as OkHttp calls back when its executor rejects a
   * call (enqueue() returns normally and the callback still runs exactly once); if {@code quiet},
   * what it throws then is logged, never passed to the caller of cancel() or close().
   */
  private void onDispatcher(Runnable task, boolean quiet) {
    try {
      call.factory.attemptClient.dispatcher().executorService().execute(task);
      return;
    } catch (RejectedExecutionException e) {
      // fall through: run it on this thread
    }
    try {
      task.run();
    } catch (RuntimeException | Error t) {
      if (!quiet) throw t;
      log.warn("A callback or listener of {} threw; ignored here", call, t);
    }
  }

  /**
   * An attempt, or a hedge still queued: its own OkHttp call, callback, deadline watch and
   * departure gate. The client's dispatcher may hold a hedge behind other calls to its host (at
   * most {@code maxRequestsPerHost}, 5 by default), even the attempt it hedges: it is an attempt
   * only once it leaves that queue ({@link #departs}); until then its outcome is closed unread.
   */
  final class Leg implements Callback, Attempt.Departure {
    final Attempt attempt;
    final Call sent;
    // stop(): true if it fired (the deadline passed, the call canceled)
    private final @Nullable DeadlineWatch watch;
    final Attempt.OnCall onCall; // emptied once its outcome is in hand
    // Guarded by lock: an attempt of the call (a hedge: once it left the dispatcher)
    boolean departed;
    // Its outcome was acted on in its call's chain: the callback that follows is not heard
    private volatile boolean answeredInChain;

    Leg(Attempt attempt) {
      this.attempt = attempt;
      // Its own OkHttp call would start the client's callTimeout afresh: what the logical call has
      // left bounds it instead (reading the body too); okretry's deadline bounds it until its
      // outcome is in hand (the watch), so a slow predicate or listener cannot cancel a response
      // in time.
      sent = call.factory.attemptClient.newCall(attempt.request());
      onCall = Attempt.OnCall.tag(sent, attempt);
      sent.timeout().timeout(attempt.callTimeoutNanos(), TimeUnit.NANOSECONDS);
      for (EventListener l : call.eventListeners) sent.addEventListener(l);
      attempt.departure = this; // before enqueue() hands it to another thread
      attempt.attachTo(sent);
      watch = DeadlineWatch.start(sent, attempt.watchNanos());
      departed = !attempt.hedge;
    }

    /** Outside the lock: an executor that rejects the call fails it on this thread. */
    void go() {
      if (call.canceled) sent.cancel(); // cancel() may have run before the leg was in flight
      sent.enqueue(this);
    }

    /**
     * Its call left the dispatcher (on its thread, from {@link AttemptSettings}): true if it goes,
     * now paid for and counted; the next hedge is armed on it.
     */
    @Override
    public boolean departs() {
      synchronized (lock) {
        if (departed) return true; // asked again: the answer stands
        if (finished || call.canceled || call.factory.isClosed()) return false;
        Step step = logical.departs(attempt);
        if (step.kind() != Step.Kind.SEND) return false;
        departed = true;
        arm(Attempt.of(step).hedgeAfterNanos);
        return true;
      }
    }

    @Override
    public void answeredInChain(Response response) {
      answeredInChain = true;
      after(this, response, null);
    }

    @Override
    public void onResponse(Call c, Response response) {
      if (!answeredInChain) after(this, response, null);
    }

    @Override
    public void onFailure(Call c, IOException e) {
      // After an answer in the chain, only a cancel that came as the call ended: OkHttp closes
      // the response it had, which the decision already settled
      if (!answeredInChain) after(this, null, e);
    }
  }
}
