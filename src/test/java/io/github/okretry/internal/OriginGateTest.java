package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import okhttp3.HttpUrl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The per-origin table: gate semantics, its bound, LRU eviction and amortised expiry. */
@Tag("unit")
class OriginGateTest {

  static final long S = 1_000_000_000L;
  static final long FAR = Long.MAX_VALUE / 4;

  /**
   * A gate remembering at most {@code maxOrigins} origins, pacing by published quotas, on the
   * system clock.
   */
  static OriginGate gate(int maxOrigins) {
    return new OriginGate(maxOrigins, true, false, WallClock.SYSTEM, RandomSource.THREAD_LOCAL);
  }

  static HttpUrl url(String host) {
    return HttpUrl.get("https://" + host + "/any/path?q=1");
  }

  @Test
  void aLaterTimeWinsAnEarlierOneNeverShortensAndThePastReopens() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    gate.close(url("a.test"), 0, 10 * S, 503);
    gate.close(url("a.test"), 1 * S, 5 * S, 429);
    assertThat(gate.check(url("a.test"), 2 * S).notBeforeNanos).isEqualTo(10 * S);
    assertThat(gate.check(url("a.test"), 2 * S).code).isEqualTo(503);
    gate.close(url("a.test"), 3 * S, 20 * S, 429);
    assertThat(gate.check(url("a.test"), 3 * S).code).isEqualTo(429);
    assertThat(gate.check(url("a.test"), 20 * S)).as("reopened at its time").isNull();
    assertThat(gate.size()).as("an open gate with no pacing is not kept").isZero();
  }

  @Test
  void theOriginIsSchemeHostAndPort() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    gate.close(url("a.test"), 0, 10 * S, 503);
    assertThat(gate.check(HttpUrl.get("https://a.test:443/other"), 1)).isNotNull();
    assertThat(gate.check(HttpUrl.get("http://a.test/"), 1)).isNull();
    assertThat(gate.check(HttpUrl.get("https://a.test:8443/"), 1)).isNull();
    assertThat(gate.check(url("b.test"), 1)).isNull();
    assertThat(OriginGate.origin(url("a.test"))).isEqualTo("https://a.test:443");
  }

  @Test
  void lookingUpAnOriginNeverAddsIt() {
    OriginGate gate = gate(4);
    for (int i = 0; i < 100; i++) assertThat(gate.check(url("h" + i + ".test"), 0)).isNull();
    assertThat(gate.size()).isZero();
  }

  @Test
  void atMostTheBoundIsRememberedAndTheLeastRecentlyUsedGoesFirst() {
    OriginGate gate = gate(3);
    gate.close(url("a.test"), 0, 100 * S, 503);
    gate.close(url("b.test"), 0, 100 * S, 503);
    gate.close(url("c.test"), 0, 100 * S, 503);
    assertThat(gate.check(url("a.test"), 1)).isNotNull(); // a is now the most recently used
    gate.close(url("d.test"), 1, 100 * S, 503);
    assertThat(gate.size()).isEqualTo(3);
    assertThat(gate.check(url("b.test"), 2)).as("least recently used: forgotten").isNull();
    assertThat(gate.check(url("a.test"), 2)).isNotNull();
    assertThat(gate.check(url("c.test"), 2)).isNotNull();
    assertThat(gate.check(url("d.test"), 2)).isNotNull();
    for (int i = 0; i < 10_000; i++) gate.close(url("h" + i + ".test"), 3, 100 * S, 503);
    assertThat(gate.size()).isEqualTo(3);
    assertThat(gate.check(url("h9999.test"), 4)).isNotNull();
  }

  @Test
  void expiredOriginsAreRemovedTwoAtATimeAsOthersAreAdded() {
    OriginGate gate = gate(1_000);
    for (int i = 0; i < 10; i++) gate.close(url("old" + i + ".test"), 0, 1 * S, 503);
    assertThat(gate.size()).isEqualTo(10);
    // Past their time, each new origin removes up to two expired ones from the old end.
    gate.close(url("new0.test"), 2 * S, 100 * S, 503);
    assertThat(gate.size()).as("two removed, one added").isEqualTo(9);
    for (int i = 1; i < 5; i++) gate.close(url("new" + i + ".test"), 2 * S, 100 * S, 503);
    assertThat(gate.size()).isEqualTo(5);
    // A live entry at the old end stops the sweep: expiry never costs more than two looks.
    gate.close(url("new5.test"), 2 * S, 100 * S, 503);
    assertThat(gate.size()).isEqualTo(6);
  }

  @Test
  void anOriginWithARecentPacerIsKeptUntilItsMemoryPasses() {
    OriginGate gate = gate(1_000);
    String origin = OriginGate.origin(url("a.test"));
    assertThat(gate.reserve(origin, 0, FAR, FAR)).isZero();
    assertThat(gate.size()).isEqualTo(1);
    gate.close(url("b.test"), 1, 2, 503);
    long later = Tuning.PACING_MEMORY_NANOS - 1;
    gate.close(url("c.test"), later, later + S, 503); // a, the oldest, is still recent: kept
    assertThat(gate.size()).isEqualTo(3);
    long afterMemory = Tuning.PACING_MEMORY_NANOS + 10;
    gate.close(url("d.test"), afterMemory, afterMemory + S, 503); // now a and the expired b go
    assertThat(gate.size()).isEqualTo(2);
    assertThat(gate.check(url("c.test"), afterMemory)).isNotNull();
  }

  @Test
  void reportsAboutAnOriginWithNothingLeftToRememberRemoveIt() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    String a = OriginGate.origin(url("a.test"));
    gate.reserve(a, 0, FAR, FAR);
    gate.sent(url("a.test"), 1); // recent: kept, and no entry is made for another origin
    gate.admitted(url("b.test"), 1);
    assertThat(gate.size()).isEqualTo(1);
    gate.sent(url("a.test"), Tuning.PACING_MEMORY_NANOS + 1);
    assertThat(gate.size()).as("the table empties itself: calls stop paying for reports").isZero();
  }

  @Test
  void pacingIsPerOrigin() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    String a = OriginGate.origin(url("a.test"));
    String b = OriginGate.origin(url("b.test"));
    gate.reserve(a, 0, FAR, FAR);
    gate.released(a, 0, true, RetryAfter.ABSENT, S, 1);
    gate.released(a, 40_000_000L, false, S, S, 41_000_000L); // a learns a 50 ms gap
    assertThat(gate.reserve(a, 42_000_000L, FAR, FAR)).isEqualTo(50_000_000L);
    assertThat(gate.reserve(b, 42_000_000L, FAR, FAR)).as("b knows nothing").isEqualTo(42_000_000L);
  }

  @Test
  void aGateThatEndsExactlyNowIsExpired() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    gate.close(url("a.test"), 0, 1 * S, 503);
    gate.close(url("b.test"), 1 * S, 2 * S, 503); // a's time is up as b is added: a goes
    assertThat(gate.size()).isEqualTo(1);
  }

  @Test
  void aTableOfOneOriginIsAllowed() {
    OriginGate gate = gate(1);
    gate.close(url("a.test"), 0, 10 * S, 503);
    gate.close(url("b.test"), 0, 10 * S, 429);
    assertThat(gate.size()).isEqualTo(1);
    assertThat(gate.check(url("a.test"), 1)).isNull();
    assertThat(gate.check(url("b.test"), 1).code).isEqualTo(429);
    assertThatThrownBy(() -> gate(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxOrigins < 1: 0");
  }

  @ParameterizedTest(name = "origin {0}")
  @ValueSource(longs = {0, -FAR, FAR})
  void anEarlierTimeNeverShortensTheGateAtAnyClockOrigin(long o) {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    gate.close(url("a.test"), o, o + 10 * S, 503);
    gate.close(url("a.test"), o + 1 * S, o + 5 * S, 429);
    assertThat(gate.check(url("a.test"), o + 6 * S).notBeforeNanos).isEqualTo(o + 10 * S);
    assertThat(gate.check(url("a.test"), o + 6 * S).code).isEqualTo(503);
  }

  /** Turns of {@code origin} at {@code now}: the gap between two retries asking at once. */
  static long gapBetweenTurns(OriginGate gate, String origin, long now) {
    long first = gate.reserve(origin, now, FAR, FAR);
    return gate.reserve(origin, now, FAR, FAR) - first;
  }

  @Test
  void reportsOfCallsThatAreNotPacedReachTheOriginsPacer() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    String a = OriginGate.origin(url("a.test"));
    gate.reserve(a, 0, FAR, FAR);
    gate.released(a, 0, true, RetryAfter.ABSENT, S, 1);
    gate.sent(url("a.test"), 20_000_000L);
    gate.admitted(url("a.test"), 20_000_000L);
    // 20 ms after the other call's admission
    gate.released(a, 40_000_000L, false, S, S, 41_000_000L);
    assertThat(gapBetweenTurns(gate, a, 42_000_000L)).isEqualTo(25_000_000L);

    OriginGate inFlight = gate(Tuning.MAX_ORIGINS);
    inFlight.reserve(a, 0, FAR, FAR);
    inFlight.released(a, 0, true, RetryAfter.ABSENT, S, 1);
    inFlight.sent(url("a.test"), 20_000_000L); // not answered yet
    inFlight.released(a, 40_000_000L, false, S, S, 41_000_000L);
    assertThat(gapBetweenTurns(inFlight, a, 42_000_000L))
        .as("the refusal may be the other call's doing")
        .isZero();
  }

  @Test
  void reportsAboutAnOriginWithAGateButNoPacerChangeNothing() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    gate.close(url("a.test"), 0, 10 * S, 503);
    gate.sent(url("a.test"), 1);
    gate.admitted(url("a.test"), 1);
    assertThat(gate.size()).isEqualTo(1);
    assertThat(gate.check(url("a.test"), 2).code).isEqualTo(503);
  }

  @Test
  void anAdmissionReportAboutAnOriginWithNothingLeftToRememberRemovesIt() {
    OriginGate gate = gate(Tuning.MAX_ORIGINS);
    gate.reserve(OriginGate.origin(url("a.test")), 0, FAR, FAR);
    gate.admitted(url("a.test"), Tuning.PACING_MEMORY_NANOS);
    assertThat(gate.size()).isZero();
  }
}
