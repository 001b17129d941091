package io.github.okretry;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The hedging half of one {@link AsyncLoop}: the hedge timer (a task on the factory's scheduler),
 * the hedges in flight ({@link Leg}: each its own OkHttp call, callback and deadline watch) and
 * their cancellation. It acts only: whether a hedge goes is the {@link LogicalCall}'s answer,
 * asked under the loop's lock. Made by the loop when the call first says a hedge may be due, so
 * a call that never hedges pays nothing for it. Every method but the legs' callbacks and gates,
 * and {@link #cancelAll}, runs under the loop's lock.
 *
 * <p>A due hedge is enqueued on the client's dispatcher, which may hold it behind other calls to
 * its host (at most {@code maxRequestsPerHost} run, 5 by default), including the very attempt it
 * hedges. It is an attempt only once it leaves that queue: {@link AttemptSettings} then asks its
 * leg ({@link Leg#departs}), and the call pays for it, counts and reports it, or drops it unsent.
 * A leg that never left is canceled with its round and its failure ignored.
 */
final class AsyncHedging {

  private final AsyncLoop loop;
  private @Nullable List<Leg> legs; // hedges in flight; made at the first
  private @Nullable ScheduledFuture<?> timer;
  private int round; // a timer of an earlier round does nothing

  AsyncHedging(AsyncLoop loop) {
    this.loop = loop;
  }

  /** A round starts (the primary was sent): the timer of the last one is stale; arm this one's. */
  void roundStarted(long delayNanos) {
    round++;
    arm(delayNanos);
  }

  /** The round is over: a timer still armed does nothing. */
  void roundEnded() {
    round++;
    cancelTimer();
  }

  /** {@code leg} ended: no longer in flight. */
  void ended(Leg leg) {
    List<Leg> flying = legs;
    if (flying != null) flying.remove(leg);
  }

  /** Adds the hedges in flight to {@code calls} (made if null and there are any); returns it. */
  @Nullable List<Call> addInFlight(@Nullable List<Call> calls) {
    List<Leg> flying = legs;
    if (flying == null || flying.isEmpty()) return calls;
    if (calls == null) calls = new ArrayList<>(flying.size() + 1);
    for (Leg l : flying) calls.add(l.sent);
    return calls;
  }

  /** Schedules the hedge timer of this round, if the call said one is due after {@code delayNanos}. */
  private void arm(long delayNanos) {
    if (delayNanos <= 0) return;
    int armedRound = round;
    try {
      timer = loop.call.factory.scheduler.schedule(() -> due(armedRound), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // the factory is closing: no hedge, the attempt in flight answers alone
    }
  }

  /** The hedge timer fired (on the scheduler thread): send a hedge if the call says so. */
  private void due(int armedRound) {
    RetryingCall call = loop.call;
    try {
      Call sent;
      Leg leg;
      synchronized (loop.lock) {
        if (round != armedRound || loop.finished) return; // the round ended: the timer was stale
        timer = null;
        if (call.canceled || call.factory.isClosed()) return;
        Attempt hedge = loop.logical.hedge();
        if (hedge == null) return;
        sent = loop.newCall(hedge);
        leg = new Leg(hedge, sent);
        List<Leg> flying = legs;
        if (flying == null) legs = flying = new ArrayList<>(2);
        flying.add(leg);
        hedge.departure = leg; // before enqueue() hands it to another thread
        hedge.attachTo(sent);
        leg.watch = DeadlineWatch.start(sent, hedge.watchNanos());
      }
      // Outside the lock: an executor that rejects the call fails it on this thread. A cancel
      // that came meanwhile found the call in legs and canceled it: it fails as canceled.
      if (call.canceled) sent.cancel();
      sent.enqueue(leg);
    } catch (RuntimeException | Error t) {
      Thread thread = Thread.currentThread();
      thread.getUncaughtExceptionHandler().uncaughtException(thread, t);
    }
  }

  /**
   * {@code leg}'s call left the dispatcher (on its thread, from {@link AttemptSettings}): true if
   * the hedge goes, now paid for and counted; then the next hedge's timer is armed, if more may fly.
   */
  private boolean departs(Leg leg) {
    RetryingCall call = loop.call;
    synchronized (loop.lock) {
      if (leg.departed) return true; // asked again: the answer stands
      if (loop.finished || call.canceled || call.factory.isClosed()) return false;
      if (!loop.logical.hedgeDeparts(leg.attempt)) return false;
      leg.departed = true;
      arm(loop.logical.hedgeDelayNanos());
      return true;
    }
  }

  private void cancelTimer() {
    ScheduledFuture<?> t = timer;
    timer = null;
    if (t != null) t.cancel(false);
  }

  /**
   * The caller canceled (or user code threw): the timer is dropped and every hedge in flight
   * canceled, outside the loop's lock (a cancel may call back).
   */
  void cancelAll() {
    List<Call> calls;
    synchronized (loop.lock) {
      cancelTimer();
      calls = addInFlight(null);
    }
    if (calls != null) {
      for (Call c : calls) c.cancel();
    }
  }

  /** A hedge, queued or in flight: its own OkHttp call, callback, deadline watch and gate. */
  final class Leg implements Callback, Attempt.Departure {
    final Attempt attempt;
    final Call sent;
    volatile @Nullable DeadlineWatch watch;
    boolean departed; // guarded by the loop's lock: it left the dispatcher and is an attempt of the call

    Leg(Attempt attempt, Call sent) {
      this.attempt = attempt;
      this.sent = sent;
    }

    @Override
    public boolean departs() {
      return AsyncHedging.this.departs(this);
    }

    @Override
    public void onResponse(Call c, Response response) {
      loop.after(c, this, response, null);
    }

    @Override
    public void onFailure(Call c, IOException e) {
      loop.after(c, this, null, e);
    }
  }
}
