package io.github.okretry;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
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

/**
 * One logical call from {@link RetryingCallFactory}. Each attempt is its own OkHttp call; between
 * asynchronous attempts nothing runs and no thread is held, only a scheduled task.
 */
final class RetryingCall implements Call {

  final RetryingCallFactory factory;
  final Request request;
  private final AtomicBoolean executed = new AtomicBoolean();
  final Timeout timeout = new Timeout();
  private final ConcurrentHashMap<Class<?>, Object> tags = new ConcurrentHashMap<>();
  final List<EventListener> eventListeners = new CopyOnWriteArrayList<>();
  volatile boolean canceled;

  /** True once the call ended because its time ran out: OkHttp then reports a call as canceled. */
  volatile boolean timedOut;

  volatile @Nullable Call current;
  private volatile @Nullable AsyncLoop async;

  RetryingCall(RetryingCallFactory factory, Request request) {
    this.factory = factory;
    this.request = request;
    timeout.timeout(factory.attemptClient.callTimeoutMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public Request request() {
    return request;
  }

  /**
   * Runs the call on the calling thread. If the factory hedges, the attempts run as {@link
   * #enqueue} runs them (a hedge needs a second call in flight, which one blocked chain cannot
   * have) and this thread waits for the outcome; an interrupt cancels the call and throws {@link
   * InterruptedIOException} with the flag restored.
   */
  @Override
  public Response execute() throws IOException {
    if (!executed.compareAndSet(false, true)) throw new IllegalStateException("Already Executed");
    if (factory.hedging != null) return executeHedged();
    Call call = factory.blockingClient.newCall(request);
    call.timeout().timeout(timeout.timeoutNanos(), TimeUnit.NANOSECONDS);
    if (timeout.hasDeadline()) call.timeout().deadlineNanoTime(timeout.deadlineNanoTime());
    for (EventListener l : eventListeners) call.addEventListener(l);
    current = call;
    if (canceled) call.cancel();
    try {
      return call.execute();
    } catch (IOException e) {
      // As a plain OkHttp call whose timeout fired reports isCanceled(): the logical call decided
      // it ran out of time, whichever fired first (the call timeout or a timeout shrunk to it).
      if (call.tag(BlockingLoop.TimedOut.class) != null) timedOut = true;
      throw e;
    }
  }

  private Response executeHedged() throws IOException {
    Outcome outcome = new Outcome();
    start(outcome);
    try {
      outcome.done.await();
    } catch (InterruptedException e) {
      cancel();
      Thread.currentThread().interrupt();
      InterruptedIOException interrupted = new InterruptedIOException("interrupted");
      interrupted.initCause(e);
      throw interrupted;
    }
    if (outcome.response != null) return outcome.response;
    IOException failure = outcome.failure;
    // The failure itself, as the callback got it (its stack is the dispatcher thread's, where the
    // attempt failed), so that its type, message and suppressed list are what execute() promises.
    throw failure != null ? failure : new IOException("no outcome");
  }

  /** What the callback of a hedged execute() got, once. */
  private static final class Outcome implements Callback {
    final CountDownLatch done = new CountDownLatch(1);
    volatile @Nullable Response response;
    volatile @Nullable IOException failure;

    @Override
    public void onResponse(Call call, Response r) {
      response = r;
      done.countDown();
    }

    @Override
    public void onFailure(Call call, IOException e) {
      failure = e;
      done.countDown();
    }
  }

  /**
   * Runs the call, calling back exactly once on the client's dispatcher (on the thread at hand only
   * if the dispatcher was shut down, as OkHttp calls back when its executor rejects a call).
   *
   * @throws NullPointerException if {@code callback} is null (before anything is sent)
   * @throws IllegalStateException if the call was already executed
   */
  @Override
  public void enqueue(Callback callback) {
    if (callback == null) throw new NullPointerException("callback == null");
    if (!executed.compareAndSet(false, true)) throw new IllegalStateException("Already Executed");
    start(callback);
  }

  private void start(Callback callback) {
    AsyncLoop run = new AsyncLoop(this, callback);
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
   * callback or listener runs on this thread: the callback gets {@code IOException("Canceled")} on
   * the client's dispatcher.
   */
  @Override
  public void cancel() {
    canceled = true;
    Call call = current;
    if (call != null) call.cancel();
    AsyncLoop run = async;
    if (run != null) {
      run.cancelAll();
      run.endWait("Canceled");
    }
  }

  @Override
  public boolean isExecuted() {
    return executed.get();
  }

  /**
   * True once {@link #cancel()} was called, or, as for a plain OkHttp call, once the call's timeout
   * (or okretry's deadline) fired and canceled the attempt in flight.
   */
  @Override
  public boolean isCanceled() {
    if (canceled || timedOut) return true;
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
  public <T> @Nullable T tag(KClass<T> type) {
    return tag(JvmClassMappingKt.getJavaClass(type));
  }

  @Override
  public <T> @Nullable T tag(Class<? extends T> type) {
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
}
