package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.RetryTokenBucket.Kind;
import io.github.okretry.internal.RetryTokenBucket.Payment;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The budget's arithmetic, driven on simulated time as a fleet simulator would drive it. */
@Tag("unit")
class RetryTokenBucketTest {

  static final long MS = 1_000_000L;

  static RetryTokenBucket defaults() {
    return RetryTokenBucket.withDefaults(Tuning.PERCENT_CAN_RETRY, Tuning.MAX_TOKENS, Tuning.MIN_RETRIES_PER_SECOND, true);
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
    assertThat(bucket.tryWithdraw(true, 500 * MS)).as("0.5 refilled: one Retry-After retry").isTrue();
    for (int i = 0; i < 100; i++) bucket.deposit();
    assertThat(bucket.balanceMilli()).isEqualTo(2_000);
  }

  @Test
  void withDefaultsTakesThePublicSettingsInTokens() {
    RetryTokenBucket bucket = RetryTokenBucket.withDefaults(0.5, 2, 0, true);
    assertThat(bucket.balanceMilli()).as("starts full").isEqualTo(2_000);
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.tryWithdraw(false, 0)).as("no reserve").isFalse();
    bucket.deposit();
    assertThat(bucket.balanceMilli()).as("half a token per success").isEqualTo(500);
  }

  @Test
  void theReserveRefillsInProportionToItsRate() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 10, 1_000, 1_000, 500, true);
    for (int i = 0; i < 10; i++) assertThat(bucket.tryWithdraw(false, 0)).as("the reserve's 10 tokens").isTrue();
    assertThat(bucket.tryWithdraw(false, 0)).isFalse();
    assertThat(bucket.tryWithdraw(false, 99 * MS)).as("0.99 tokens after 99 ms at 10 per second").isFalse();
    assertThat(bucket.tryWithdraw(false, 100 * MS)).isTrue();
  }

  @Test
  void timeTooShortToRefillAnythingIsNotLost() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 1, 1_000, 1_000, 500, true);
    assertThat(bucket.tryWithdraw(false, 0)).isTrue();
    assertThat(bucket.tryWithdraw(true, MS / 2)).as("nothing refilled in 0.5 ms").isFalse();
    assertThat(bucket.tryWithdraw(true, 500 * MS)).as("0.5 tokens since 0, not since 0.5 ms").isTrue();
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
    assertThatThrownBy(() -> new RetryTokenBucket(-1, 1_000, 0, 0, 1_000, 1_000, 500, true)).hasMessageContaining("depositMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 999, 0, 0, 1_000, 1_000, 500, true)).hasMessageContaining("capacityMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 1_001, 0, 1_000, 1_000, 500, true)).hasMessageContaining("initialMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 0, -1, 1_000, 1_000, 500, true)).hasMessageContaining("reservePerSecond");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 0, 0, 0, 0, 500, true)).hasMessageContaining("retryCostMilli");
    assertThatThrownBy(() -> new RetryTokenBucket(0, 1_000, 0, 0, 1_000, 1_000, 0, true)).hasMessageContaining("retryAfterCostMilli");
  }

  @Test
  void sinceTheLastSuccessItPaysOneFailingCallsRetriesThenNoneUntilASuccess() {
    RetryTokenBucket bucket = new RetryTokenBucket(200, 100_000, 100_000, 10, 1_000, 1_000, 500, true);
    for (int i = 0; i < 3; i++) assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("a new bucket: one call's worth").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("three since the last success").isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).as("a Retry-After retry too").isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(bucket.payForRetry(Kind.ERROR, 4, 0)).as("a call allowed 4 retries may make its 4th").isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).as("refusals take nothing").isEqualTo(96_000);
    bucket.deposit();
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("a first-attempt success starts again").isEqualTo(Payment.PAID);
    bucket.payForRetry(Kind.ERROR, 3, 0);
    bucket.payForRetry(Kind.ERROR, 3, 0);
    long balance = bucket.balanceMilli();
    bucket.succeeded();
    assertThat(bucket.balanceMilli()).as("a retry's success earns nothing").isEqualTo(balance);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("but starts again too").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 0, 0)).as("maxRetries 0: none").isEqualTo(Payment.NO_RECENT_SUCCESS);
  }

  @Test
  void aRetryThatWaitsOutARetryAfterCountsHalf() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 100_000, 100_000, 0, 1_000, 1_000, 500, true);
    for (int i = 0; i < 6; i++) assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).as("six halves: one call's three").isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(bucket.balanceMilli()).isEqualTo(97_000);
    bucket.succeeded();
    assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("1 + 2 + 2 halves").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("another would make 7").isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).as("a half still fits").isEqualTo(Payment.PAID);
  }

  @Test
  void aThrottledRetryIsNotCountedButPaysHalf() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 100_000, 100_000, 0, 1_000, 10_000, 500, true);
    for (int i = 0; i < 3; i++) bucket.payForRetry(Kind.ERROR, 3, 0);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).isEqualTo(Payment.NO_RECENT_SUCCESS);
    for (int i = 0; i < 50; i++) assertThat(bucket.payForRetry(Kind.THROTTLED, 3, 0)).as("a server pacing this client").isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).isEqualTo(100_000 - 3_000 - 50 * 500);
    bucket.refund(Kind.THROTTLED);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("its refund gives back no count").isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(bucket.balanceMilli()).isEqualTo(100_000 - 3_000 - 49 * 500);
    assertThat(bucket.payForRetry(Kind.TIMEOUT, 5, 0)).isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).as("a timeout costs its own price").isEqualTo(100_000 - 3_000 - 49 * 500 - 10_000);
  }

  @Test
  void theStrictRulePaysNoRetryAfterAnErrorBeforeTheFirstSuccess() {
    RetryTokenBucket bucket = new RetryTokenBucket(200, 100_000, 100_000, 10, 1_000, 1_000, 500, false);
    for (int i = 0; i < 100; i++) assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).isEqualTo(Payment.NO_RECENT_SUCCESS);
    assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).as("the server said when: paid").isEqualTo(Payment.PAID);
    assertThat(bucket.balanceMilli()).isEqualTo(99_500);
    bucket.succeeded();
    for (int i = 0; i < 3; i++) assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("after a success, as the default").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).isEqualTo(Payment.NO_RECENT_SUCCESS);
  }

  @Test
  void aRetryTheBucketCannotPayForIsRefusedAndNotCounted() {
    // Two retries in the balance, no reserve.
    RetryTokenBucket bucket = new RetryTokenBucket(0, 2_000, 2_000, 0, 1_000, 1_000, 500, true);
    assertThat(bucket.payForRetry(Kind.ERROR, 5, 0)).isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 5, 0)).isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 5, 0)).as("counts left, no tokens").isEqualTo(Payment.NO_TOKENS);
    bucket.refund(Kind.ERROR);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("the refusal took no count; the refund gave one back").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.RETRY_AFTER, 3, 0)).as("no tokens").isEqualTo(Payment.NO_TOKENS);
  }

  @Test
  void aRefundGivesBackTheCostAndTheCountButNeverPastTheCapacityOrBelowASuccess() {
    RetryTokenBucket bucket = new RetryTokenBucket(0, 10_000, 10_000, 0, 1_000, 1_000, 500, true);
    for (int i = 0; i < 3; i++) bucket.payForRetry(Kind.ERROR, 3, 0);
    assertThat(bucket.balanceMilli()).isEqualTo(7_000);
    bucket.refund(Kind.ERROR);
    assertThat(bucket.balanceMilli()).isEqualTo(8_000);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("its count given back").isEqualTo(Payment.PAID);
    bucket.succeeded();
    bucket.refund(Kind.ERROR);
    bucket.refund(Kind.RETRY_AFTER);
    assertThat(bucket.balanceMilli()).isEqualTo(8_500);
    for (int i = 0; i < 3; i++) assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).as("a count is never below 0").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 3, 0)).isEqualTo(Payment.NO_RECENT_SUCCESS);
    for (int i = 0; i < 10; i++) bucket.refund(Kind.ERROR);
    assertThat(bucket.balanceMilli()).as("capped").isEqualTo(10_000);
  }

  @Test
  void aRetryMayBePaidFromTheReserveWhenTheBalanceIsEmpty() {
    // No balance; a reserve of 1 retry per second.
    RetryTokenBucket bucket = new RetryTokenBucket(0, 1_000, 0, 1, 1_000, 1_000, 500, true);
    assertThat(bucket.payForRetry(Kind.ERROR, 10, 0)).as("the reserve").isEqualTo(Payment.PAID);
    assertThat(bucket.payForRetry(Kind.ERROR, 10, 0)).as("and now spent").isEqualTo(Payment.NO_TOKENS);
    assertThat(bucket.payForRetry(Kind.ERROR, 10, 500 * MS)).as("half refilled").isEqualTo(Payment.NO_TOKENS);
    assertThat(bucket.payForRetry(Kind.ERROR, 10, 1_000 * MS)).as("refilled after 1 s").isEqualTo(Payment.PAID);
  }

  /**
   * 200 calls/s for 60 s to a server failing everything, each call allowed 3 retries (after 100,
   * 300 and 700 ms, or after 1, 2 and 3 s when each 503 says {@code Retry-After: 1}), every
   * retry asking the bucket at its own time. Returns {extra attempts by the calls of seconds
   * 0..4, attempts per call of seconds 5..56}: retries come up to 3 s after their call, so the
   * starting balance is spent by calls of the first few seconds, and the calls of the last 3 s
   * retry after the load ended, from a reserve nobody else draws on.
   */
  static double[] failingServer(boolean retryAfter) {
    RetryTokenBucket bucket = defaults();
    int perSecond = 200;
    int seconds = 60;
    long[] retryDelays = retryAfter ? new long[] {1_000 * MS, 2_000 * MS, 3_000 * MS} : new long[] {100 * MS, 300 * MS, 700 * MS};
    int[] attempts = new int[perSecond * seconds];
    // {time, call, retry number}
    PriorityQueue<long[]> retries = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
    for (int call = 0; call < attempts.length; call++) {
      long t = call * (1_000 * MS / perSecond);
      while (!retries.isEmpty() && retries.peek()[0] <= t) retry(bucket, retries, attempts, retryDelays, retryAfter);
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

  static void retry(RetryTokenBucket bucket, PriorityQueue<long[]> retries, int[] attempts, long[] delays, boolean ra) {
    long[] r = retries.poll();
    if (!bucket.tryWithdraw(ra, r[0])) return; // refused: the call ends on its 503
    int call = (int) r[1];
    attempts[call]++;
    int next = (int) r[2] + 1;
    if (next < delays.length) retries.add(new long[] {r[0] - delays[next - 1] + delays[next], call, next});
  }

  @ParameterizedTest(name = "Retry-After: {0}")
  @ValueSource(booleans = {false, true})
  void aServerFailingEverythingSeesTheStartingBalanceThenOnlyTheReserve(boolean retryAfter) {
    double[] result = failingServer(retryAfter);
    if (Boolean.getBoolean("okretry.printTables")) {
      System.out.printf("simulated, Retry-After %s: %.0f extra attempts from the calls of seconds 0..4, then %.4f attempts per call (seconds 5..56)%n",
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
