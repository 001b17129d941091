package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.OriginGate.QuotaTurn;
import java.util.SplittableRandom;
import okhttp3.HttpUrl;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link QuotaPacer} through {@link OriginGate}, on fake time: what a published quota does to the
 * calls after it, and what hostile values cannot do. Headers are written {@code Name: value | Name:
 * value} as in {@link QuotaHeadersTest}.
 */
@Tag("unit")
class QuotaPacerTest {
  static final long MS = 1_000_000L;
  static final long S = 1_000_000_000L;
  static final long FAR = 600 * S;
  // 2026-01-01T00:00:00Z, also every response's Date
  static final long NOW_MILLIS = 1_767_225_600_000L;
  static final HttpUrl URL = HttpUrl.get("https://api.test/items");
  static final String POLICY = "RateLimit-Policy: \"default\";q=20;w=1";

  final OriginGate gate = gate(false);

  static OriginGate gate(boolean probe) {
    SplittableRandom r = new SplittableRandom(7);
    return new OriginGate(Tuning.MAX_ORIGINS, true, probe, () -> NOW_MILLIS, r::nextLong);
  }

  static Response response(HttpUrl url, int code, String spec) {
    Response.Builder b =
        new Response.Builder()
            .request(new Request.Builder().url(url).build())
            .protocol(Protocol.HTTP_1_1)
            .code(code)
            .message("")
            .headers(QuotaHeadersTest.headers(spec));
    return b.build();
  }

  /** An answer to a send counted as {@code counted} (null: uncounted), at {@code now}. */
  void answer(@Nullable QuotaTurn counted, long now, int code, String spec) {
    gate.quotaAnswered(
        counted,
        response(URL, code, spec),
        code == 429 || code == 503,
        RetryAfter.delayNanos(response(URL, code, spec), () -> NOW_MILLIS),
        now);
  }

  @Nullable QuotaTurn admit(long now) {
    return gate.admitQuota(URL, now, FAR);
  }

  @Test
  void anOriginThatNeverPublishesAQuotaCostsNothing() {
    assertThat(gate.pacesQuotas()).isFalse();
    assertThat(admit(0)).isNull();
    answer(null, 0, 200, "Content-Type: text/plain");
    answer(null, 0, 503, "Retry-After: 1");
    assertThat(gate.size()).as("no entry").isZero();
    assertThat(gate.pacesQuotas()).isFalse();
  }

  /**
   * Issue 36 item 4: 12 sends left before the origin was known to publish a quota; the first answer
   * says 9 of 20 are left. The 11 still in flight spend them, so a call after it waits for the
   * reset instead of going to be refused; once they are answered, the quota alone decides.
   */
  @Test
  void sendsThatLeftBeforeTheFirstAnswerSpendWhatItSaysIsLeft() {
    for (int i = 0; i < 12; i++) gate.uncountedSent(URL);
    gate.uncountedEnded(URL);
    answer(null, MS, 200, POLICY + " | RateLimit: \"default\";r=9;t=1");
    assertThat(admit(2 * MS).waitNanos())
        .as("9 left, 11 in flight: spent until the reset")
        .isGreaterThanOrEqualTo(S - 2 * MS);
    for (int i = 0; i < 11; i++) gate.uncountedEnded(URL);
    assertThat(admit(3 * MS).waitNanos()).as("none in flight: 9 left").isZero();
  }

  @Test
  void aCountedAnswerInTheWindowLeavesTheUncountedToItsFigures() {
    for (int i = 0; i < 12; i++) gate.uncountedSent(URL);
    answer(null, MS, 200, POLICY + " | RateLimit: \"default\";r=15;t=1");
    QuotaTurn counted = admit(2 * MS);
    assertThat(counted.waitNanos()).as("15 left, 12 in flight").isZero();
    answer(counted, 3 * MS, 200, POLICY + " | RateLimit: \"default\";r=2;t=1");
    assertThat(admit(4 * MS).waitNanos())
        .as("its figures count what reached the server before it")
        .isZero();
  }

  @Test
  void aNameHeardAsAnIetfPolicyAndThenAsAGitHubBucketIsTwoQuotasNotACrash() {
    HttpUrl b = URL.resolve("/other");
    gate.quotaAnswered(
        null,
        response(URL, 200, "RateLimit-Policy: \"core\";q=10;w=10 | RateLimit: \"core\";r=5;t=10"),
        false,
        RetryAfter.ABSENT,
        0);
    gate.quotaAnswered(
        null,
        response(
            b,
            200,
            "X-RateLimit-Limit: 10 | X-RateLimit-Remaining: 0 | X-RateLimit-Resource: core"
                + " | X-RateLimit-Reset: "
                + (NOW_MILLIS / 1000 + 60)),
        false,
        RetryAfter.ABSENT,
        MS);
    assertThat(gate.admitQuota(b, MS, FAR).waitNanos())
        .as("the bucket GitHub named: spent")
        .isPositive();
  }

  @Test
  void aSpentQuotaHoldsCallsUntilItsResetPlusAnOffsetWithinOneIntervalNeverBefore() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=0;t=1");
    assertThat(gate.pacesQuotas()).isTrue();
    long wait = admit(0).waitNanos();
    assertThat(wait).isBetween(1 * S, 1 * S + 50 * MS); // w/q = 50 ms
    assertThat(admit(300 * MS).waitNanos())
        .as("asked again later: the same release time")
        .isEqualTo(wait - 300 * MS);
    assertThat(admit(wait).waitNanos()).as("released at its time, counted").isZero();
  }

  @Test
  void afterTheResetOneCallAtATimeUntilAnAnswerTellsTheNewRemaining() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=0;t=1");
    long at = 2 * S;
    QuotaTurn first = admit(at);
    assertThat(first.waitNanos()).isZero();
    assertThat(admit(at).waitNanos())
        .as("the rest wait for its answer")
        .isEqualTo(QuotaPacer.ANSWER_POLL_NANOS);
    answer(first, at + 10 * MS, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    assertThat(admit(at + 10 * MS).waitNanos()).as("its answer says 19 are left").isZero();
  }

  @Test
  void availableIsTheServersRemainingLessThisClientsCallsInFlight() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=2;t=1");
    // One answer so far: slow start allows 2 in flight, and 2 are left.
    assertThat(admit(0).waitNanos()).isZero();
    assertThat(admit(0).waitNanos()).isZero();
    assertThat(admit(0).waitNanos())
        .as("2 in flight, 2 left: spent until the reset")
        .isGreaterThanOrEqualTo(1 * S);
  }

  @Test
  void aFreshKeyGrowsItsCallsInFlightByOnePerAnswerAsSlowStartDoes() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    QuotaTurn a = admit(0);
    QuotaTurn b = admit(0);
    assertThat(a.waitNanos()).isZero();
    assertThat(b.waitNanos()).isZero();
    assertThat(admit(0).waitNanos())
        .as("1 answer: 2 in flight")
        .isEqualTo(QuotaPacer.ANSWER_POLL_NANOS);
    answer(a, MS, 200, POLICY + " | RateLimit: \"default\";r=18;t=1");
    assertThat(admit(MS).waitNanos()).isZero();
    assertThat(admit(MS).waitNanos()).isZero();
    assertThat(admit(MS).waitNanos())
        .as("2 answers: 3 in flight")
        .isEqualTo(QuotaPacer.ANSWER_POLL_NANOS);
  }

  @Test
  void aQuotaThatFallsFasterThanThisClientSendsIsSpreadOverTheTimeToItsReset() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    QuotaTurn a = admit(0);
    answer(a, 10 * MS, 200, POLICY + " | RateLimit: \"default\";r=18;t=1");
    QuotaTurn b = admit(10 * MS);
    // One send since the last answer, but the server counts 8 fewer: others draw on it.
    answer(b, 20 * MS, 200, POLICY + " | RateLimit: \"default\";r=10;t=1");
    // Spread: 10 left over the 980 ms to the window's reset (its first, at 1 s), from the last
    // send.
    assertThat(admit(20 * MS).waitNanos()).isEqualTo(10 * MS + 98 * MS - 20 * MS);
    assertThat(admit(108 * MS).waitNanos()).isZero();
    assertThat(admit(108 * MS).waitNanos()).as("9 left over 892 ms").isEqualTo(892 * MS / 9);
  }

  @Test
  void aFallWithinThisClientsOwnSendsInFlightIsNotTakenForOthers() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    QuotaTurn a = admit(0);
    answer(a, 1 * MS, 200, POLICY + " | RateLimit: \"default\";r=18;t=1");
    QuotaTurn b = admit(2 * MS);
    QuotaTurn c = admit(2 * MS);
    // c reached the server before b: b's answer counts both.
    answer(b, 3 * MS, 200, POLICY + " | RateLimit: \"default\";r=16;t=1");
    assertThat(admit(3 * MS).waitNanos()).as("not spread").isZero();
  }

  @Test
  void aRefusalWhileTheQuotaSaidSomeWasLeftMeansOthersDrawOnIt() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    QuotaTurn a = admit(0);
    answer(a, 10 * MS, 429, POLICY + " | RateLimit: \"default\";r=0;t=1");
    // Spent now; once the reset passes and an answer says 19, the key is spread, not burst.
    QuotaTurn b = admit(2 * S);
    answer(b, 2 * S + 10 * MS, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    assertThat(admit(2 * S + 10 * MS).waitNanos())
        .as("spread: 19 over 1 s from the last send")
        .isEqualTo(S / 19 - 10 * MS);
  }

  @Test
  void retryAfterTakesPrecedenceOverTheQuotasReset() {
    answer(null, 0, 429, POLICY + " | RateLimit: \"default\";r=0;t=1 | Retry-After: 3");
    assertThat(admit(0).waitNanos()).isBetween(3 * S, 3 * S + 50 * MS);
  }

  @Test
  void aWaitLongerThanTheCallCanAffordIsNotImposed() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=0;t=10");
    assertThat(gate.admitQuota(URL, 0, 1 * S).waitNanos())
        .as("it goes, and the server decides")
        .isZero();
    assertThat(gate.admitQuota(URL, 0, 11 * S).waitNanos()).isPositive();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          t beyond 10 minutes: not believed   ¦ RateLimit: "default";r=0;t=86400
          an epoch in the past: not believed  ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767225000
          no reset at all                     ¦ X-RateLimit-Remaining: 0
          """)
  void aSpentQuotaWithoutABelievableResetIsRetriedOncePerIntervalNeverParked(
      String name, String spec) {
    answer(null, 0, 200, spec);
    long wait = admit(0).waitNanos();
    assertThat(wait)
        .as("re-tried after one interval, not parked")
        .isEqualTo(QuotaPacer.DEFAULT_INTERVAL_NANOS);
    QuotaTurn seq = admit(wait);
    assertThat(seq.waitNanos()).isZero();
    assertThat(admit(wait).waitNanos()).as("one at a time").isPositive();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          a 401's placeholders      ¦ 401 ¦ RateLimit: "default";r=0;t=60
          a 407's placeholders      ¦ 407 ¦ RateLimit: "default";r=0;t=60
          a cached copy (Age > 0)   ¦ 200 ¦ RateLimit: "default";r=0;t=60 | Age: 30
          a negative remaining      ¦ 200 ¦ RateLimit: "default";r=-1;t=60
          a malformed field         ¦ 200 ¦ RateLimit: "default";r=0;t=60,
          """)
  void holdsNothing(String name, int code, String spec) {
    answer(null, 0, code, spec);
    assertThat(gate.size()).isZero();
    assertThat(admit(0)).isNull();
  }

  @Test
  void remainingAboveTheQuotaIsBoundedByIt() {
    answer(
        null, 0, 200, "RateLimit-Policy: \"default\";q=1;w=1 | RateLimit: \"default\";r=500;t=1");
    assertThat(admit(0).waitNanos()).isZero();
    assertThat(admit(0).waitNanos()).as("1 left, not 500").isGreaterThanOrEqualTo(1 * S);
  }

  @Test
  void aRiseWithinTheWindowIsNotBelieved() {
    answer(null, 0, 200, "RateLimit: \"default\";r=0;t=5");
    answer(
        null,
        1 * S,
        200,
        "RateLimit: \"default\";r=3;t=4"); // an overtaken answer, or a loose count
    assertThat(admit(1 * S).waitNanos()).as("still spent").isGreaterThanOrEqualTo(4 * S);
  }

  @Test
  void anAnswerOvertakenByALaterOneDoesNotRaiseTheCount() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    answer(
        null,
        0,
        200,
        POLICY + " | RateLimit: \"default\";r=19;t=1"); // three answers: four in flight
    QuotaTurn[] seqs = new QuotaTurn[4];
    for (int i = 0; i < 4; i++) seqs[i] = admit(MS);
    assertThat(seqs)
        .extracting(QuotaTurn::waitNanos)
        .as("all four go, each counted")
        .containsOnly(0L);
    assertThat(seqs).extracting(t -> t.seq).doesNotContain(0L).doesNotHaveDuplicates().isSorted();
    answer(seqs[3], 2 * MS, 200, POLICY + " | RateLimit: \"default\";r=2;t=1"); // others took most
    answer(seqs[1], 3 * MS, 200, POLICY + " | RateLimit: \"default\";r=16;t=1"); // overtaken
    answer(seqs[2], 3 * MS, 200, POLICY + " | RateLimit: \"default\";r=15;t=1"); // overtaken
    answer(seqs[0], 3 * MS, 200, POLICY + " | RateLimit: \"default\";r=18;t=1"); // overtaken
    assertThat(admit(3 * MS).waitNanos()).as("2 left").isZero();
    assertThat(admit(3 * MS).waitNanos()).isZero();
    assertThat(admit(3 * MS).waitNanos()).as("spent").isPositive();
  }

  @Test
  void aWindowsFirstResetStandsSoASteadyClientSeesTheNextWindow() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    answer(null, 500 * MS, 200, POLICY + " | RateLimit: \"default\";r=10;t=1");
    // The window is over at 1 s, not 1.5 s: an answer then that says 19 is believed.
    answer(null, 1_001 * MS, 200, POLICY + " | RateLimit: \"default\";r=19;t=1");
    for (int i = 0; i < 2; i++) assertThat(admit(1_001 * MS).waitNanos()).isZero();
  }

  @Test
  void aBucketGatesThePathsItCoversAsGitHubsCoreAndSearchDo() {
    gate.quotaAnswered(
        null,
        response(
            URL,
            200,
            "X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 5 | X-RateLimit-Resource: core"),
        false,
        RetryAfter.ABSENT,
        0);
    assertThat(admit(0).waitNanos()).isGreaterThanOrEqualTo(5 * S);
    assertThat(gate.admitQuota(HttpUrl.get("https://api.test/other"), 0, FAR).waitNanos())
        .as("the only bucket: every path")
        .isGreaterThanOrEqualTo(5 * S);
    HttpUrl search = HttpUrl.get("https://api.test/search/issues?q=x");
    gate.quotaAnswered(
        null,
        response(
            search,
            200,
            "X-RateLimit-Remaining: 9 | X-RateLimit-Reset-After: 60 | X-RateLimit-Resource:"
                + " search"),
        false,
        RetryAfter.ABSENT,
        0);
    assertThat(gate.admitQuota(HttpUrl.get("https://api.test/search/code"), 0, FAR).waitNanos())
        .as("search's")
        .isZero();
    assertThat(gate.admitQuota(HttpUrl.get("https://api.test/other/1"), 0, FAR).waitNanos())
        .as("still core's")
        .isGreaterThanOrEqualTo(5 * S);
  }

  @Test
  void twoPoliciesOfOneResponseBothGate() {
    answer(
        null,
        0,
        200,
        "RateLimit-Policy: \"hour\";q=100;w=3600, \"day\";q=1000;w=86400 | RateLimit:"
            + " \"hour\";r=5;t=60, \"day\";r=0;t=300");
    assertThat(admit(0).waitNanos()).as("the day's is spent").isGreaterThanOrEqualTo(300 * S);
  }

  @Test
  void probingHoldsACrowdOnAFreshOriginUntilItsFirstAnswerAndFreesAnOriginWithoutAQuota() {
    OriginGate probing = gate(true);
    assertThat(probing.pacesQuotas()).isTrue();
    QuotaTurn first = probing.admitQuota(URL, 0, FAR);
    assertThat(first.waitNanos()).isZero();
    assertThat(probing.admitQuota(URL, 0, FAR).waitNanos()).isEqualTo(QuotaPacer.ANSWER_POLL_NANOS);
    probing.quotaAnswered(
        first, response(URL, 200, "Content-Type: text/plain"), false, RetryAfter.ABSENT, MS);
    for (int i = 0; i < 10; i++) assertThat(probing.admitQuota(URL, MS, FAR).waitNanos()).isZero();
  }

  @Test
  void probingLearnsTheQuotaFromTheFirstAnswerBeforeTheCrowdSpendsIt() {
    OriginGate probing = gate(true);
    QuotaTurn first = probing.admitQuota(URL, 0, FAR);
    probing.quotaAnswered(
        first,
        response(
            URL, 200, "RateLimit-Policy: \"default\";q=2;w=1 | RateLimit: \"default\";r=1;t=1"),
        false,
        RetryAfter.ABSENT,
        MS);
    assertThat(probing.admitQuota(URL, MS, FAR).waitNanos()).isZero();
    assertThat(probing.admitQuota(URL, MS, FAR).waitNanos())
        .as("the one left is in flight")
        .isGreaterThanOrEqualTo(S - MS);
  }

  @Test
  void aProbesAnswerShortByMoreThanThisClientSentMeansOthersDrawOnIt() {
    OriginGate probing = gate(true);
    QuotaTurn first = probing.admitQuota(URL, 0, FAR);
    // 20 a window, 1 sent, 17 left: two others spent theirs first. Spread, not burst.
    probing.quotaAnswered(
        first,
        response(URL, 200, POLICY + " | RateLimit: \"default\";r=17;t=1"),
        false,
        RetryAfter.ABSENT,
        MS);
    assertThat(probing.admitQuota(URL, MS, FAR).waitNanos())
        .as("17 over the 1 s to the reset, from the probe's send")
        .isEqualTo(S / 17 - MS);
  }

  @Test
  void anExceptionTakesASendOutOfFlight() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=1;t=1");
    QuotaTurn a = admit(0);
    assertThat(admit(0).waitNanos()).isPositive();
    gate.quotaAnswered(a, null, false, RetryAfter.ABSENT, MS);
    assertThat(admit(MS).waitNanos()).isZero();
  }

  @Test
  void theOriginIsForgottenOnceItsFiguresLapse() {
    answer(null, 0, 200, POLICY + " | RateLimit: \"default\";r=0;t=1");
    assertThat(gate.size()).isEqualTo(1);
    gate.check(URL, 0);
    assertThat(gate.admitQuota(HttpUrl.get("https://other.test/"), 0, FAR)).isNull();
    gate.close(
        HttpUrl.get("https://other.test/"),
        40 * S,
        41 * S,
        503); // an insertion expires lapsed entries
    assertThat(gate.admitQuota(URL, 40 * S, FAR)).isNull();
    assertThat(gate.pacesQuotas()).isFalse();
  }
}
