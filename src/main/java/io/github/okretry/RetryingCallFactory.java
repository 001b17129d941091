package io.github.okretry;

import java.io.Closeable;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * A {@link Call.Factory} that retries like {@link RetryInterceptor} without holding a thread
 * while it waits.
 *
 * <p>An interceptor can only wait by blocking the thread that runs the call, and for {@link
 * Call#enqueue} that is one of OkHttp's dispatcher threads; worse, OkHttp counts a waiting call
 * against {@code maxRequestsPerHost} (default 5), so five calls in backoff freeze every other call
 * to that host. Calls from this factory instead make each attempt a separate OkHttp call and, for
 * {@link Call#enqueue}, schedule the next attempt on a small scheduler: while waiting they hold
 * no dispatcher thread and no host slot. {@link Call#execute()} blocks the caller's thread, as
 * the interceptor does. Same {@link RetryPolicy}: idempotency keys, deadline, budget and listener.
 *
 * <pre>{@code
 * RetryingCallFactory calls = RetryingCallFactory.create(client, RetryPolicy.create());
 * calls.newCall(request).enqueue(callback);
 * }</pre>
 *
 * <p>Give it a client <em>without</em> the {@code RetryInterceptor} (it would retry twice). The
 * factory owns a single daemon scheduler thread unless you pass your own scheduler; {@link
 * #close()} stops the one it owns. Thread-safe.
 */
public final class RetryingCallFactory implements Call.Factory, Closeable {

  final RetryPolicy policy;
  final OkHttpClient attemptClient;
  final OkHttpClient blockingClient;
  final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  /** Enqueued calls between attempts, so close() can end their waits. */
  final Set<RetryingCall.Async> waiting =
      Collections.newSetFromMap(new ConcurrentHashMap<RetryingCall.Async, Boolean>());
  private volatile boolean closed;

  private RetryingCallFactory(
      OkHttpClient client, RetryPolicy policy, ScheduledExecutorService scheduler, boolean owns) {
    for (Interceptor i : client.interceptors()) {
      if (i instanceof RetryInterceptor) {
        throw new IllegalArgumentException(
            "client already has a RetryInterceptor; every call would be retried twice");
      }
    }
    this.policy = policy;
    // Both clients need the Retry-After guard once: add it unless the caller already did.
    OkHttpClient guarded =
        client.networkInterceptors().contains(RetryAfterGuard.INSTANCE)
            ? client
            : client.newBuilder().addNetworkInterceptor(RetryAfterGuard.INSTANCE).build();
    // First among the application interceptors: every interceptor of the client runs once per
    // attempt and sees that attempt's timeouts, as those after a RetryInterceptor do.
    OkHttpClient.Builder attempts = guarded.newBuilder();
    attempts.interceptors().add(0, new AttemptSettings(policy.time));
    this.attemptClient = attempts.build();
    this.blockingClient = guarded.newBuilder().addInterceptor(RetryInterceptor.create(policy)).build();
    this.scheduler = scheduler;
    this.ownsScheduler = owns;
  }

  /**
   * A factory over {@code client} with its own scheduler (one daemon thread, made now) that runs
   * calls under {@code policy}.
   *
   * @param client the client that sends each attempt; it must not have a RetryInterceptor
   * @param policy the policy: its settings, budget and listener
   * @return a new factory
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code client} already has a {@link RetryInterceptor}
   */
  public static RetryingCallFactory create(OkHttpClient client, RetryPolicy policy) {
    checkNotNull(client, policy);
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "okretry scheduler");
              t.setDaemon(true);
              return t;
            });
    scheduler.setRemoveOnCancelPolicy(true); // a canceled call's pending retry is dropped at once
    return new RetryingCallFactory(client, policy, scheduler, true);
  }

  /**
   * A factory over {@code client} that schedules retries on {@code scheduler}, which must run
   * tasks promptly (each only enqueues an OkHttp call) and which {@link #close()} leaves running.
   *
   * @param client the client that sends each attempt; it must not have a RetryInterceptor
   * @param policy the policy: its settings, budget and listener
   * @param scheduler runs the delayed attempts
   * @return a factory using {@code scheduler}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code client} already has a {@link RetryInterceptor}
   */
  public static RetryingCallFactory create(
      OkHttpClient client, RetryPolicy policy, ScheduledExecutorService scheduler) {
    checkNotNull(client, policy);
    if (scheduler == null) throw new NullPointerException("scheduler == null");
    return new RetryingCallFactory(client, policy, scheduler, false);
  }

  private static void checkNotNull(OkHttpClient client, RetryPolicy policy) {
    if (client == null) throw new NullPointerException("client == null");
    if (policy == null) throw new NullPointerException("policy == null");
  }

  /** A call for {@code request} that retries by this factory's policy. */
  @Override
  public Call newCall(Request request) {
    if (request == null) throw new NullPointerException("request == null");
    return new RetryingCall(this, request);
  }

  /**
   * Ends the waits of calls between attempts (their callbacks get an {@link java.io.IOException}
   * "RetryingCallFactory is closed") and stops the scheduler this factory made, if it made one.
   * Attempts in flight finish as usual but are not retried. The client is left as it is.
   */
  @Override
  public void close() {
    closed = true;
    for (RetryingCall.Async call : waiting) call.endWait("RetryingCallFactory is closed");
    if (ownsScheduler) scheduler.shutdownNow();
  }

  boolean isClosed() {
    return closed;
  }
}
