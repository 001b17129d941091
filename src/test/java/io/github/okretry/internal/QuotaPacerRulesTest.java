package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link QuotaPacer} on its own, rule by rule as its Javadoc and docs/semantics.md ("Pacing by a
 * published quota") state them: keys, spent, after the reset, slow start, shared, counts that rise,
 * forgetting, probe. Quotas are built directly (no headers); the offset past a reset is drawn with
 * {@link ExtremeRandom}, so every wait is exact. The table of call sequences runs on a clock that
 * starts at 0 and on one that wraps past {@link Long#MAX_VALUE}, since times are compared by
 * subtraction as {@link System#nanoTime()} values are.
 */
@Tag("unit")
class QuotaPacerRulesTest {
  static final long MS = 1_000_000L;
  static final long S = 1_000_000_000L;
  static final long FAR = 600 * S;
  static final long POLL = QuotaPacer.ANSWER_POLL_NANOS;
  static final String PATH = "/items";
  static final String OTHER_PATH = "/other";
  static final long UNCOUNTED = 0; // the number of a send the pacer did not count

  long t0; // the clock's origin: every time below is relative to it
  RandomSource random = ExtremeRandom.LOWEST;
  QuotaPacer pacer = new QuotaPacer(false, 0);

  // ---- helpers -----------------------------------------------------------------------------

  void start(long origin, boolean probe) {
    t0 = origin;
    pacer = new QuotaPacer(probe, origin);
  }

  /**
   * An IETF policy {@code name}, no q or w (a 50 ms interval), with a reset {@code resetAfter} from
   * {@code at}.
   */
  Quota quota(String name, long at, long remaining, long resetAfter) {
    return new Quota(
        Quota.Form.IETF_LIST, name, null, remaining, false, 0, 0, t0 + at, true, resetAfter);
  }

  Quota quota(long at, long remaining, long resetAfter) {
    return quota("default", at, remaining, resetAfter);
  }

  /** q=10, w=1 s: one unit's interval is 100 ms. */
  Quota tenPerSecond(long at, long remaining, long resetAfter) {
    return new Quota(
        Quota.Form.IETF_LIST, "default", null, remaining, true, 10, S, t0 + at, true, resetAfter);
  }

  Quota withoutReset(long at, long remaining) {
    return new Quota(
        Quota.Form.IETF_LIST, "default", null, remaining, false, 0, 0, t0 + at, false, 0);
  }

  long admit(long at) {
    return pacer.admit(t0 + at, PATH, FAR);
  }

  long admit(long at, String path) {
    return pacer.admit(t0 + at, path, FAR);
  }

  /**
   * A call that cannot wait: it goes whatever the quota says, counted; its number for the answer.
   */
  long send(long at) {
    assertThat(pacer.admit(t0 + at, PATH, 0)).isZero();
    return pacer.lastSend();
  }

  void answer(long seq, long at, Quota... quotas) {
    pacer.answered(seq, PATH, List.of(quotas), false, RetryAfter.ABSENT, t0 + at, random);
  }

  void answer(long seq, String path, long at, Quota... quotas) {
    pacer.answered(seq, path, List.of(quotas), false, RetryAfter.ABSENT, t0 + at, random);
  }

  void refused(long seq, long at, Quota... quotas) {
    pacer.answered(seq, PATH, List.of(quotas), true, RetryAfter.ABSENT, t0 + at, random);
  }

  void answerWithoutQuota(long seq, long at) {
    pacer.answered(seq, PATH, null, false, RetryAfter.ABSENT, t0 + at, random);
  }

  // ---- spent -------------------------------------------------------------------------------

  @ParameterizedTest(name = "offset drawn {0}")
  @CsvSource({"lowest, 0", "highest, 100"})
  void aSpentQuotaHoldsACallUntilItsResetPlusAnOffsetInZeroToOneInterval(
      String draw, long offsetMillis) {
    random = draw.equals("lowest") ? ExtremeRandom.LOWEST : ExtremeRandom.HIGHEST;
    answer(UNCOUNTED, 0, tenPerSecond(0, 0, S)); // w/q = 100 ms
    assertThat(admit(0)).isEqualTo(S + offsetMillis * MS);
    assertThat(admit(S - MS)).as("never before the reset").isEqualTo(MS + offsetMillis * MS);
  }

  @Test
  void aWaitAsLongAsTheCallCanAffordIsImposedALongerOneIsNot() {
    answer(UNCOUNTED, 0, quota(0, 0, S));
    assertThat(pacer.admit(t0, PATH, S)).isEqualTo(S);
    assertThat(pacer.admit(t0, PATH, S - 1)).as("the call goes and the server decides").isZero();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          q=10 and w=1 s: w/q                 | true  | 10 | 1000 | 100
          a limit but no window: 50 ms        | true  | 10 | 0    | 50
          a window but no limit: 50 ms        | false | 0  | 1000 | 50
          a limit of 0: 50 ms                 | true  | 0  | 1000 | 50
          """)
  void aSpentQuotaWithoutAResetIsRetriedOncePerInterval(
      String name, boolean hasLimit, long limit, long windowMillis, long intervalMillis) {
    answer(
        UNCOUNTED,
        0,
        new Quota(
            Quota.Form.IETF_LIST,
            "default",
            null,
            0,
            hasLimit,
            limit,
            windowMillis * MS,
            t0,
            false,
            0));
    assertThat(admit(0)).isEqualTo(intervalMillis * MS);
    assertThat(admit(intervalMillis * MS)).as("one call finds out").isZero();
  }

  @Test
  void theIntervalOfASpentQuotaWithoutAResetCountsFromItsLatestAnswer() {
    answer(UNCOUNTED, 0, withoutReset(0, 0));
    answer(UNCOUNTED, 30 * MS, withoutReset(30 * MS, 0));
    assertThat(admit(30 * MS)).isEqualTo(50 * MS);
  }

  @Test
  void aSpentQuotaLearnsAResetFromALaterAnswer() {
    answer(UNCOUNTED, 0, withoutReset(0, 0));
    answer(UNCOUNTED, 10 * MS, quota(10 * MS, 0, 5 * S));
    assertThat(admit(10 * MS))
        .as("parked until the reset, not retried per interval")
        .isEqualTo(5 * S);
  }

  @Test
  void aSpentQuotasResetMovesOnToTheLatestItWasToldNeverBackAndKeepsItsOffset() {
    random = new Scripted(0, Long.MAX_VALUE); // first draw 0; any later draw the highest
    answer(UNCOUNTED, 0, tenPerSecond(0, 0, 5 * S));
    answer(UNCOUNTED, 0, tenPerSecond(0, 0, 6 * S));
    assertThat(admit(0)).as("the latest reset, the offset drawn once per window").isEqualTo(6 * S);
    answer(UNCOUNTED, 0, tenPerSecond(0, 0, 2 * S));
    assertThat(admit(0)).as("never back").isEqualTo(6 * S);
  }

  @Test
  void aWindowsFirstResetStandsForACountThatIsNotSpent() {
    answer(UNCOUNTED, 0, quota(0, 5, S));
    answer(UNCOUNTED, 500 * MS, quota(500 * MS, 4, S)); // would push the reset to 1.5 s
    assertThat(admit(S)).isZero();
    assertThat(admit(S)).as("over at 1 s: one call at a time").isEqualTo(POLL);
  }

  @Test
  void retryAfterOnARefusalBecomesTheKeysReset() {
    pacer.answered(UNCOUNTED, PATH, List.of(quota(0, 5, S)), true, 3 * S, t0, random);
    assertThat(admit(0)).as("remaining 0 until the Retry-After").isEqualTo(3 * S);
  }

  // ---- after the reset ---------------------------------------------------------------------

  @Test
  void atTheResetInstantTheFiguresAreStaleAndCallsGoOneAtATime() {
    answer(UNCOUNTED, 0, quota(0, 5, S));
    answer(UNCOUNTED, 0, quota(0, 5, S)); // two answers: slow start alone would let two go
    assertThat(admit(S)).isZero();
    assertThat(admit(S)).isEqualTo(POLL);
  }

  @Test
  void afterTheResetACallWaitsOutTheOffsetThenOneGoesAtATime() {
    random = ExtremeRandom.HIGHEST;
    answer(UNCOUNTED, 0, tenPerSecond(0, 0, S));
    assertThat(admit(S + 10 * MS)).isEqualTo(90 * MS);
    assertThat(admit(S + 100 * MS)).isZero();
    assertThat(admit(S + 100 * MS)).isEqualTo(POLL);
  }

  @Test
  void atTheReleaseInstantACallStillInFlightHoldsTheNext() {
    answer(UNCOUNTED, 0, quota(0, 5, S));
    answer(UNCOUNTED, 0, quota(0, 5, S)); // two answers: slow start alone would let two go
    send(0);
    assertThat(admit(S)).isEqualTo(POLL);
  }

  @Test
  void anAnswerAtTheResetInstantOpensTheNextWindow() {
    answer(UNCOUNTED, 0, quota(0, 0, S));
    answer(UNCOUNTED, S, quota(S, 5, S));
    assertThat(admit(S)).isZero();
    assertThat(admit(S)).as("5 left in the new window").isZero();
  }

  @Test
  void aRiseBelievedWithinAWindowBringsItsOwnReset() {
    long a = send(0);
    long b = send(0);
    answer(a, MS, quota(MS, 0, S - MS));
    answer(b, 2 * MS, quota(2 * MS, 10, 5 * S)); // a refill: 10 > 0 + 1 in flight + 2
    for (int i = 0; i < 3; i++) assertThat(admit(S)).as("the window now ends at 5 s").isZero();
  }

  // ---- slow start and shared ---------------------------------------------------------------

  @Test
  void aSharedKeyIsSpacedNotHeldBySlowStart() {
    answer(UNCOUNTED, 0, quota(0, 19, S));
    long a = send(0);
    refused(a, 10 * MS, quota(10 * MS, 18, S - 10 * MS)); // refused while it said 19 were left
    long t = 10 * MS;
    for (int i = 0; i < 5; i++) {
      long r = admit(t);
      if (r > 0) {
        assertThat(r).as("spaced, call %d", i).isGreaterThan(POLL);
        t += r;
        r = admit(t);
      }
      assertThat(r).as("call %d goes at its spacing with none answered", i).isZero();
    }
  }

  @Test
  void aSharedQuotaWithoutAResetIsSpreadAtTheRateItRefills() {
    // q=10, w=1 s (100 ms a unit), no reset: what is left is spread over its units' intervals.
    Quota q = new Quota(Quota.Form.IETF_LIST, "default", null, 5, true, 10, S, t0, false, 0);
    long a = send(0);
    answer(a, 0, q); // 1 sent, 5 of 10 gone: others draw on it
    send(0);
    assertThat(admit(0)).isEqualTo(5 * 100 * MS / 4); // 5 units' 500 ms over the 4 not in flight
  }

  @Test
  void aFirstCountedAnswerShortByMoreThanEverySendMeansOthersDrawOnIt() {
    Quota q = new Quota(Quota.Form.IETF_LIST, "default", null, 17, true, 20, S, t0 + MS, true, S);
    long a = send(0);
    answer(a, MS, q); // 20 a window, 1 sent, 17 left
    assertThat(admit(MS)).isEqualTo(S / 17 - MS);
  }

  @Test
  void aKeyIsSpreadFor30SecondsAfterTheSignThatOthersDrawOnIt() {
    Quota q =
        new Quota(Quota.Form.IETF_LIST, "default", null, 17, true, 20, S, t0 + MS, true, 100 * S);
    answer(send(0), MS, q); // 20 a window, 1 sent, 17 left: others drew on it
    long end = MS + 30 * S;
    long b = send(end - 1);
    answer(
        b,
        end - 1,
        new Quota(
            Quota.Form.IETF_LIST,
            "default",
            null,
            16,
            true,
            20,
            S,
            t0 + end - 1,
            true,
            100 * S - end + 1 + MS));
    assertThat(admit(end - 1)).as("still spread").isGreaterThan(POLL);
    assertThat(admit(end)).as("30 s on: no longer").isZero();
  }

  @Test
  void aFirstCountedAnswerShortByNoMoreThanEverySendIsOurs() {
    Quota q = new Quota(Quota.Form.IETF_LIST, "default", null, 18, true, 20, S, t0 + MS, true, S);
    long a = send(0);
    send(0);
    answer(a, MS, q); // 2 sent, 18 left
    assertThat(admit(MS)).isZero();
  }

  /**
   * A call sequence and what the next call then meets. Steps, one millisecond apart: {@code sN} N
   * sends that cannot wait; {@code aK=R} the answer to send K saying R left; {@code rK=R} the same
   * as a refusal; {@code u=R} an answer to an uncounted send; {@code @T} the clock set to T ms.
   * Every quota's window ends at the next multiple of 10 s.
   */
  static Stream<Arguments> sequences() {
    Object[][] table = {
      // Shared: a fall beyond every send since the window's first answer, those then in flight, and
      // 2.
      {
        "a fall of the 3 sends since the first answer, and 2: ours",
        "s1 a0=100 s3 a1=95",
        Outcome.GO
      },
      {"one more: others draw on it", "s1 a0=100 s3 a1=94", Outcome.SPREAD},
      {"the sends in flight at the first answer count too", "s3 a1=100 s2 a2=93", Outcome.POLL},
      {"one more than them: others'", "s3 a1=100 s2 a2=92", Outcome.SPREAD},
      {
        "a window first heard uncounted: from its first counted answer",
        "u=100 s3 a0=99 a1=93",
        Outcome.GO
      },
      {"one more: others'", "u=100 s3 a0=99 a1=92", Outcome.SPREAD},
      {
        "measured from the window's first answer, not the latest",
        "s1 a0=100 s3 a1=97 a2=95",
        Outcome.GO
      },
      {"one more since the first: others'", "s1 a0=100 s3 a1=97 a2=94", Outcome.SPREAD},
      {
        "a new window is measured from its own first answer",
        "s1 a0=100 @10001 s1 a1=20 s1 a2=19",
        Outcome.GO
      },
      {"a refusal while some was left: others'", "u=5 s2 r0=0 @10001 s1 a2=19", Outcome.SPREAD},
      {
        "a refusal when none was left (one in flight): expected",
        "u=0 s2 r0=0 @10001 s1 a2=19",
        Outcome.GO
      },
      {"a refusal when none was left: expected", "u=0 s1 r0=0 @10001 s1 a1=19", Outcome.GO},
      // Counts that rise.
      {"a rise within the 2 in flight and 2: not believed", "s3 a0=0 a1=4", Outcome.SPENT},
      {"one more: believed", "s3 a0=0 a1=5", Outcome.GO},
      {"an overtaken answer's rise: not believed", "s3 a1=0 a0=9", Outcome.SPENT},
      {"an uncounted answer's rise: not believed", "s3 a0=0 u=9", Outcome.SPENT},
      {
        "after a believed rise, a fall is measured from it: ours",
        "s3 a0=0 a1=20 s3 a2=13",
        Outcome.GO
      },
      {"one more: others'", "s3 a0=0 a1=20 s3 a2=12", Outcome.SPREAD},
    };
    List<Arguments> out = new ArrayList<>();
    for (long origin : new long[] {0, Long.MAX_VALUE - 5 * S}) {
      for (Object[] row : table) out.add(Arguments.of(row[0], row[1], row[2], origin));
    }
    return out.stream();
  }

  enum Outcome {
    /** The next call goes. */
    GO,
    /** It waits one poll for an answer (slow start, or one at a time). */
    POLL,
    /** It waits longer, but not until the reset: the key is spread. */
    SPREAD,
    /** It waits until the reset: spent. */
    SPENT
  }

  @ParameterizedTest(name = "{0}: {1} (clock from {3})")
  @MethodSource("sequences")
  void aCallSequenceLeavesTheNextCall(String name, String steps, Outcome expected, long origin) {
    start(origin, false);
    // The pacer's numbers for the sends, in order: aK answers the K-th (from 0)
    List<Long> sent = new ArrayList<>();
    long t = 0;
    for (String step : steps.split(" ")) {
      if (step.startsWith("@")) {
        t = Long.parseLong(step.substring(1)) * MS;
        continue;
      }
      t += MS;
      long reset = (t / (10 * S) + 1) * 10 * S;
      switch (step.charAt(0)) {
        case 's' -> {
          for (int i = Integer.parseInt(step.substring(1)); i > 0; i--) sent.add(send(t));
        }
        case 'u' -> answer(UNCOUNTED, t, quota(t, Long.parseLong(step.substring(2)), reset - t));
        case 'a', 'r' -> {
          String[] kv = step.substring(1).split("=");
          Quota q = quota(t, Long.parseLong(kv[1]), reset - t);
          long seq = sent.get(Integer.parseInt(kv[0]));
          if (step.charAt(0) == 'a') answer(seq, t, q);
          else refused(seq, t, q);
        }
        default -> throw new IllegalArgumentException(step);
      }
    }
    t += MS;
    long reset = (t / (10 * S) + 1) * 10 * S;
    long r = admit(t);
    Outcome got =
        r == 0
            ? Outcome.GO
            : r == POLL ? Outcome.POLL : r >= reset - t ? Outcome.SPENT : Outcome.SPREAD;
    assertThat(got).as("admit returned %d", r).isEqualTo(expected);
  }

  // ---- keys --------------------------------------------------------------------------------

  @ParameterizedTest(name = "{0} {1} pk={2}: gates every path {3}")
  @CsvSource(
      nullValues = "-",
      textBlock =
          """
          IETF_LIST,        default, -,    true
          IETF_LIST,        default, cGs=, false
          DRAFT_DICTIONARY, -,       -,    true
          DRAFT_FIELDS,     -,       -,    true
          X_RATELIMIT,      -,       -,    true
          X_RATELIMIT,      abc,     -,    true
          X_RATE_LIMIT,     -,       -,    true
          X_RATE_LIMIT,     abc,     -,    true
          """)
  void aKeyWithAPartitionKeyGatesOnlyThePathThatReportedItAndALoneBucketEveryPath(
      Quota.Form form, String policy, String pk, boolean everyPath) {
    answer(UNCOUNTED, PATH, 0, new Quota(form, policy, pk, 0, false, 0, 0, t0, true, 5 * S));
    assertThat(admit(0, PATH)).isEqualTo(5 * S);
    if (everyPath) assertThat(admit(0, OTHER_PATH)).isEqualTo(5 * S);
    else assertThat(admit(0, OTHER_PATH)).isZero();
  }

  /**
   * GitHub's {@code X-RateLimit-Resource} (a bucket the server names) with a reset {@code
   * resetAfter} from {@code at}.
   */
  Quota bucket(String name, long at, long remaining, long resetAfter) {
    return new Quota(
        Quota.Form.X_RATELIMIT, name, null, remaining, true, 10, 0, t0 + at, true, resetAfter);
  }

  @Test
  void aBucketReportedByOnePathGatesEveryPathWhileItIsTheOnlyOne() {
    answer(UNCOUNTED, "/issues/0", 0, bucket("core", 0, 0, 5 * S));
    for (String path : List.of("/issues/0", "/issues/29", "/repos/o/r/pulls", "/")) {
      assertThat(admit(0, path)).as(path).isEqualTo(5 * S);
    }
  }

  /**
   * GitHub's shape: core answered on three REST paths, search on one; then one of them is spent.
   */
  @ParameterizedTest(name = "{0} spent: {1} held {2}")
  @CsvSource(
      textBlock =
          """
          search, /search/issues,        true
          search, /search/repositories,  true
          search, /issues/7,             false
          search, /user,                 false
          search, /repos/o/r/pulls,      false
          core,   /issues/0,             true
          core,   /issues/7,             true
          core,   /repos/o/r/pulls/3,    true
          core,   /user,                 true
          core,   /search/issues,        false
          core,   /search/code,          false
          """)
  void withTwoBucketsAPathGoesByItsOwnElseByItsNearestKnownPath(
      String spent, String path, boolean held) {
    answer(UNCOUNTED, "/issues/0", 0, bucket("core", 0, spent.equals("core") ? 0 : 5, 5 * S));
    answer(UNCOUNTED, "/issues/1", 0, bucket("core", 0, spent.equals("core") ? 0 : 5, 5 * S));
    answer(
        UNCOUNTED, "/repos/o/r/pulls/1", 0, bucket("core", 0, spent.equals("core") ? 0 : 5, 5 * S));
    answer(
        UNCOUNTED, "/search/issues", 0, bucket("search", 0, spent.equals("search") ? 0 : 5, 9 * S));
    long r = admit(0, path);
    if (held) assertThat(r).isEqualTo(spent.equals("core") ? 5 * S : 9 * S);
    else assertThat(r).isZero();
  }

  @Test
  void aPathThatReportsAnotherBucketMovesToIt() {
    answer(UNCOUNTED, "/a/1", 0, bucket("one", 0, 0, 5 * S));
    answer(UNCOUNTED, "/b/1", 0, bucket("two", 0, 5, 5 * S));
    assertThat(admit(0, "/a/1")).isEqualTo(5 * S);
    answer(UNCOUNTED, "/a/1", 0, bucket("two", 0, 5, 5 * S));
    assertThat(admit(0, "/a/1")).as("now under two").isZero();
    assertThat(admit(0, "/a/2"))
        .as("one has no path left: the nearest is /a/1, under two")
        .isZero();
  }

  @Test
  void aBucketRemembersItsLastFourPathsAndAPathTooLongToKeepStillGoesByItsNearest() {
    for (int i = 0; i < 6; i++) answer(UNCOUNTED, "/core/" + i, 0, bucket("core", 0, 5, 5 * S));
    answer(UNCOUNTED, "/search/x", 0, bucket("search", 0, 0, 9 * S));
    answer(
        UNCOUNTED,
        "/search/" + "y".repeat(QuotaPacer.MAX_PATH_CHARS),
        0,
        bucket("search", 0, 0, 9 * S));
    assertThat(admit(0, "/core/0")).as("forgotten, but nearest to core's").isZero();
    assertThat(admit(0, "/search/" + "y".repeat(QuotaPacer.MAX_PATH_CHARS))).isEqualTo(9 * S);
  }

  @ParameterizedTest(name = "{0} ~ {1}: {2}")
  @CsvSource(
      textBlock =
          """
          /issues/3,      /issues/7,        1
          /issues/3,      /search/issues,   0
          /a/b/c,         /a/b/d,           2
          /a/b,           /a/b/c,           2
          /a/bc,          /a/b,             1
          /a/,            /a/b,             1
          /,              /a,               0
          /a,             /a,               1
          """)
  void commonSegmentsCountsWholeLeadingSegments(String a, String b, int segments) {
    assertThat(QuotaPacer.commonSegments(a, b)).isEqualTo(segments);
    assertThat(QuotaPacer.commonSegments(b, a)).isEqualTo(segments);
  }

  @Test
  void twoPartitionKeysOnTwoPathsAreTwoKeysEachGatingItsOwnPath() {
    answer(
        UNCOUNTED,
        "/a",
        0,
        new Quota(Quota.Form.IETF_LIST, "default", "YQ==", 0, false, 0, 0, t0, true, 5 * S));
    answer(
        UNCOUNTED,
        "/b",
        0,
        new Quota(Quota.Form.IETF_LIST, "default", "Yg==", 9, false, 0, 0, t0, true, 5 * S));
    assertThat(pacer.keys()).isEqualTo(2);
    assertThat(admit(0, "/a")).isEqualTo(5 * S);
    assertThat(admit(0, "/b")).isZero();
  }

  @ParameterizedTest(name = "spent one first: {0}")
  @ValueSource(booleans = {true, false})
  void everyKeyThatAppliesMustAdmitTheCallInWhateverOrderTheyWereHeard(boolean spentFirst) {
    start(-3600 * S, false);
    Quota day = quota("day", 0, 0, 300 * S);
    Quota hour = quota("hour", 0, 5, 60 * S);
    if (spentFirst) answer(UNCOUNTED, 0, day, hour);
    else answer(UNCOUNTED, 0, hour, day);
    assertThat(admit(0)).isEqualTo(300 * S);
  }

  @Test
  void theSeventeenthKeyForgetsTheOneHeardFromLongestAgo() {
    start(-100 * S, false);
    for (int i = 0; i < QuotaHeaders.MAX_QUOTAS; i++) {
      answer(UNCOUNTED, i * MS, quota("p" + i, i * MS, i == 1 ? 0 : 50, 100 * S)); // p1 spent
    }
    // Heard again: p1 is now the oldest
    answer(UNCOUNTED, 20 * MS, quota("p0", 20 * MS, 50, 100 * S));
    assertThat(admit(20 * MS)).as("p1 gates").isGreaterThan(90 * S);
    answer(UNCOUNTED, 30 * MS, quota("p16", 30 * MS, 50, 100 * S));
    assertThat(pacer.keys()).isEqualTo(QuotaHeaders.MAX_QUOTAS);
    assertThat(admit(30 * MS)).as("p1 forgotten").isZero();
  }

  // ---- forgetting --------------------------------------------------------------------------

  @Test
  void aWindowThatIsOverIsDroppedWhenAnAnswerNoLongerCarriesTheQuota() {
    answer(UNCOUNTED, 0, quota("over", 0, 0, S), quota("current", 0, 9, 5 * S), withoutReset(0, 9));
    long a = send(S);
    answerWithoutQuota(a, S);
    assertThat(pacer.keys()).as("the one whose window is over").isEqualTo(2);
  }

  @Test
  void aWindowThatIsNotOverIsKeptByAnAnswerWithoutTheQuota() {
    answer(UNCOUNTED, 0, quota(0, 0, S));
    long a = send(S - MS);
    answerWithoutQuota(a, S - MS);
    assertThat(pacer.keys()).isEqualTo(1);
    assertThat(admit(S - MS)).isEqualTo(MS);
  }

  @Test
  void oneCallAtATimeAfterTheResetEndsWhenTheAnswerCarriesNoQuota() {
    answer(UNCOUNTED, 0, quota(0, 0, S));
    long a = send(2 * S);
    assertThat(admit(2 * S)).isEqualTo(POLL);
    answerWithoutQuota(a, 2 * S);
    assertThat(pacer.keys()).isZero();
    for (int i = 0; i < 3; i++) assertThat(admit(2 * S)).isZero();
  }

  @Test
  void aBucketIsKeptByAnotherAnswerWithoutAQuota() {
    answer(
        UNCOUNTED,
        PATH,
        0,
        new Quota(Quota.Form.X_RATELIMIT, "abc", null, 0, false, 0, 0, t0, true, S));
    long a = send(2 * S);
    answerWithoutQuota(a, 2 * S);
    assertThat(pacer.keys()).as("another route's answer says nothing of this bucket").isEqualTo(1);
  }

  @Test
  void anAnswerOrFailureForASendNotInFlightFreesNoRoom() {
    answer(UNCOUNTED, 0, quota(0, 1, S));
    answerWithoutQuota(7, 0); // a send this pacer did not count
    pacer.failed(8, 0);
    assertThat(pacer.inFlight()).isZero();
    assertThat(admit(0)).isZero();
    assertThat(pacer.inFlight()).isEqualTo(1);
    assertThat(admit(0)).as("1 left, 1 in flight").isEqualTo(S);
  }

  @Test
  void aKeyWithAResetLapses30SecondsAfterIt() {
    start(100 * S, false);
    answer(UNCOUNTED, 0, quota(0, 5, 10 * S));
    assertThat(pacer.isIdle(t0 + 35 * S))
        .as("30 s after it was heard, but not after its reset")
        .isFalse();
    assertThat(pacer.isIdle(t0 + 40 * S - 1)).isFalse();
    assertThat(pacer.isIdle(t0 + 40 * S)).isTrue();
    assertThat(pacer.keys()).isZero();
  }

  @Test
  void aKeyWithoutAResetLapses30SecondsAfterItWasHeard() {
    start(100 * S, false);
    answer(UNCOUNTED, 0, withoutReset(0, 5));
    assertThat(pacer.isIdle(t0 + 30 * S - 1)).isFalse();
    assertThat(pacer.isIdle(t0 + 30 * S)).isTrue();
  }

  @Test
  void aPacerWithNothingInFlightNoKeyAndNoProbeIsIdleAtOnce() {
    start(100 * S, false);
    assertThat(pacer.isIdle(t0)).isTrue();
    long a = send(0);
    assertThat(pacer.isIdle(t0 + S)).as("a send in flight").isFalse();
    answerWithoutQuota(a, S);
    assertThat(pacer.isIdle(t0 + S)).isTrue();
  }

  @Test
  void aProbedOriginThatAnsweredWithoutAQuotaIsKeptFree30Seconds() {
    start(100 * S, true);
    assertThat(pacer.isIdle(t0)).as("a probe pending").isFalse();
    long a = send(0);
    answerWithoutQuota(a, S);
    assertThat(pacer.isIdle(t0 + 31 * S - 1)).isFalse();
    assertThat(pacer.isIdle(t0 + 31 * S)).isTrue();
  }

  /** A random source that draws the given values in turn, the last one for ever. */
  static final class Scripted implements RandomSource {
    private final long[] draws;
    private int next;

    Scripted(long... draws) {
      this.draws = draws;
    }

    @Override
    public long nextLong() {
      return draws[Math.min(next++, draws.length - 1)];
    }

    @Override
    public long nextLong(long bound) {
      return Math.min(nextLong(), bound - 1);
    }
  }
}
