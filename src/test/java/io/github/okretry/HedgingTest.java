package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSink;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The per-call hedging decisions of {@link LogicalCall} ({@link Hedging}), driven by hand on fake
 * time as a driver would: when a hedge is due, who may be hedged, what the budget, the origin and
 * the deadline allow, who won. No OkHttp call; the async driver's part is {@code
 * HedgingDriverTest}.
 */
@Tag("unit")
class HedgingTest {
  static final long MS = 1_000_000L;

  final FakeTime time = new FakeTime();
  final EventLog events = new EventLog();
  final Request get = new Request.Builder().url("https://a.test/x").build();

  RetryPolicy.Builder policy() {
    return RetryPolicy.builder()
        .timeSource(time)
        .jitter(Jitter.NONE)
        .baseDelay(Duration.ofMillis(100))
        .random(() -> 0L)
        .keyGenerator(() -> "k1")
        .listener(events);
  }

  /** What a factory's calls share for hedging, one factory per policy here. */
  final Map<RetryPolicy, Hedging.Shared> factories = new IdentityHashMap<>();

  /**
   * The hedging of {@code policy}'s factory: after 50 ms, unless {@link #known} was given another.
   */
  Hedging.@Nullable Shared factory(RetryPolicy policy) {
    if (!factories.containsKey(policy)) {
      factories.put(policy, new Hedging.Shared(HedgingPolicy.after(50, TimeUnit.MILLISECONDS)));
    }
    return factories.get(policy);
  }

  Response response(Request request, int code, String... headers) {
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("x")
        .headers(okhttp3.Headers.of(headers))
        .body(ResponseBody.create("", (MediaType) null))
        .build();
  }

  void advanceMillis(long ms) {
    time.advance(Duration.ofMillis(ms));
  }

  /**
   * {@code builder}'s policy, its factory hedging after 50 ms, its origin {@code https://a.test}
   * having answered once already: a fixed delay hedges only an origin that has answered.
   */
  RetryPolicy known(RetryPolicy.Builder builder) {
    return known(builder, HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
  }

  /**
   * As {@link #known(RetryPolicy.Builder)}, its factory hedging by {@code hedging} (null: none).
   */
  RetryPolicy known(RetryPolicy.Builder builder, @Nullable HedgingPolicy hedging) {
    RetryPolicy p = builder.build();
    Hedging.Shared shared = hedging != null ? new Hedging.Shared(hedging) : null;
    factories.put(p, shared);
    if (shared != null) shared.origins.record(get.url(), 5 * MS);
    RetryBudgetTest.returned(p.budget, 200, 1); // that answer was a success (RetryBudget)
    return p;
  }

  final Map<LogicalCall, Attempt> firsts = new IdentityHashMap<>();

  /** A call whose first attempt is in flight, its first hedge armed on it. */
  LogicalCall sent(RetryPolicy policy, Request request) {
    LogicalCall call = LogicalCall.start(policy, request, 0, factory(policy));
    Step first = call.next(null);
    assertThat(first.kind()).isEqualTo(Step.Kind.SEND);
    firsts.put(call, Attempt.of(first));
    return call;
  }

  /**
   * The delay of the first hedge armed on {@code call}'s first attempt ({@link #sent}), 0 for none.
   */
  long hedgeAfter(LogicalCall call) {
    return first(call).hedgeAfterNanos;
  }

  /**
   * The hedge a driver gets when it asks with attempts in flight (its hedge timer fired), or null
   * for a DROP: due, not yet gone.
   */
  static @Nullable Attempt due(LogicalCall call) {
    Step step = call.next(null);
    assertThat(step.kind())
        .as("with attempts in flight: a hedge or none")
        .isIn(Step.Kind.SEND, Step.Kind.DROP);
    return step.kind() == Step.Kind.SEND ? Attempt.of(step) : null;
  }

  /** True if {@code hedge}, {@link #due}, leaves the driver's queue now; else it was dropped. */
  static boolean departs(LogicalCall call, Attempt hedge) {
    Step step = call.departs(hedge);
    assertThat(step).isIn(hedge, Step.DROP);
    return step == hedge;
  }

  /**
   * The hedge due now, sent at once (as by a driver whose queue is empty: it is due and leaves at
   * the same moment), or null if none goes.
   */
  static @Nullable Attempt hedged(LogicalCall call) {
    Attempt hedge = due(call);
    return hedge != null && departs(call, hedge) ? hedge : null;
  }

  /** The first attempt {@link #sent} for {@code call}. */
  Attempt first(LogicalCall call) {
    return firsts.get(call);
  }

  @Test
  void theHedgeIsDueAtTheDelayNotBefore() {
    LogicalCall call = sent(known(policy()), get);
    assertThat(hedgeAfter(call)).isEqualTo(50 * MS);
    advanceMillis(49);
    assertThat(hedged(call)).isNull();
    advanceMillis(1);
    Attempt hedge = hedged(call);
    assertThat(hedge).isNotNull();
    assertThat(hedge.number).isEqualTo(2);
    assertThat(hedge.hedge).isTrue();
    assertThat(hedge.request().tag(RetryOutcome.Mark.class))
        .as("marked: it may answer for the call")
        .isNotNull();
    assertThat(hedge.request().headers())
        .isEqualTo(call.request.headers()); // the same request, the same key
    assertThat(hedge.hedgeAfterNanos).as("maxHedges 1: no second hedge").isZero();
    assertThat(events.lines()).containsExactly("start 1", "hedge 2 after 50 ms", "start 2");
  }

  @Test
  void theFirstAcceptableAnswerWinsAndEndsTheCall() {
    LogicalCall call = sent(known(policy()), get);
    Attempt first = first(call);
    advanceMillis(50);
    Attempt hedge = hedged(call);
    advanceMillis(5);
    Step step = call.ended(hedge, response(get, 200), null, 0);
    assertThat(step).isSameAs(Step.RETURN);
    assertThat(first.number).isEqualTo(1);
    assertThat(events.lines("succeeded")).containsExactly("succeeded 2 HTTP 200");
  }

  @Test
  void aHedgeTimerThatFiresAfterTheCallEndedSendsNothing() {
    LogicalCall call = sent(known(policy()), get);
    assertThat(hedgeAfter(call)).isEqualTo(50 * MS);
    assertThat(call.ended(first(call), response(get, 200), null, 0)).isSameAs(Step.RETURN);
    advanceMillis(50);
    assertThat(call.next(null)).as("a late question: no hedge, no new attempt").isSameAs(Step.DROP);
    assertThat(events.lines("start")).containsExactly("start 1");
  }

  @Test
  void aFailureWithAnotherAttemptInFlightIsDroppedAndTheLastOneDecides() throws Exception {
    LogicalCall call = sent(known(policy().maxRetries(3)), get);
    Attempt first = first(call);
    advanceMillis(50);
    Attempt hedge = hedged(call);
    assertThat(call.ended(first, null, new SocketTimeoutException("first"), 0)).isSameAs(Step.DROP);
    assertThat(hedged(call))
        .as("the hedge is the only attempt left, and maxHedges is spent")
        .isNull();
    Step step = call.ended(hedge, null, new SocketTimeoutException("hedge"), 0);
    assertThat(step.kind()).isEqualTo(Step.Kind.WAIT);
    advanceMillis(step.waitNanos() / MS);
    Step retry = call.next(null);
    assertThat(Attempt.of(retry).number).isEqualTo(3);
    assertThat(Attempt.of(retry).hedgeAfterNanos)
        .as("the retry's round may be hedged again")
        .isEqualTo(50 * MS);
    Step last = call.ended(Attempt.of(retry), null, new SocketTimeoutException("third"), 0);
    assertThat(last.kind()).isEqualTo(Step.Kind.WAIT);
    advanceMillis(last.waitNanos() / MS);
    Step fourth = call.next(null);
    Step end = call.ended(Attempt.of(fourth), null, new SocketTimeoutException("fourth"), 0);
    assertThat(end.kind()).isEqualTo(Step.Kind.THROW);
    assertThat(EarlierFailures.of(end.failure()))
        .extracting(Throwable::getMessage)
        .containsExactly("first", "hedge", "third");
  }

  @Test
  void aCallerCancelEndsTheCallWhateverIsInFlight() {
    LogicalCall call = sent(known(policy()), get);
    Attempt first = first(call);
    advanceMillis(50);
    hedged(call);
    Step step =
        call.ended(
            first, null, new IOException("Canceled"), Seen.CALLER_CANCELED | Seen.ATTEMPT_CANCELED);
    assertThat(step.kind()).isEqualTo(Step.Kind.THROW);
    assertThat(call.gaveUpFor()).isEqualTo(GiveUpReason.CANCELED);
  }

  @Test
  void aHedgeIsAnAttemptCountedAgainstMaxRetries() {
    LogicalCall call = sent(known(policy().maxRetries(1)), get);
    Attempt first = first(call);
    advanceMillis(50);
    Attempt hedge = hedged(call);
    call.ended(first, null, new SocketTimeoutException("first"), 0);
    Step step = call.ended(hedge, null, new SocketTimeoutException("hedge"), 0);
    assertThat(step.kind()).isEqualTo(Step.Kind.THROW);
    assertThat(call.gaveUpFor()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
  }

  @Test
  void noFixedDelayHedgeToAnOriginThatNeverAnswered() {
    LogicalCall call = sent(policy().build(), get);
    assertThat(hedgeAfter(call)).isZero();
    advanceMillis(50);
    assertThat(hedged(call)).isNull();
    assertThat(call.ended(first(call), response(get, 200), null, 0)).isSameAs(Step.RETURN);
    assertThat(hedgeAfter(sent(policy().build(), get)))
        .as("another factory: its own table")
        .isZero();
  }

  @Test
  void noHedgeWithoutARetryToSpend() {
    LogicalCall call = sent(known(policy().maxRetries(0)), get);
    assertThat(hedgeAfter(call)).isZero();
  }

  @Test
  void maxHedgesInFlightEachADelayAfterTheLast() {
    LogicalCall call =
        sent(known(policy(), HedgingPolicy.after(50, TimeUnit.MILLISECONDS).maxHedges(2)), get);
    advanceMillis(50);
    Attempt second = hedged(call);
    assertThat(second.number).isEqualTo(2);
    assertThat(second.hedgeAfterNanos).isEqualTo(50 * MS);
    advanceMillis(49);
    assertThat(hedged(call)).isNull();
    advanceMillis(1);
    Attempt third = hedged(call);
    assertThat(third.number).isEqualTo(3);
    assertThat(third.hedgeAfterNanos).isZero();
  }

  /**
   * Issue 30.3: a driver may queue a hedge (OkHttp's dispatcher runs only so many calls per host)
   * between {@code next()}, when it is due, and {@code departs}, when it leaves the queue. Only a
   * hedge that leaves is paid for, counted and reported.
   */
  @Nested
  class AHedgeCountsOnlyOnceItLeavesTheQueue {
    @Test
    void dueItIsNothingYetLeavingItIsPaidCountedAndReported() {
      RetryBudget budget = RetryBudget.builder().maxTokens(10).minRetriesPerSecond(0).build();
      LogicalCall call =
          sent(
              known(
                  policy().retryBudget(budget),
                  HedgingPolicy.after(50, TimeUnit.MILLISECONDS).maxHedges(2)),
              get);
      double tokens = budget.availableTokens();
      advanceMillis(50);
      Attempt hedge = due(call);
      assertThat(hedge.number).as("numbered as it will be if it goes").isEqualTo(2);
      assertThat(hedge.hedgeAfterNanos).as("the next is armed when this one goes").isZero();
      assertThat(events.lines()).containsExactly("start 1");
      assertThat(budget.availableTokens()).isEqualTo(tokens);
      advanceMillis(50);
      assertThat(due(call)).as("no second hedge while one is queued").isNull();
      advanceMillis(30); // it waited 80 ms in the queue
      assertThat(departs(call, hedge)).isTrue();
      assertThat(departs(call, hedge)).as("only once").isFalse();
      assertThat(events.lines()).containsExactly("start 1", "hedge 2 after 130 ms", "start 2");
      assertThat(budget.availableTokens()).isEqualTo(tokens - 1);
      assertThat(hedge.hedgeAfterNanos)
          .as("the next, a delay after this one went")
          .isEqualTo(50 * MS);
    }

    @Test
    void stillQueuedWhenTheCallIsAnsweredItNeverGoesAndCostsNothing() {
      RetryBudget budget =
          RetryBudget.builder().maxTokens(10).minRetriesPerSecond(0).percentCanRetry(0).build();
      LogicalCall call = sent(known(policy().retryBudget(budget)), get);
      advanceMillis(50);
      Attempt hedge = due(call);
      advanceMillis(100);
      assertThat(call.ended(first(call), response(get, 200), null, 0)).isSameAs(Step.RETURN);
      assertThat(departs(call, hedge)).isFalse();
      assertThat(events.lines()).containsExactly("start 1", "succeeded 1 HTTP 200");
      assertThat(budget.availableTokens()).isEqualTo(10);
    }

    @Test
    void queuedWhenItsRoundFailsItNeverGoesAndTheRetryIsTheNextAttempt() {
      LogicalCall call = sent(known(policy().maxRetries(3)), get);
      advanceMillis(50);
      Attempt stale = due(call);
      Step step = call.ended(first(call), null, new SocketTimeoutException("first"), 0);
      assertThat(step.kind())
          .as("not dropped: a queued hedge is not in flight")
          .isEqualTo(Step.Kind.WAIT);
      advanceMillis(step.waitNanos() / MS);
      Step retry = call.next(null);
      assertThat(Attempt.of(retry).number).isEqualTo(2);
      assertThat(Attempt.of(retry).hedgeAfterNanos).isEqualTo(50 * MS);
      assertThat(departs(call, stale)).as("the last round's, left in the queue").isFalse();
      advanceMillis(50);
      assertThat(hedged(call))
          .as("no hedge to an origin that failed since it last answered (the budget)")
          .isNull();
      assertThat(events.lines())
          .containsExactly("start 1", "retry 1 SocketTimeoutException: first", "start 2");
    }

    @Test
    void theBudgetIsAskedWhenItLeaves() {
      RetryBudget budget =
          RetryBudget.builder().maxTokens(1).minRetriesPerSecond(0).percentCanRetry(0).build();
      RetryPolicy p = known(policy().retryBudget(budget));
      LogicalCall a = sent(p, get);
      LogicalCall b = sent(p, get);
      advanceMillis(50);
      Attempt aHedge = due(a);
      Attempt bHedge = due(b);
      assertThat(aHedge).isNotNull();
      assertThat(bHedge).as("both due: nothing is paid yet").isNotNull();
      assertThat(departs(b, bHedge)).isTrue();
      assertThat(departs(a, aHedge)).as("the one token is spent").isFalse();
      assertThat(events.lines("hedge")).containsExactly("hedge 2 after 50 ms");
    }

    @Test
    void notIfTheOriginRefusedACallWhileItWasQueued() {
      RetryPolicy p = known(policy());
      LogicalCall call = sent(p, get);
      LogicalCall other = sent(p, get);
      advanceMillis(50);
      Attempt hedge = due(call);
      other.ended(first(other), response(get, 503), null, 0);
      assertThat(departs(call, hedge)).isFalse();
      assertThat(events.lines("hedge")).isEmpty();
    }

    @Test
    void notOnceTheDeadlineHasPassed() {
      LogicalCall call = sent(known(policy().deadline(80, TimeUnit.MILLISECONDS)), get);
      advanceMillis(50);
      Attempt hedge = due(call);
      advanceMillis(30);
      assertThat(departs(call, hedge)).isFalse();
    }
  }

  @Nested
  class WhoIsHedged {
    @Test
    void idempotentMethodsAndKeyedRequests() {
      RetryPolicy p = known(policy());
      assertThat(hedgeAfter(sent(p, get))).isPositive();
      assertThat(
              hedgeAfter(
                  sent(
                      p,
                      request("PUT", RequestBody.create("{}", MediaType.get("application/json"))))))
          .isPositive();
      // A POST is stamped with a generated key before the call starts: keyed, so hedged.
      Request keyed =
          p.keys.stamp(
              request("POST", RequestBody.create("{}", MediaType.get("application/json"))));
      assertThat(hedgeAfter(sent(p, keyed))).isPositive();
    }

    @Test
    void neverAKeylessPost() {
      RetryPolicy p = known(policy().generateIdempotencyKeys(false));
      Request post =
          p.keys.stamp(
              request("POST", RequestBody.create("{}", MediaType.get("application/json"))));
      assertThat(hedgeAfter(sent(p, post))).isZero();
    }

    @Test
    void neverAOneShotOrDuplexBody() {
      RetryPolicy p = known(policy());
      assertThat(hedgeAfter(sent(p, request("PUT", body(true, false)))))
          .as("a one-shot body, even one kept for a retry (the default replay buffer)")
          .isZero();
      assertThat(hedgeAfter(sent(p, request("PUT", body(false, true))))).isZero();
    }

    @Test
    void notWhenTheFactoryDoesNotHedge() {
      assertThat(hedgeAfter(sent(known(policy(), null), get))).isZero();
    }

    Request request(String method, RequestBody body) {
      return new Request.Builder().url("https://a.test/x").method(method, body).build();
    }

    RequestBody body(boolean oneShot, boolean duplex) {
      return new RequestBody() {
        @Override
        public MediaType contentType() {
          return null;
        }

        @Override
        public void writeTo(BufferedSink sink) {}

        @Override
        public boolean isOneShot() {
          return oneShot;
        }

        @Override
        public boolean isDuplex() {
          return duplex;
        }
      };
    }
  }

  @Nested
  class NeverWhileTheOriginPushesBack {
    @Test
    void notAfterThisCallSawA503() {
      LogicalCall call =
          sent(known(policy(), HedgingPolicy.after(50, TimeUnit.MILLISECONDS).maxHedges(2)), get);
      Attempt first = first(call);
      advanceMillis(50);
      Attempt hedge = hedged(call);
      assertThat(call.ended(hedge, response(get, 503), null, 0)).isSameAs(Step.DROP);
      advanceMillis(50);
      assertThat(hedged(call)).isNull();
      Step step = call.ended(first, response(get, 503), null, 0);
      assertThat(step.kind()).isEqualTo(Step.Kind.WAIT);
      advanceMillis(step.waitNanos() / MS);
      assertThat(Attempt.of(call.next(null)).hedgeAfterNanos)
          .as("nor in the retries after it")
          .isZero();
    }

    @Test
    void notAfterA429WithRetryAfter() {
      LogicalCall call = sent(known(policy()), get);
      Step step = call.ended(first(call), response(get, 429, "Retry-After", "1"), null, 0);
      assertThat(step.kind()).isEqualTo(Step.Kind.WAIT);
      advanceMillis(step.waitNanos() / MS);
      Step retry = call.next(null);
      assertThat(retry.kind()).isEqualTo(Step.Kind.SEND);
      assertThat(Attempt.of(retry).hedgeAfterNanos).isZero();
      advanceMillis(50);
      assertThat(hedged(call)).isNull();
    }

    @Test
    void notForTenSecondsAfterTheOriginRefusedAnotherCall() {
      RetryPolicy p = known(policy());
      LogicalCall refused = sent(p, get);
      refused.ended(first(refused), response(get, 503), null, 0);
      LogicalCall call = sent(p, get);
      advanceMillis(50);
      assertThat(hedged(call)).isNull();
      advanceMillis(10_000);
      LogicalCall quiet = sent(p, get);
      advanceMillis(50);
      assertThat(hedged(quiet))
          .as("quiet for 10 s, but it has not answered a call since it failed one (the budget)")
          .isNull();
      LogicalCall answered = sent(p, get);
      answered.ended(first(answered), response(get, 200), null, 0);
      LogicalCall later = sent(p, get);
      advanceMillis(50);
      assertThat(hedged(later)).as("quiet for 10 s, and it answered a call").isNotNull();
    }

    @Test
    void notWhileTheOriginsGateIsClosed() {
      RetryPolicy p = known(policy().originWideRetryAfter(true));
      LogicalCall call = sent(p, get);
      LogicalCall other = sent(p, get);
      // The other call is refused with a Retry-After: the origin's gate closes for everyone.
      other.ended(first(other), response(get, 429, "Retry-After", "5"), null, 0);
      advanceMillis(50);
      assertThat(hedged(call)).isNull();
      assertThat(events.lines("hedge")).isEmpty();
    }
  }

  @Test
  void theBudgetPaysForAHedgeOrThereIsNone() {
    RetryBudget budget =
        RetryBudget.builder().maxTokens(1).minRetriesPerSecond(0).percentCanRetry(0).build();
    RetryPolicy p = known(policy().retryBudget(budget));
    LogicalCall a = sent(p, get);
    LogicalCall b = sent(p, get);
    advanceMillis(50);
    assertThat(hedged(a)).isNotNull();
    assertThat(hedged(b)).as("the one token is spent").isNull();
    assertThat(budget.availableTokens()).isZero();
  }

  @Test
  void hedgesAndRetriesShareOneDeadline() {
    LogicalCall call = sent(known(policy().deadline(80, TimeUnit.MILLISECONDS)), get);
    advanceMillis(50);
    Attempt hedge = hedged(call);
    assertThat(hedge.watchNanos()).as("what is left of the call's 80 ms").isEqualTo(30 * MS);
    LogicalCall late = sent(known(policy().deadline(50, TimeUnit.MILLISECONDS)), get);
    advanceMillis(50);
    assertThat(hedged(late)).as("no time left").isNull();
  }

  @Test
  void aConflictFromTheServerToTheHedgeOfAKeyedRequestIsNotTheAnswer() {
    RetryPolicy p = known(policy());
    Request keyed =
        p.keys.stamp(
            new Request.Builder()
                .url("https://a.test/x")
                .post(RequestBody.create("{}", MediaType.get("application/json")))
                .build());
    LogicalCall call = sent(p, keyed);
    Attempt first = first(call);
    advanceMillis(50);
    Attempt hedge = hedged(call);
    assertThat(call.ended(hedge, response(keyed, 409), null, 0)).isSameAs(Step.DROP);
    assertThat(call.ended(first, response(keyed, 201), null, 0).kind()).isEqualTo(Step.Kind.RETURN);
  }

  @Nested
  class Adaptive {
    RetryPolicy adaptive() {
      RetryPolicy p = policy().build();
      factories.put(p, new Hedging.Shared(HedgingPolicy.adaptive(0.9, 10, TimeUnit.MILLISECONDS)));
      return p;
    }

    /** One call to the origin that answers 200 after {@code ms}. */
    void answeredAfter(RetryPolicy p, long ms) {
      LogicalCall call = sent(p, get);
      advanceMillis(ms);
      assertThat(call.ended(first(call), response(get, 200), null, 0)).isSameAs(Step.RETURN);
    }

    @Test
    void noHedgeWhileWarmingUp() {
      RetryPolicy p = adaptive();
      for (int i = 0; i < 19; i++) answeredAfter(p, 5);
      assertThat(hedgeAfter(sent(p, get))).isZero();
      answeredAfter(p, 5);
      assertThat(hedgeAfter(sent(p, get))).isPositive();
    }

    @Test
    void twiceThePercentileOfRecentAnswers() {
      RetryPolicy p = adaptive();
      for (int i = 1; i <= 40; i++) answeredAfter(p, 10 + (i % 10)); // 11..19, 10: p90 is 18 ms
      assertThat(hedgeAfter(sent(p, get))).isEqualTo(36 * MS);
    }

    @Test
    void neverBelowTheFloor() {
      RetryPolicy p = adaptive();
      for (int i = 0; i < 40; i++) answeredAfter(p, 1);
      assertThat(hedgeAfter(sent(p, get))).isEqualTo(10 * MS);
    }

    @Test
    void aUniformlySlowOriginIsNotHedged() {
      RetryPolicy p = adaptive();
      for (int i = 0; i < 40; i++) answeredAfter(p, 200);
      LogicalCall call = sent(p, get);
      assertThat(hedgeAfter(call)).isEqualTo(400 * MS);
      advanceMillis(201);
      assertThat(hedged(call)).isNull();
    }

    @Test
    void aLoserCanceledByTheWinnerTeachesNothing() {
      RetryPolicy p = adaptive();
      for (int i = 0; i < 40; i++) answeredAfter(p, 5);
      LogicalCall call = sent(p, get);
      Attempt first = first(call);
      advanceMillis(10);
      Attempt hedge = hedged(call);
      advanceMillis(5);
      assertThat(call.ended(hedge, response(get, 200), null, 0)).isSameAs(Step.RETURN);
      // The first attempt is canceled by the driver and never reported: the table saw 5 ms only.
      assertThat(hedgeAfter(sent(p, get))).isEqualTo(10 * MS);
      assertThat(first.number).isEqualTo(1);
    }
  }

  @Nested
  class Values {
    @Test
    void fixedAndAdaptiveWithTheirDefaults() {
      HedgingPolicy fixed = HedgingPolicy.after(Duration.ofMillis(50));
      assertThat(fixed)
          .isEqualTo(HedgingPolicy.after(50, TimeUnit.MILLISECONDS))
          .hasSameHashCodeAs(HedgingPolicy.after(50_000, TimeUnit.MICROSECONDS));
      assertThat(fixed.delayNanos()).isEqualTo(50 * MS);
      assertThat(fixed.percentile()).isZero();
      assertThat(fixed.maxHedges()).isEqualTo(1);
      assertThat(fixed.toString()).isEqualTo("HedgingPolicy{delayNanos=50000000, maxHedges=1}");
      HedgingPolicy adaptive = HedgingPolicy.adaptive();
      assertThat(adaptive).isEqualTo(HedgingPolicy.adaptive(0.9, Duration.ofMillis(10)));
      assertThat(adaptive.delayNanos()).isZero();
      assertThat(adaptive.percentile()).isEqualTo(0.9);
      assertThat(adaptive.floorNanos()).isEqualTo(10 * MS);
      assertThat(adaptive.toString())
          .isEqualTo("HedgingPolicy{percentile=0.9, floorNanos=10000000, maxHedges=1}");
      assertThat(adaptive)
          .isNotEqualTo(fixed)
          .isNotEqualTo(HedgingPolicy.adaptive(0.5, 10, TimeUnit.MILLISECONDS));
    }

    @Test
    void maxHedgesReturnsACopy() {
      HedgingPolicy one = HedgingPolicy.after(50, TimeUnit.MILLISECONDS);
      HedgingPolicy two = one.maxHedges(2);
      assertThat(one.maxHedges()).isEqualTo(1);
      assertThat(two.maxHedges()).isEqualTo(2);
      assertThat(two.delayNanos()).isEqualTo(50 * MS);
      assertThat(two).isNotEqualTo(one).isEqualTo(one.maxHedges(2));
      assertThat(two.toString()).isEqualTo("HedgingPolicy{delayNanos=50000000, maxHedges=2}");
    }

    @Test
    void badValuesAreRefusedNamingTheSetting() {
      HedgingPolicy h = HedgingPolicy.after(50, TimeUnit.MILLISECONDS);
      ScriptedTest.assertRejectedNaming(
          () -> HedgingPolicy.after(0, TimeUnit.MILLISECONDS), "hedge delay", "0 MILLISECONDS");
      ScriptedTest.assertRejectedNaming(
          () -> HedgingPolicy.after(Duration.ofHours(25)), "hedge delay", "PT25H");
      ScriptedTest.assertRejectedNaming(
          () -> HedgingPolicy.adaptive(1.0, 10, TimeUnit.MILLISECONDS), "hedge percentile", "1.0");
      ScriptedTest.assertRejectedNaming(
          () -> HedgingPolicy.adaptive(0.9, Duration.ZERO), "hedge floor", "PT0S");
      ScriptedTest.assertRejectedNaming(() -> h.maxHedges(0), "maxHedges", "0");
      ScriptedTest.assertRejectedNaming(() -> h.maxHedges(6), "maxHedges", "6");
      assertThatThrownBy(() -> HedgingPolicy.after(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("hedge delay");
      assertThatThrownBy(() -> HedgingPolicy.after(1, null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("hedge delay");
    }
  }

  void succeededBeside(RetryPolicy p) {
    p.budget.returned(get.url(), response(get, 200), 1, null, time);
  }

  Step refused(LogicalCall call, Attempt a) {
    return call.ended(a, null, new java.net.ConnectException("refused"), 0);
  }

  Attempt waitThenSend(LogicalCall call, Step wait) {
    assertThat(wait.kind()).isEqualTo(Step.Kind.WAIT);
    advanceMillis(wait.waitNanos() / MS + 1);
    Step s = call.next(null);
    assertThat(s.kind()).isEqualTo(Step.Kind.SEND);
    return Attempt.of(s);
  }

  /**
   * A regression test (a review of issue 42's budget): an attempt the budget skipped counts as one
   * made, so no hedge takes a call past {@code maxRetries}.
   */
  @Test
  void noHedgeTakesACallPastMaxRetriesCountingTheAttemptsItsBudgetSkipped() {
    RetryPolicy p = known(policy().maxRetries(2));
    // Call A spends the origin's count: 2 retries (4 halves).
    LogicalCall a = sent(p, get);
    Attempt a2 = waitThenSend(a, refused(a, first(a)));
    Attempt a3 = waitThenSend(a, refused(a, a2));
    assertThat(refused(a, a3).kind()).isEqualTo(Step.Kind.THROW);
    // Call B: its first attempt fails, its retry is skipped (counted as a failed attempt).
    LogicalCall b = sent(p, get);
    Step w = refused(b, first(b));
    advanceMillis(w.waitNanos() / MS + 1);
    Step skipped = b.next(null);
    assertThat(skipped.kind()).as("skipped").isEqualTo(Step.Kind.WAIT);
    succeededBeside(p); // another call to the origin succeeds
    Attempt b2 = waitThenSend(b, skipped);
    assertThat(b2.number).isEqualTo(2); // its third attempt counting the skipped one: the last
    advanceMillis(10);
    succeededBeside(p); // another call succeeds meanwhile: the streak the retry opened ends
    advanceMillis(40);
    Attempt hedge = hedged(b);
    assertThat(hedge).as("a 4th attempt with maxRetries(2)").isNull();
  }
}
