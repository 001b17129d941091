package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.RetryTokenBucket.Kind;
import io.github.okretry.internal.RetryTokenBucket.Payment;
import java.util.PriorityQueue;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The budget's arithmetic, driven on simulated time as a fleet simulator would drive it. */
@Tag("unit")
class RetryTokenBucketTest {

  static final long MS = 1_000_000L;

  static RetryTokenBucket defaults() {
    return RetryTokenBucket.withDefaults(
        Tuning.PERCENT_CAN_RETRY, Tuning.MAX_TOKENS, Tuning.MIN_RETRIES_PER_SECOND, true);
  }

  @Test
  void startsFullAndChargesARetryAfterRetryAfterHalf() {
    RetryTokenBucket bucket = defaults();
    assertThat(bucket.balanceMilli()).isEqualTo(100_000);
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.balanceMilli()).isEqualTo(99_000);
    assertThat(bucket.tryWithdraw(true, 0)).isTrue();
    assertThat(bucket.balanceMilli()).isEqualTo(98_500);
  }

  @Test
  void depositsFillUpToTheCapacityAndTheReserveRefillsWithTime() {
    RetryTokenBucket bucket = new RetryTokenBucket(200, 2_000, 0, 1, 1_000, 1_000, 500, true);
    assertThat(bucket.tryWithdraw(false, 0)).as("empty balance: the reserve's one token").isTrue();
    assertThat(bucket.tryWithdraw(true, 0)).isFalse();
    assertThat(bucket.tryWithdraw(true, 499 * MS)).as("0.499 tokens refilled").isFalse();
    assertThat(bucket.tryWithdraw(true, 500 * MS))
        .as("0.5 refilled: one Retry-After retry")
        .isTrue();
    for (int i = 0; i < 100; i++) bucket.succeeded(A, true);
    assertThat(bucket.balanceMilli()).isEqualTo(2_000);
  }

  @Test
  void withDefaultsTakesThePublicSettingsInTokens() {
    RetryTokenBucket bucket = RetryTokenBucket.withDefaults(0.5, 2, 0, true);
    assertThat(bucket.balanceMilli()).as("starts full").isEqualTo(2_000);
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.tryWithdraw(false, 0)).as("no reserve").isFalse();
    bucket.succeeded(A, true);
    assertThat(bucket.balanceMilli()).as("half a token per success").isEqualTo(500);
  }

  @Test
  void theReserveRefillsInProportionToItsRate() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 10, 1_000, 1_000, 500, true);
    for (int i = 0; i < 10; i++)
      assertThat(bucket.tryWithdraw(false, 0)).as("the reserve's 10 tokens").isTrue();
    assertThat(bucket.tryWithdraw(false, 0)).isFalse();
    assertThat(bucket.tryWithdraw(false, 99 * MS))
        .as("0.99 tokens after 99 ms at 10 per second")
        .isFalse();
    assertThat(bucket.tryWithdraw(false, 100 * MS)).isTrue();
  }

  @Test
  void timeTooShortToRefillAnythingIsNotLost() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 1, 1_000, 1_000, 500, true);
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.tryWithdraw(true, MS / 2)).as("nothing refilled in 0.5 ms").isFalse();
    assertThat(bucket.tryWithdraw(true, 500 * MS))
        .as("0.5 tokens since 0, not since 0.5 ms")
        .isTrue();
  }

  @ParameterizedTest(name = "origin {0}")
  @ValueSource(longs = {0, -1_000_000_000_000_000L, 1_000_000_000_000_000L})
  void theReserveRefillsFromItsFirstUseAtAnyClockOrigin(long o) {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 1, 1_000, 1_000, 500, true);
    assertThat(bucket.tryWithdraw(false, o)).as("the reserve's one token").isTrue();
    assertThat(bucket.tryWithdraw(true, o + 499 * MS)).isFalse();
    assertThat(bucket.tryWithdraw(true, o + 500 * MS)).isTrue();
  }

  @Test
  void refusesBadSettings() {
    assertThatThrownBy(() -> new RetryTokenBucket(-1, 1_000, 0, 0, 1_000, 1_000, 500, true))
        .hasMessageContaining("depositMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 999, 0, 0, 1_000, 1_000, 500, true))
        .hasMessageContaining("capacityMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 1_001, 0, 1_000, 1_000, 500, true))
        .hasMessageContaining("initialMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 0, -1, 1_000, 1_000, 500, true))
        .hasMessageContaining("reservePerSecond");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 0, 0, 0, 0, 500, true))
        .hasMessageContaining("retryCostMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 0, 0, 1_000, 1_000, 0, true))
        .hasMessageContaining("retryAfterCostMilli");
  }

  static final HttpUrl A = HttpUrl.get("https://a.test/");
  static final HttpUrl B = HttpUrl.get("https://b.test/path");

  static Payment pay(RetryTokenBucket bucket, HttpUrl url, Kind kind, int maxRetries) {
    return bucket.payForRetry(bucket.streak(url), kind, bucket.price(kind), maxRetries, 0);
  }

  @Test
  void sinceItsOriginLastAnsweredItPaysOneFailingCallsRetriesThenHoldsTheRest() {
    RetryTokenBucket bucket =
        new RetryTokenBucket(200, 100_000, 100_000, 10, 1_000, 1_000, 500, true);
    RetryTokenBucket.Streak a = bucket.streak(A);
    for (int i = 0; i < 3; i++)
      assertThat(pay(bucket, A, Kind.ERROR, 3))
          .as("a new bucket: one call's worth")
          .isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 3))
        .as("three since the origin last answered")
        .isEqualTo(Payment.HELD);
    assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3))
        .as("a Retry-After retry too")
        .isEqualTo(Payment.HELD);
    assertThat(pay(bucket, A, Kind.ERROR, 4))
        .as("a call allowed 4 retries may make its 4th")
        .isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).as("a held retry takes nothing").isEqualTo(96_000);
    assertThat(pay(bucket, B, Kind.ERROR, 3))
        .as("another origin has its own count")
        .isEqualTo(Payment.PAID);
    bucket.succeeded(B, true);
    assertThat(a.ended()).as("another origin's success is no evidence for this one").isFalse();
    assertThat(pay(bucket, A, Kind.ERROR, 3)).isEqualTo(Payment.HELD);
    bucket.succeeded(A, false);
    assertThat(a.ended()).as("its own is: the retries held on it may go").isTrue();
    assertThat(bucket.streak(A)).as("a new streak").isNotSameAs(a);
    for (int i = 0; i < 3; i++)
      assertThat(pay(bucket, A, Kind.ERROR, 3)).as("starts again").isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 0)).as("maxRetries 0: none").isEqualTo(Payment.HELD);
  }

  @Test
  void aResponseFromTheCacheOrAnotherPathOfTheOriginDecidesAsItsOrigin() {
    RetryTokenBucket bucket =
        new RetryTokenBucket(200, 100_000, 100_000, 10, 1_000, 1_000, 500, true);
    RetryTokenBucket.Streak s = bucket.streak(HttpUrl.get("https://a.test/dead"));
    bucket.succeeded(HttpUrl.get("https://a.test:443/other?q=1"), true);
    assertThat(s.ended()).as("one origin: scheme, host and port").isTrue();
    RetryTokenBucket.Streak http = bucket.streak(HttpUrl.get("http://a.test/"));
    bucket.succeeded(A, true);
    assertThat(http.ended()).as("another scheme is another origin").isFalse();
  }

  @Test
  void aRetryThatWaitsOutARetryAfterCountsHalf() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 100_000, 100_000, 0, 1_000, 1_000, 500, true);
    for (int i = 0; i < 6; i++)
      assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3)).isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3))
        .as("six halves: one call's three")
        .isEqualTo(Payment.HELD);
    assertThat(bucket.balanceMilli()).isEqualTo(97_000);
    bucket.succeeded(A, false);
    assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3)).isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 3)).isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 3)).as("1 + 2 + 2 halves").isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 3)).as("another would make 7").isEqualTo(Payment.HELD);
    assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3)).as("a half still fits").isEqualTo(Payment.PAID);
  }

  @Test
  void aThrottledRetryAndARefusedStreamAreNotCounted() {
    RetryTokenBucket bucket =
        new RetryTokenBucket(0, 100_000, 100_000, 0, 1_000, 10_000, 500, true);
    for (int i = 0; i < 3; i++) pay(bucket, A, Kind.ERROR, 3);
    assertThat(pay(bucket, A, Kind.ERROR, 3)).isEqualTo(Payment.HELD);
    for (int i = 0; i < 50; i++)
      assertThat(pay(bucket, A, Kind.THROTTLED, 3))
          .as("a server pacing this client")
          .isEqualTo(Payment.PAID);
    for (int i = 0; i < 5; i++)
      assertThat(pay(bucket, A, Kind.REFUSED, 3))
          .as("a stream it never read")
          .isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).isEqualTo(100_000 - 3_000 - 50 * 500 - 5 * 1_000);
    bucket.refund(Kind.THROTTLED, 500, bucket.streak(A));
    assertThat(pay(bucket, A, Kind.ERROR, 3))
        .as("its refund gives back no count")
        .isEqualTo(Payment.HELD);
    assertThat(bucket.balanceMilli()).isEqualTo(100_000 - 3_000 - 49 * 500 - 5 * 1_000);
  }

  @Test
  void theStrictRulePaysNoRetryAfterAnErrorBeforeTheFirstSuccess() {
    RetryTokenBucket bucket =
        new RetryTokenBucket(200, 100_000, 100_000, 10, 1_000, 1_000, 500, false);
    for (int i = 0; i < 100; i++)
      assertThat(pay(bucket, A, Kind.ERROR, 3)).isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3))
        .as("the server said when: paid")
        .isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).isEqualTo(99_500);
    bucket.succeeded(B, false);
    for (int i = 0; i < 2; i++)
      assertThat(pay(bucket, A, Kind.ERROR, 3))
          .as("after a success, as the default")
          .isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 3))
        .as("1 + 2 + 2 halves, then held")
        .isEqualTo(Payment.HELD);
  }

  @Test
  void aRetryTheBucketCannotPayForIsRefusedAndNotCounted() {
    // Two retries in the balance, no reserve.
    RetryTokenBucket bucket = new RetryTokenBucket(0, 2_000, 2_000, 0, 1_000, 1_000, 500, true);
    assertThat(pay(bucket, A, Kind.ERROR, 5)).isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 5)).isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 5))
        .as("counts left, no tokens")
        .isEqualTo(Payment.NO_TOKENS);
    bucket.refund(Kind.ERROR, 1_000, bucket.streak(A));
    assertThat(pay(bucket, A, Kind.ERROR, 2))
        .as("the refusal took no count; the refund gave one back")
        .isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.RETRY_AFTER, 3)).as("no tokens").isEqualTo(Payment.NO_TOKENS);
  }

  @Test
  void aRefundGivesBackThePriceAndTheCountButNeverPastTheCapacityOrBelowZero() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 10_000, 10_000, 0, 1_000, 1_000, 500, true);
    for (int i = 0; i < 3; i++) pay(bucket, A, Kind.ERROR, 3);
    assertThat(bucket.balanceMilli()).isEqualTo(7_000);
    bucket.refund(Kind.ERROR, 1_000, bucket.streak(A));
    assertThat(bucket.balanceMilli()).isEqualTo(8_000);
    assertThat(pay(bucket, A, Kind.ERROR, 3)).as("its count given back").isEqualTo(Payment.PAID);
    RetryTokenBucket.Streak old = bucket.streak(A);
    bucket.succeeded(A, false);
    bucket.refund(Kind.ERROR, 1_000, old);
    bucket.refund(Kind.RETRY_AFTER, 500, old);
    assertThat(bucket.balanceMilli()).isEqualTo(8_500);
    for (int i = 0; i < 3; i++)
      assertThat(pay(bucket, A, Kind.ERROR, 3))
          .as("the new streak is untouched")
          .isEqualTo(Payment.PAID);
    assertThat(pay(bucket, A, Kind.ERROR, 3)).isEqualTo(Payment.HELD);
    for (int i = 0; i < 10; i++) bucket.refund(Kind.ERROR, 1_000, bucket.streak(B));
    assertThat(bucket.balanceMilli()).as("capped").isEqualTo(10_000);
    assertThat(pay(bucket, B, Kind.ERROR, 1))
        .as("a count never goes below 0")
        .isEqualTo(Payment.PAID);
    assertThat(pay(bucket, B, Kind.ERROR, 1)).isEqualTo(Payment.HELD);
  }

  @Test
  void aRetryMayBePaidFromTheReserveWhenTheBalanceIsEmpty() {
    // No balance; a reserve of 1 retry per second.
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 1, 1_000, 1_000, 500, true);
    RetryTokenBucket.Streak s = bucket.streak(A);
    assertThat(bucket.payForRetry(s, Kind.ERROR, 1_000, 10, 0))
        .as("the reserve")
        .isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(s, Kind.ERROR, 1_000, 10, 0))
        .as("and now spent")
        .isEqualTo(Payment.NO_TOKENS);
    assertThat(bucket.payForRetry(s, Kind.ERROR, 1_000, 10, 500 * MS))
        .as("half refilled")
        .isEqualTo(Payment.NO_TOKENS);
    assertThat(bucket.payForRetry(s, Kind.ERROR, 1_000, 10, 1_000 * MS))
        .as("refilled after 1 s")
        .isEqualTo(Payment.PAID);
  }

  @Test
  void whileFailuresAreRareATimeoutsRetryCostsAsAnyAndOneThatSucceedsIsFree() {
    RetryTokenBucket bucket =
        new RetryTokenBucket(0, 100_000, 100_000, 10, 1_000, 14_000, 500, true);
    assertThat(bucket.failuresAreCommon()).isFalse();
    assertThat(bucket.price(Kind.TIMEOUT)).as("a lossy link's timeout").isEqualTo(1_000);
    assertThat(bucket.price(Kind.THROTTLED)).isEqualTo(500);
    pay(bucket, A, Kind.TIMEOUT, 3);
    bucket.paidBack(1_000);
    assertThat(bucket.balanceMilli())
        .as("a retry that succeeds gets its price back")
        .isEqualTo(100_000);
    // One failure in four answers: rare.
    for (int i = 0; i < 400; i++) {
      if (i % 4 == 0) bucket.failed();
      else bucket.succeeded(A, true);
    }
    assertThat(bucket.failuresAreCommon()).isFalse();
    // One in two: common.
    for (int i = 0; i < 200; i++) {
      if (i % 2 == 0) bucket.failed();
      else bucket.succeeded(A, true);
    }
    assertThat(bucket.failuresAreCommon()).isTrue();
    assertThat(bucket.price(Kind.TIMEOUT)).as("an overload's timeout").isEqualTo(14_000);
    assertThat(bucket.price(Kind.ERROR)).isEqualTo(1_000);
    long before = bucket.balanceMilli();
    bucket.paidBack(1_000);
    assertThat(bucket.balanceMilli())
        .as("nothing paid back while failures are common")
        .isEqualTo(before);
  }

  @Test
  void anOverloadsTimeoutRetryIsNeverPaidFromTheReserve() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 14_000, 0, 100, 1_000, 14_000, 500, true);
    RetryTokenBucket.Streak s = bucket.streak(A);
    assertThat(bucket.payForRetry(s, Kind.TIMEOUT, 14_000, 10, 0))
        .as("a reserve of 100 holds it, but may not pay it")
        .isEqualTo(Payment.NO_TOKENS);
    assertThat(bucket.payForRetry(s, Kind.TIMEOUT, 1_000, 10, 0))
        .as("a lossy link's may be")
        .isEqualTo(Payment.PAID);
  }

  @Test
  void theFailureShareFallsBackToZeroSoTheHealthyPathWritesNothingAgain() {
    RetryTokenBucket bucket = defaults();
    for (int i = 0; i < 10; i++) bucket.failed();
    assertThat(bucket.failureShareMicros()).isPositive();
    int successes = 0;
    while (bucket.failureShareMicros() > 0 && successes < 100_000) {
      bucket.succeeded(A, true);
      successes++;
    }
    assertThat(successes).as("back to 0 within about a thousand successes").isBetween(100, 2_000);
  }

  @Test
  void aHeldRetryWaitsForAnAttemptSentAfterItAsksAndNotForOnesBefore() {
    RetryTokenBucket bucket = defaults();
    RetryTokenBucket.Streak s = bucket.streak(A);
    long before = bucket.sent(s);
    long since = bucket.lastSend(s);
    assertThat(bucket.mayYetAnswer(s, since)).as("nothing has failed since").isTrue();
    bucket.answered(s, before, true);
    assertThat(bucket.mayYetAnswer(s, since))
        .as("a failure of one sent before it asked says nothing of now")
        .isTrue();
    long after = bucket.sent(s);
    bucket.answered(s, after, false);
    assertThat(bucket.mayYetAnswer(s, since)).as("an answer that was no failure either").isTrue();
    long later = bucket.sent(s);
    bucket.answered(s, later, true);
    assertThat(bucket.mayYetAnswer(s, since))
        .as("one sent after it asked failed: the origin still fails")
        .isFalse();
    RetryTokenBucket.Streak next = bucket.streak(B);
    since = bucket.lastSend(next);
    bucket.sent(next);
    bucket.succeeded(B, true);
    assertThat(bucket.mayYetAnswer(next, since))
        .as("ended: the origin answered, the held retry asks again at once")
        .isTrue();
    assertThat(next.ended()).isTrue();
  }

  /**
   * 200 calls/s for 60 s to a server failing everything, each call allowed 3 retries (after 100,
   * 300 and 700 ms, or after 1, 2 and 3 s when each 503 says {@code Retry-After: 1}), every retry
   * asking the bucket at its own time. Returns {extra attempts by the calls of seconds 0..4,
   * attempts per call of seconds 5..56}: retries come up to 3 s after their call, so the starting
   * balance is spent by calls of the first few seconds, and the calls of the last 3 s retry after
   * the load ended, from a reserve nobody else draws on.
   */
  static double[] failingServer(boolean retryAfter) {
    RetryTokenBucket bucket = defaults();
    int perSecond = 200;
    int seconds = 60;
    long[] retryDelays =
        retryAfter
            ? new long[] {1_000 * MS, 2_000 * MS, 3_000 * MS}
            : new long[] {100 * MS, 300 * MS, 700 * MS};
    int[] attempts = new int[perSecond * seconds];
    // {time, call, retry number}
    PriorityQueue<long[]> retries = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
    for (int call = 0; call < attempts.length; call++) {
      long t = call * (1_000 * MS / perSecond);
      while (!retries.isEmpty() && retries.peek()[0] <= t)
        retry(bucket, retries, attempts, retryDelays, retryAfter);
      attempts[call] = 1;
      retries.add(new long[] {t + retryDelays[0], call, 0});
    }
    while (!retries.isEmpty()) retry(bucket, retries, attempts, retryDelays, retryAfter);
    long transientExtra = 0;
    long sustained = 0;
    int from = 5 * perSecond;
    int to = (seconds - 3) * perSecond;
    for (int call = 0; call < to; call++) {
      if (call < from) transientExtra += attempts[call] - 1;
      else sustained += attempts[call];
    }
    return new double[] {transientExtra, sustained / (double) (to - from)};
  }

  static void retry(
      RetryTokenBucket bucket,
      PriorityQueue<long[]> retries,
      int[] attempts,
      long[] delays,
      boolean ra) {
    long[] r = retries.poll();
    if (!bucket.tryWithdraw(ra, r[0])) return; // refused: the call ends on its 503
    int call = (int) r[1];
    attempts[call]++;
    int next = (int) r[2] + 1;
    if (next < delays.length)
      retries.add(new long[] {r[0] - delays[next - 1] + delays[next], call, next});
  }

  @ParameterizedTest(name = "Retry-After: {0}")
  @ValueSource(booleans = {false, true})
  void aServerFailingEverythingSeesTheStartingBalanceThenOnlyTheReserve(boolean retryAfter) {
    double[] result = failingServer(retryAfter);
    if (Boolean.getBoolean("okretry.printTables")) {
      System.out.printf(
          "simulated, Retry-After %s: %.0f extra attempts from the calls of seconds 0..4, then %.4f"
              + " attempts per call (seconds 5..56)%n",
          retryAfter, result[0], result[1]);
    }
    if (retryAfter) {
      // 100 tokens at 0.5 each, the reserve's 10 and 5 s of its refill, at 0.5 each.
      assertThat(result[0]).isLessThanOrEqualTo(200 + 20 + 5 * 20);
      assertThat(result[1]).isLessThanOrEqualTo(1.1);
    } else {
      assertThat(result[0]).isLessThanOrEqualTo(100 + 10 + 5 * 10);
      assertThat(result[1]).isLessThanOrEqualTo(1.05);
    }
  }
}
