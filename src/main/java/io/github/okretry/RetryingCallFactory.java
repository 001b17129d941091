package io.github.okretry;

import io.github.okretry.internal.TimeSource;
import java.io.Closeable;
import java.io.IOException;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okio.AsyncTimeout;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Call.Factory} that retries like {@link RetryInterceptor} without holding a thread while
 * it waits.
 *
 * <p>An interceptor can only wait by blocking the thread that runs the call, and for {@link
 * Call#enqueue} that is one of OkHttp's dispatcher threads; worse, OkHttp counts a waiting call
 * against {@code maxRequestsPerHost} (default 5), so five calls in backoff freeze every other call
 * to that host. Calls from this factory instead make each attempt a separate OkHttp call and, for
 * {@link Call#enqueue}, schedule the next attempt on a small scheduler: while waiting they hold no
 * dispatcher thread and no host slot. {@link Call#execute()} blocks the caller's thread, as the
 * interceptor does. Same {@link RetryPolicy}: idempotency keys, deadline, budget and listener; the
 * same {@link RetryOutcome} on the response or the exception a call ends with.
 *
 * <pre>{@code
 * RetryingCallFactory calls = RetryingCallFactory.create(client, RetryPolicy.builder().build());
 * calls.newCall(request).enqueue(callback);
 * }</pre>
 *
 * <p>Given a {@link HedgingPolicy}, it hedges as that policy says, each hedge a second OkHttp call
 * beside the first; {@link Call#execute()} then runs the attempts as {@code enqueue} does and
 * blocks for the outcome. A hedge waits in the client's dispatcher like any call (at most {@code
 * maxRequestsPerHost} to a host at once, 5 by default) and is paid for and reported only when it
 * leaves it: one still queued when its call is answered is never sent. To hedge a burst, give the
 * dispatcher room for the hedges.
 *
 * <p>The factory's policy governs its calls: a {@link RetryInterceptor} in {@code client} sends
 * each of the factory's attempts once, as that class describes. The factory owns a single daemon
 * scheduler thread unless you pass your own scheduler; {@link #close()} stops the one it owns.
 * Thread-safe.
 *
 * <p>Callbacks run on the client's dispatcher (also after a wait on the scheduler), never inside
 * {@link Call#cancel()} or {@link #close()}, which never throw what a callback or listener throws.
 * A {@link RuntimeException} thrown by a listener is logged and ignored; one thrown by a predicate
 * ends the call with {@code IOException("okretry: the retryOnResponse predicate threw")} (or {@code
 * retryOnException}), that exception as its cause, delivered as any failure. An {@link Error}
 * thrown by either ends the call as OkHttp ends a call whose interceptor throws one: the callback,
 * if it has not run, gets {@code IOException("canceled due to " + t)}, and {@code t} is rethrown on
 * the thread that ran it.
 */
public final class RetryingCallFactory implements Call.Factory, Closeable {

  final RetryPolicy policy;

  /** The hedging policy and what the factory learns of each origin for it; null: no hedging. */
  final Hedging.@Nullable Shared hedging;

  final OkHttpClient attemptClient;
  final OkHttpClient blockingClient;
  final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;

  /** Enqueued calls between attempts, so close() can end their waits. */
  final Set<AsyncLoop> waiting =
      Collections.newSetFromMap(new ConcurrentHashMap<AsyncLoop, Boolean>());

  /** The OkHttp calls of execute() now waiting between attempts, so close() can end those too. */
  private final Set<Call> blockingWaits =
      Collections.newSetFromMap(new ConcurrentHashMap<Call, Boolean>());

  /** True while a SchedulerWatch polls a caller's scheduler on behalf of waiting calls. */
  private final AtomicBoolean schedulerWatched = new AtomicBoolean();

  private volatile boolean closed;

  /**
   * A factory hedging by {@code hedging} (null: none) on {@code scheduler} (null: one of its own).
   */
  private RetryingCallFactory(
      OkHttpClient client,
      RetryPolicy policy,
      @Nullable HedgingPolicy hedging,
      @Nullable ScheduledExecutorService scheduler) {
    if (client == null) throw new NullPointerException("client == null");
    if (policy == null) throw new NullPointerException("policy == null");
    this.policy = policy;
    this.hedging = hedging != null ? new Hedging.Shared(hedging) : null;
    // Both clients need the Retry-After guard once: add it unless the caller already did.
    OkHttpClient guarded =
        client.networkInterceptors().contains(RetryAfterGuard.INSTANCE)
            ? client
            : client.newBuilder().addNetworkInterceptor(RetryAfterGuard.INSTANCE).build();
    // First among the application interceptors, on both clients: every interceptor of the client
    // runs once per attempt and sees that attempt's timeouts, whether the call is enqueued or
    // executed, as those after a RetryInterceptor do.
    OkHttpClient.Builder attempts = guarded.newBuilder();
    attempts.interceptors().add(0, new AttemptSettings(policy.time));
    this.attemptClient = attempts.build();
    OkHttpClient.Builder blocking = guarded.newBuilder();
    blocking.interceptors().add(0, new RetryInterceptor(policy, new ClosingWaits(policy.time)));
    this.blockingClient = blocking.build();
    this.ownsScheduler = scheduler == null;
    this.scheduler = scheduler != null ? scheduler : ownScheduler();
  }

  /**
   * A factory over {@code client} with its own scheduler (one daemon thread, made now) that runs
   * calls under {@code policy}, without hedging.
   *
   * @param client the client that sends each attempt
   * @param policy the policy: its settings, budget and listener
   * @return a new factory
   * @throws NullPointerException if an argument is null
   */
  public static RetryingCallFactory create(OkHttpClient client, RetryPolicy policy) {
    return new RetryingCallFactory(client, policy, null, null);
  }

  /**
   * A factory over {@code client} with its own scheduler (one daemon thread, made now) that runs
   * calls under {@code policy} and hedges them by {@code hedging}.
   *
   * @param client the client that sends each attempt
   * @param policy the policy: its settings, budget and listener
   * @param hedging when to send a hedge beside an unanswered attempt
   * @return a new factory
   * @throws NullPointerException if an argument is null
   */
  public static RetryingCallFactory create(
      OkHttpClient client, RetryPolicy policy, HedgingPolicy hedging) {
    return new RetryingCallFactory(client, policy, notNull(hedging, "hedging"), null);
  }

  /**
   * A factory over {@code client} that runs calls under {@code policy}, without hedging, and
   * schedules retries on {@code scheduler}, which must run tasks promptly (each only enqueues an
   * OkHttp call) and which {@link #close()} leaves running. If {@code scheduler} terminates (say
   * after {@code shutdownNow()}) while calls wait on it, those calls fail within about 200 ms with
   * {@code IOException("RetryingCallFactory's scheduler was shut down")}.
   *
   * @param client the client that sends each attempt
   * @param policy the policy: its settings, budget and listener
   * @param scheduler runs the delayed attempts
   * @return a factory using {@code scheduler}
   * @throws NullPointerException if an argument is null
   */
  public static RetryingCallFactory create(
      OkHttpClient client, RetryPolicy policy, ScheduledExecutorService scheduler) {
    return new RetryingCallFactory(client, policy, null, notNull(scheduler, "scheduler"));
  }

  /**
   * A factory over {@code client} that runs calls under {@code policy}, hedges them by {@code
   * hedging}, and schedules retries and hedges on {@code scheduler}, as {@link
   * #create(OkHttpClient, RetryPolicy, ScheduledExecutorService)} does.
   *
   * @param client the client that sends each attempt
   * @param policy the policy: its settings, budget and listener
   * @param hedging when to send a hedge beside an unanswered attempt
   * @param scheduler runs the delayed attempts and the hedge timers
   * @return a factory using {@code scheduler}
   * @throws NullPointerException if an argument is null
   */
  public static RetryingCallFactory create(
      OkHttpClient client,
      RetryPolicy policy,
      HedgingPolicy hedging,
      ScheduledExecutorService scheduler) {
    return new RetryingCallFactory(
        client, policy, notNull(hedging, "hedging"), notNull(scheduler, "scheduler"));
  }

  private static ScheduledExecutorService ownScheduler() {
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "okretry scheduler");
              t.setDaemon(true);
              return t;
            });
    scheduler.setRemoveOnCancelPolicy(true); // a canceled call's pending retry is dropped at once
    return scheduler;
  }

  private static <T> T notNull(@Nullable T value, String name) {
    if (value == null) throw new NullPointerException(name + " == null");
    return value;
  }

  /** A call for {@code request} that retries by this factory's policy. */
  @Override
  public Call newCall(Request request) {
    if (request == null) throw new NullPointerException("request == null");
    return new RetryingCall(this, request);
  }

  /**
   * Ends at once every wait between attempts, of {@code enqueue()}d calls and of {@code execute()}d
   * ones alike: an enqueued call's callback gets {@code IOException("RetryingCallFactory is
   * closed")} on the client's dispatcher, an {@code execute()} throws it. Attempts in flight finish
   * as usual but are not retried. Stops the scheduler this factory made, if it made one. The client
   * is left as it is. Runs no callback or listener on this thread, so it never throws what they
   * throw.
   */
  @Override
  public void close() {
    closed = true;
    try {
      for (AsyncLoop call : waiting) call.endWait("RetryingCallFactory is closed");
      // Canceling the OkHttp call wakes its waiting thread; the interceptor sees this factory
      // closed and reports it as such. A call whose attempt is in flight is not in this set.
      for (Call call : blockingWaits) call.cancel();
    } finally {
      if (ownsScheduler) scheduler.shutdownNow();
    }
  }

  /** How often waiting calls check that a caller's scheduler still runs. */
  static final long SCHEDULER_POLL_MILLIS = 200;

  /**
   * A call now waits on the scheduler. A caller's scheduler may be shut down under it, which tells
   * no one (shutdownNow() drops the tasks): while calls wait, poll it on okio's watchdog thread and
   * end their waits once it has terminated. The factory's own scheduler stops only in close(),
   * which ends the waits itself.
   */
  void watchScheduler() {
    if (ownsScheduler || !schedulerWatched.compareAndSet(false, true)) return;
    new SchedulerWatch().start();
  }

  /** One poll of the caller's scheduler, {@link #SCHEDULER_POLL_MILLIS} from its start. */
  private final class SchedulerWatch extends AsyncTimeout {
    void start() {
      timeout(SCHEDULER_POLL_MILLIS, TimeUnit.MILLISECONDS);
      enter();
    }

    @Override
    protected void timedOut() {
      if (scheduler.isTerminated()) {
        schedulerWatched.set(false);
        for (AsyncLoop call : waiting) {
          call.endWait("RetryingCallFactory's scheduler was shut down");
        }
      } else if (!waiting.isEmpty()) {
        new SchedulerWatch().start();
      } else {
        schedulerWatched.set(false);
        // A call that began waiting just now may have found the flag still set: look again.
        if (!waiting.isEmpty()) watchScheduler();
      }
    }
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * The time the interceptor of {@code execute()} waits on: {@code time}'s, but a wait ends with
   * {@code IOException("RetryingCallFactory is closed")} once this factory closes, so the
   * interceptor needs nothing of the factory.
   */
  private final class ClosingWaits implements TimeSource {
    private final TimeSource time;

    ClosingWaits(TimeSource time) {
      this.time = time;
    }

    @Override
    public long nanoTime() {
      return time.nanoTime();
    }

    @Override
    public void sleep(long nanos, Call call) throws IOException {
      blockingWaits.add(call); // before the check, so close() cannot slip between
      try {
        if (closed) throw new IOException("RetryingCallFactory is closed");
        try {
          time.sleep(nanos, call);
        } catch (IOException e) {
          // close() cancels the waiting call to wake it: report the close, not a cancel.
          throw closed ? new IOException("RetryingCallFactory is closed") : e;
        }
      } finally {
        blockingWaits.remove(call);
      }
    }
  }
}
