package io.github.okretry;

import io.github.okretry.internal.QuotaHeaders;
import io.github.okretry.internal.RepeatSafety;
import io.github.okretry.internal.RetryAfter;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The first attempt of a call made without okretry's per-call state, so that the success path of a
 * plain call allocates nothing of okretry's own: {@link #open} says whether a call may start so,
 * {@link #ended} whether that attempt's response ends the call or a {@link LogicalCall} takes it
 * over. The rules are the call's, applied before it exists; no state of its own.
 */
final class StatelessAttempt {

  /**
   * The step of the first attempt {@link #open} made no state for: a SEND without an {@link
   * Attempt}, of the request as stamped, which the driver hands to {@link #ended}.
   */
  static final Step FIRST = new Step();

  private StatelessAttempt() {}

  /**
   * A logical call for {@code request} (stamped; {@code callTimeoutNanos} OkHttp's, 0 for none), or
   * null if its first attempt needs nothing from okretry but its own deadline (no call timeout,
   * origin state, network request to watch, OkHttp retry to turn off, and no origin whose failing
   * streak counts the attempts in flight): the driver makes it without state (its start reported
   * here), within that deadline, then calls {@link #ended}.
   */
  static @Nullable LogicalCall open(RetryPolicy policy, Request request, long callTimeoutNanos) {
    if (callTimeoutNanos == 0
        && policy.originGate.size() == 0
        && !policy.originGate.probes()
        && !policy.events.watchesNetworkRequests()
        && !policy.budget.hasOpenStreaks()
        && RepeatSafety.idempotent(request.method(), policy.keys.hasKey(request))) {
      // A quota first heard of while it is out counts it.
      policy.originGate.uncountedSent(request.url());
      policy.events.attemptStarted(request, 1);
      return null;
    }
    return LogicalCall.start(policy, request, callTimeoutNanos);
  }

  /**
   * After a first attempt made without state ({@link #open} returned null; {@code startNanos}: the
   * policy's clock when it started, which its deadline runs from): null if {@code response} ends
   * the call by its status alone (reported, and told to the budget as any first answer is); else
   * the logical call, whose first {@link LogicalCall#next} answers for that attempt.
   */
  static @Nullable LogicalCall ended(
      RetryPolicy policy,
      Request request,
      long startNanos,
      @Nullable Response response,
      @Nullable Throwable error,
      int seen) {
    if (response != null
        && !policy.classifier.isRetryableStatus(response.code())
        && !policy.classifier.hasResponsePredicate()) {
      // The quota it publishes paces the calls after it (a scan of the names when it publishes
      // none). No origin has state yet (open()), so this is all of OriginTurn.answered that
      // applies.
      if (policy.originGate.readsQuotas() && QuotaHeaders.mayPublish(response.headers())) {
        policy.originGate.quotaAnswered(
            null, response, false, RetryAfter.ABSENT, policy.time.nanoTime());
      }
      policy.originGate.uncountedEnded(request.url()); // once its quota, if any, is learned
      LogicalCall.returned(policy, request, null, response, 1, 0);
      return null;
    }
    LogicalCall call =
        LogicalCall.afterStatelessAttempt(policy, request, startNanos, response, error, seen);
    // As above, once OriginTurn.answered heard it; a predicate that threw there made a THROW, and
    // the count ends as well.
    policy.originGate.uncountedEnded(request.url());
    return call;
  }
}
