package io.github.okretry;

import io.github.okretry.internal.CallTimeouts;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.EventListener;
import okhttp3.Request;
import okhttp3.Response;
import okio.Timeout;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One logical call from {@link RetryingCallFactory}. Each attempt is its own OkHttp call; between
 * asynchronous attempts nothing runs and no thread is held, only a scheduled task.
 */
final class RetryingCall implements Call {

  private static final Logger log = LoggerFactory.getLogger(RetryingCall.class);

  private final RetryingCallFactory factory;
  private final Request request;
  private final AtomicBoolean executed = new AtomicBoolean();
  private final Timeout timeout = new Timeout();
  private final ConcurrentHashMap<Class<?>, Object> tags = new ConcurrentHashMap<>();
  private final List<EventListener> eventListeners = new CopyOnWriteArrayList<>();
  private volatile boolean canceled;
  private volatile @Nullable Call current;
  private volatile @Nullable Async async;

  RetryingCall(RetryingCallFactory factory, Request request) {
    this.factory = factory;
    this.request = request;
    timeout.timeout(factory.attemptClient.callTimeoutMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public Request request() {
    return request;
  }

  @Override
  public Response execute() throws IOException {
    if (!executed.compareAndSet(false, true)) throw new IllegalStateException("Already Executed");
    Call call = factory.blockingClient.newCall(request);
    call.timeout().timeout(timeout.timeoutNanos(), TimeUnit.NANOSECONDS);
    if (timeout.hasDeadline()) call.timeout().deadlineNanoTime(timeout.deadlineNanoTime());
    for (EventListener l : eventListeners) call.addEventListener(l);
    current = call;
    if (canceled) call.cancel();
    return call.execute();
  }

  /**
   * Runs the call, calling back exactly once on another thread: on OkHttp's dispatcher, or on the
   * factory's scheduler after a wait.
   *
   * @throws NullPointerException if {@code callback} is null (before anything is sent)
   * @throws IllegalStateException if the call was already executed
   */
  @Override
  public void enqueue(Callback callback) {
    if (callback == null) throw new NullPointerException("callback == null");
    if (!executed.compareAndSet(false, true)) throw new IllegalStateException("Already Executed");
    Async run = new Async(callback);
    async = run;
    run.starting = true;
    try {
      run.next();
    } finally {
      run.starting = false;
    }
  }

  /**
   * Cancels the call: an attempt in flight is canceled, a wait ends at once. As in OkHttp, no
   * callback or listener runs on this thread: the callback gets {@code IOException("Canceled")}
   * on the client's dispatcher.
   */
  @Override
  public void cancel() {
    canceled = true;
    Call call = current;
    if (call != null) call.cancel();
    Async run = async;
    if (run != null) run.endWait("Canceled");
  }

  @Override
  public boolean isExecuted() {
    return executed.get();
  }

  /**
   * True once {@link #cancel()} was called, or, as for a plain OkHttp call, once the call's
   * timeout (or okretry's deadline) fired and canceled the attempt in flight.
   */
  @Override
  public boolean isCanceled() {
    if (canceled) return true;
    Call call = current;
    return call != null && call.isCanceled();
  }

  /**
   * The whole logical call's timeout, all attempts and waits; initially the client's {@code
   * callTimeout}. Its deadline, if set, counts too.
   */
  @Override
  public Timeout timeout() {
    return timeout;
  }

  /**
   * Adds {@code eventListener} to every attempt made from now on.
   *
   * @throws NullPointerException if {@code eventListener} is null
   */
  @Override
  public void addEventListener(EventListener eventListener) {
    if (eventListener == null) throw new NullPointerException("eventListener == null");
    eventListeners.add(eventListener);
  }

  @Override
  public <T> T tag(KClass<T> type) {
    return tag(JvmClassMappingKt.getJavaClass(type));
  }

  @Override
  public <T> T tag(Class<? extends T> type) {
    return type.cast(tags.get(type));
  }

  @Override
  public <T> T tag(KClass<T> type, Function0<? extends T> computeIfAbsent) {
    return tag(JvmClassMappingKt.getJavaClass(type), computeIfAbsent);
  }

  @Override
  public <T> T tag(Class<T> type, Function0<? extends T> computeIfAbsent) {
    Object existing = tags.get(type);
    if (existing == null) {
      T computed = computeIfAbsent.invoke();
      existing = tags.putIfAbsent(type, computed);
      if (existing == null) existing = computed;
    }
    return type.cast(existing);
  }

  @Override
  public Call clone() {
    return factory.newCall(request);
  }

  @Override
  public String toString() {
    return "RetryingCall{" + request.method() + " " + request.url().redact() + "}";
  }

  /** Drives one enqueued logical call: attempt, decide, schedule, attempt again, deliver once. */
  final class Async implements Callback {
    private final Callback callback;
    private final LogicalCall logical;
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

    Async(Callback callback) {
      this.callback = callback;
      this.logical =
          LogicalCall.start(
              factory.policy, factory.policy.keys.stamp(request), CallTimeouts.nanosAllowed(timeout));
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
        factory.waiting.remove(this);
        IOException ended =
            canceled ? new IOException("Canceled")
                : factory.isClosed() ? new IOException("RetryingCallFactory is closed")
                : null;
        act(logical.next(ended), null);
      } catch (RuntimeException | Error t) {
        crashed(t);
        throw t;
      }
    }

    /** Does what {@code step} says; {@code response} is the attempt's, if one is in hand. */
    private void act(Step step, @Nullable Response response) {
      switch (step.kind()) {
        case SEND:
          send(step.attempt());
          return;
        case WAIT:
          if (response != null) response.close(); // not held idle through the wait
          schedule(step.waitNanos());
          return;
        case RETURN:
          deliverResponse(step.responseOr(response));
          return;
        default:
          if (response != null) response.close();
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
      Call call = factory.attemptClient.newCall(
          attempt.request().newBuilder().tag(Attempt.class, attempt).build());
      call.timeout().timeout(attempt.callTimeoutNanos(), TimeUnit.NANOSECONDS);
      for (EventListener l : eventListeners) call.addEventListener(l);
      current = call;
      inFlight = attempt;
      attempt.attachTo(call);
      if (canceled) call.cancel(); // cancel() may have run before current was set
      watch = DeadlineWatch.start(call, attempt.watchNanos());
      call.enqueue(this);
    }

    @Override
    public void onResponse(Call call, Response response) {
      after(call, response, null);
    }

    @Override
    public void onFailure(Call call, IOException e) {
      after(call, null, e);
    }

    private void after(Call attempt, @Nullable Response response, @Nullable IOException error) {
      try {
        DeadlineWatch w = watch;
        watch = null;
        boolean fired = w != null && w.stop(); // before any user code runs on the outcome
        int seen =
            (fired ? Seen.WATCH_FIRED : 0)
                | (canceled ? Seen.CALLER_CANCELED : 0)
                | (attempt.isCanceled() ? Seen.ATTEMPT_CANCELED : 0);
        Step step;
        try {
          step = logical.ended(inFlight, response, error, seen);
        } catch (Error e) {
          if (response != null) response.close();
          throw e;
        }
        act(step, response);
      } catch (RuntimeException | Error t) {
        crashed(t);
        throw t; // into OkHttp's AsyncCall, which cancels the attempt and rethrows it
      }
    }

    /**
     * User code (a predicate, a listener, the callback) or a bug threw {@code t} while this call
     * was driven. As OkHttp's AsyncCall does for an interceptor that throws, the call is canceled
     * and, unless the callback already ran, it gets {@code IOException("canceled due to " + t)}
     * with {@code t} as its cause (as OkHttp 5.5 does); the caller then rethrows {@code t}. Never
     * a silent hang.
     */
    private void crashed(Throwable t) {
      canceled = true;
      Call call = current;
      if (call != null) call.cancel();
      DeadlineWatch w = watch;
      if (w != null) w.stop();
      ScheduledFuture<?> f;
      synchronized (waitLock) {
        f = pending;
        pending = null;
      }
      if (f != null) f.cancel(false);
      factory.waiting.remove(this);
      log.warn("{} threw {}; the call is canceled", RetryingCall.this, t.toString());
      IOException failure = new IOException("canceled due to " + t);
      failure.initCause(t);
      try {
        deliverFailure(failure);
      } catch (RuntimeException | Error callbackThrew) {
        t.addSuppressed(callbackThrew);
      }
    }

    private void schedule(long delayNanos) {
      factory.waiting.add(this);
      try {
        // Under the lock, so the task cannot start (and schedule the next wait) before its own
        // future is recorded: a stale future would hide the live one from cancel() and close().
        synchronized (waitLock) {
          pending = factory.scheduler.schedule(this::afterWait, delayNanos, TimeUnit.NANOSECONDS);
        }
      } catch (RejectedExecutionException e) {
        factory.waiting.remove(this);
        act(logical.next(new IOException("RetryingCallFactory is closed", e)), null);
        return;
      }
      factory.watchScheduler();
      if (canceled || factory.isClosed()) endWait(canceled ? "Canceled" : "RetryingCallFactory is closed");
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
        factory.waiting.remove(this);
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
        callback.onResponse(RetryingCall.this, response);
      } catch (IOException e) {
        log.warn("Callback.onResponse threw for {}", RetryingCall.this, e);
        response.close();
      }
    }

    private void deliverFailure(IOException e) {
      if (!delivered.compareAndSet(false, true)) return;
      onCallbackThread(() -> callback.onFailure(RetryingCall.this, e));
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
          factory.attemptClient.dispatcher().executorService().execute(callbackRun);
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
        factory.attemptClient.dispatcher().executorService().execute(task);
        return;
      } catch (RejectedExecutionException e) {
        // fall through
      }
      try {
        task.run();
      } catch (RuntimeException | Error t) {
        log.warn("A callback or listener of {} threw; ignored here", RetryingCall.this, t);
      }
    }
  }
}
