package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.OriginGate;
import io.github.okretry.internal.RetryAfter;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How one logical call meets its origin's pacer, on fake time: after a 429/503 {@code Retry-After}
 * it waits the server's time, then takes its turn from the pacer of the origin that answered, never
 * past {@code maxRetryAfter} or half the time left; its answer teaches the pacer; and such a retry
 * costs the budget half a token.
 */
@Tag("unit")
class PacingHooksTest {

  static final long MS = 1_000_000L;

  final FakeTime time = new FakeTime();
  final RetryBudget budget = RetryBudget.builder().build();

  RetryInterceptor retry(Duration deadline) {
    return RetryInterceptor.create(
        RetryPolicy.builder()
            .timeSource(time)
            .retryAfterSpread(0)
            .maxRetries(5)
            .maxRetryAfter(Duration.ofSeconds(5))
            .deadline(deadline)
            .retryBudget(budget)
            .build());
  }

  static Request get(String url) {
    return new Request.Builder().url(url).build();
  }

  static Response response(Request answered, int code, String retryAfter) {
    Response.Builder b =
        new Response.Builder()
            .request(answered)
            .protocol(Protocol.HTTP_1_1)
            .code(code)
            .message("x")
            .body(ResponseBody.create("", (MediaType) null));
    if (retryAfter != null) b.header("Retry-After", retryAfter);
    return b.build();
  }

  static final long FAR = Long.MAX_VALUE / 4;

  /**
   * Makes {@code origin}'s pacer space its turns, as a crowd's refusals do: it admitted a turn,
   * refused the next {@code refusedAfterMs} later, and admitted the last one now. How far apart
   * that spaces turns is {@code OriginPacerTest}'s subject; this returns the interval as the pacer
   * hands it out. With {@code crowd}, another call then holds the next turn, one interval from now,
   * so a retry asking now waits behind it; alone, a retry goes within its own spread.
   */
  static long paceOrigin(
      OriginGate gate, String origin, long now, long refusedAfterMs, boolean crowd) {
    long base = now - 2 * refusedAfterMs * MS;
    gate.used(origin, gate.reserve(origin, base, FAR, FAR), base);
    gate.released(origin, base, true, RetryAfter.ABSENT, LONG_RETRY_AFTER, base + MS);
    gate.released(
        origin,
        base + refusedAfterMs * MS,
        false,
        LONG_RETRY_AFTER,
        LONG_RETRY_AFTER,
        base + 2 * MS);
    gate.used(origin, gate.reserve(origin, now, FAR, FAR), now);
    gate.released(origin, now, true, RetryAfter.ABSENT, LONG_RETRY_AFTER, now);
    long next = gate.reserve(origin, now, FAR, FAR); // the next turn, taken by another call
    if (!crowd) gate.givenBack(origin, next, now);
    assertThat(next - now).as("the origin's turns are spaced").isPositive();
    return next - now;
  }

  long paceOrigin(RetryInterceptor retry, String origin, long refusedAfterMs, boolean crowd) {
    return paceOrigin(retry.policy().originGate, origin, time.nanoTime(), refusedAfterMs, crowd);
  }

  /** Turns a few hundred ms apart, another call holding the next. */
  long paceACrowd(RetryInterceptor retry, String origin) {
    return paceOrigin(retry, origin, 320, true);
  }

  @Test
  void afterItsRetryAfterARetryWaitsForItsTurnFromTheOriginThatAnswered() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    Request toA = get("https://a.test/start");
    Request toB = get("https://b.test/moved"); // A redirected to B, and B refused
    LogicalCall call = LogicalCall.start(retry.policy(), toA, 0);
    Attempt attempt = send(call);
    Step decision = call.ended(attempt, response(toB, 429, "1"), null, 0);
    assertThat(decision.waitNanos())
        .as("the server's second, exactly (spread 0)")
        .isEqualTo(1_000 * MS);
    assertThat(budget.availableTokens()).as("paid when it leaves, not before").isEqualTo(100.0);

    time.advance(Duration.ofSeconds(1));
    long interval = paceACrowd(retry, "https://b.test:443"); // another call holds B's next turn
    Step turn = call.next(null);
    assertThat(turn.waitNanos()).as("the turn after the other call's at B").isEqualTo(2 * interval);
    time.advance(Duration.ofNanos(turn.waitNanos()));
    attempt = send(call);
    assertThat(budget.availableTokens())
        .as("a retry that honours Retry-After costs half")
        .isEqualTo(99.5);
    assertThat(call.ended(attempt, response(toB, 200, null), null, 0)).isSameAs(Step.RETURN);
    long now = time.nanoTime();
    assertThat(retry.policy().originGate.reserve("https://a.test:443", now, FAR, FAR))
        .as("A was never paced")
        .isEqualTo(now);
  }

  @Test
  void aRetryBehindOthersWhoseTurnWouldComePastItsLatestTimeGivesUpWithTheOriginsStatus()
      throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(4));
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    Step decision = call.ended(attempt, response(request, 503, "1"), null, 0);
    assertThat(decision.waitNanos()).isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    long interval = paceOrigin(retry, ORIGIN, 8_000, true); // turns far apart, another call's next
    // 4 s deadline: 1 s Retry-After leaves 3 s, of which the wait may take half: at most 2.5 s.
    // Its turn, after the other call's, is later: held to 2.5 s it would bunch with every other
    // such call, sent now it would only add to the crowd the origin turns away.
    assertThat(2 * interval)
        .as("its turn would come past its latest time")
        .isGreaterThan(2_500 * MS);
    Step step = call.next(null);
    assertThat(step.kind()).isEqualTo(Step.Kind.RETURN);
    Response local = step.responseOr(null);
    assertThat(local.code()).isEqualTo(503);
    assertThat(local.header("Retry-After"))
        .as("the wait its turn needed, in whole seconds rounded up")
        .isEqualTo(Long.toString((2 * interval + 999_999_999L) / 1_000_000_000L));
    long now = time.nanoTime();
    assertThat(nextTurn(retry, now))
        .as("it took no turn: the next follows the other call's")
        .isEqualTo(now + 2 * interval);
  }

  @Test
  void aRetryAloneOnItsOriginIsNeverHeldPastItsOwnSpread() throws IOException {
    // retryAfterSpread 0: its spread adds nothing
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    assertThat(call.ended(attempt, response(request, 429, "1"), null, 0).waitNanos())
        .isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    paceOrigin(retry, ORIGIN, 8_000, false); // turns far apart, the last one now, nobody waiting
    send(call);
  }

  @Test
  void aRetryAfterAnErrorIsNotPacedAndCostsAWholeToken() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    Step decision = call.ended(attempt, response(request, 503, null), null, 0);
    assertThat(decision.kind()).isEqualTo(Step.Kind.WAIT);
    assertThat(budget.availableTokens()).as("paid when it leaves, not before").isEqualTo(100.0);
    time.advance(Duration.ofNanos(decision.waitNanos()));
    paceOrigin(retry, ORIGIN, 8_000, true);
    send(call);
    assertThat(budget.availableTokens()).isEqualTo(99.0);
  }

  @Test
  void theOriginTableEmptiesItselfOnceThrottlingIsOverWhicheverOriginIsCalledNext()
      throws IOException {
    RetryInterceptor retry =
        RetryInterceptor.create(RetryPolicy.builder().timeSource(time).build());
    Script script = new Script().status(429, "Retry-After", "1").status(200).thenAlways(200);
    okhttp3.OkHttpClient client = script.client(retry);
    client.newCall(get("https://a.test/")).execute().close();
    assertThat(retry.policy().originGate.size()).as("a.test was paced").isEqualTo(1);
    time.advance(Duration.ofMinutes(10)); // far past Tuning.PACING_MEMORY_NANOS
    Request toB = get("https://b.test/");
    client.newCall(toB).execute().close();
    assertThat(retry.policy().originGate.size()).isZero();
    assertThat(LogicalCall.open(retry.policy(), toB, 0))
        .as("calls make their first attempt without state again")
        .isNull();
  }

  /** Asks {@code call} for its next step, which must be SEND, and returns the attempt to send. */
  static Attempt send(LogicalCall call) {
    Step step = call.next(null);
    assertThat(step.kind()).as("SEND").isEqualTo(Step.Kind.SEND);
    return Attempt.of(step);
  }

  static final String ORIGIN = "https://a.test:443";
  static final String OTHER_ORIGIN = "https://b.test:443";
  static final long LONG_RETRY_AFTER = 60_000 * MS;

  /**
   * What the origin's pacer hands out next at {@code nowNanos}: the turn of a retry asking then.
   */
  long nextTurn(RetryInterceptor retry, long nowNanos) {
    return nextTurn(retry, ORIGIN, nowNanos);
  }

  long nextTurn(RetryInterceptor retry, String origin, long nowNanos) {
    return retry.policy().originGate.reserve(origin, nowNanos, FAR, FAR);
  }

  /** The origin refused a paced turn at {@code atNanos}. */
  void refused(RetryInterceptor retry, String origin, long atNanos) {
    retry
        .policy()
        .originGate
        .released(origin, atNanos, false, LONG_RETRY_AFTER, LONG_RETRY_AFTER, atNanos + MS);
  }

  /**
   * A call that is not paced reports its send to the pacers of a paced origin and, once admitted,
   * its admission: a crowd's refused turn then counts its gap from that admission, not from the
   * crowd's own last one. The same refusal on another origin, with no such call, counts the longer
   * gap and so spaces turns wider.
   */
  @Test
  void aCallThatIsNotPacedReportsWhenItWasSentAndAdmitted() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    long interval = paceOrigin(retry, ORIGIN, 320, false); // the last turn, admitted, now
    paceOrigin(retry, OTHER_ORIGIN, 320, false);
    long taught = time.nanoTime();
    time.advance(Duration.ofMillis(100));
    long sent = time.nanoTime();
    LogicalCall other = LogicalCall.start(retry.policy(), get("https://a.test/other"), 0);
    Attempt attempt = send(other);
    assertThat(other.ended(attempt, response(attempt.request(), 200, null), null, 0))
        .isSameAs(Step.RETURN);
    refused(
        retry,
        ORIGIN,
        sent + 360 * MS); // 360 ms after the other call's admission, 460 after the crowd's
    refused(
        retry, OTHER_ORIGIN, sent + 360 * MS); // 460 ms after the crowd's, the only admission there
    long afterReport = nextTurn(retry, ORIGIN, sent + 1) - taught;
    long withoutReport = nextTurn(retry, OTHER_ORIGIN, sent + 1) - taught;
    assertThat(afterReport)
        .as("the refusal taught the pacer")
        .isGreaterThan(interval)
        .as("from the shorter gap, after the other call's admission")
        .isLessThan(withoutReport);
  }

  @Test
  void aTurnRefusedWhileACallThatIsNotPacedIsInFlightTeachesNothing() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    long interval = paceOrigin(retry, ORIGIN, 320, false);
    long taught = time.nanoTime();
    time.advance(Duration.ofMillis(100));
    long sent = time.nanoTime();
    LogicalCall other = LogicalCall.start(retry.policy(), get("https://a.test/other"), 0);
    send(other); // sent, not answered yet
    refused(retry, ORIGIN, sent + 360 * MS);
    assertThat(nextTurn(retry, sent + 1))
        .as("as far apart as before: the refusal may be the other call's doing")
        .isEqualTo(taught + interval);
  }

  @Test
  void aRefusedTurnTeachesThePacerOfTheOriginThatRefusedIt() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    assertThat(call.ended(attempt, response(request, 429, "1"), null, 0).waitNanos())
        .isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    long interval = paceACrowd(retry, ORIGIN); // the last turn, admitted, now; another call's next
    Step turn = call.next(null);
    assertThat(turn.waitNanos()).isEqualTo(2 * interval);
    time.advance(Duration.ofNanos(turn.waitNanos()));
    attempt = send(call);
    assertThat(call.ended(attempt, response(request, 429, "1"), null, 0).kind())
        .isEqualTo(Step.Kind.WAIT);
    // Refused two intervals after the last admission: turns now go further apart, but never
    // further than the Retry-After (1 s) of the refusal that taught it.
    long now = time.nanoTime();
    assertThat(nextTurn(retry, now) - now).isGreaterThan(interval).isLessThanOrEqualTo(1_000 * MS);
  }

  @Test
  void aTurnThatEndsInAnExceptionEndsThePacingAndTheNextAttemptIsAnotherCall() throws IOException {
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .timeSource(time)
                .retryAfterSpread(0)
                .jitter(Jitter.NONE)
                .maxRetries(5)
                .maxRetryAfter(Duration.ofSeconds(5))
                .deadline(Duration.ofSeconds(20))
                .retryBudget(budget)
                .build());
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    call.ended(attempt, response(request, 429, "1"), null, 0);
    time.advance(Duration.ofSeconds(1));
    long interval = paceOrigin(retry, ORIGIN, 640, true); // turns further apart than its backoff
    Step turn = call.next(null);
    assertThat(turn.waitNanos()).isEqualTo(2 * interval);
    time.advance(Duration.ofNanos(turn.waitNanos()));
    long lastTurn = time.nanoTime();
    attempt = send(call);
    Step backoff = call.ended(attempt, null, new SocketTimeoutException("timeout"), 0);
    assertThat(backoff.waitNanos())
        .as("an exception: backoff (200 ms × 2 for retry 2), not pacing")
        .isEqualTo(400 * MS);
    time.advance(Duration.ofNanos(backoff.waitNanos()));
    long sent = time.nanoTime();
    attempt = send(call); // at once, though another call still holds a turn ahead
    // In flight, it counts as a call that is not paced: a refusal now teaches nothing.
    refused(retry, ORIGIN, sent + 360 * MS);
    assertThat(interval).isGreaterThan(backoff.waitNanos());
    assertThat(nextTurn(retry, sent + 1))
        .as("the next turn, one interval after its own")
        .isEqualTo(lastTurn + interval);
  }

  /** A call the origin-wide gate held joins the crowd: once the gate opens it takes a turn. */
  @Test
  void aCallHeldAtTheOriginGateTakesItsTurnWhenTheGateOpens() throws IOException {
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .timeSource(time)
                .retryAfterSpread(0)
                .maxRetries(5)
                .maxRetryAfter(Duration.ofSeconds(5))
                .deadline(Duration.ofSeconds(20))
                .retryBudget(budget)
                .originWideRetryAfter(true)
                .build());
    Request request = get("https://a.test/");
    long start = time.nanoTime();
    retry.policy().originGate.close(request.url(), start, start + 1_000 * MS, 503);
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    assertThat(call.next(null).waitNanos()).isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    long interval = paceACrowd(retry, ORIGIN);
    Step turn = call.next(null);
    assertThat(turn.waitNanos())
        .as("the gate is open: the turn after the other call's")
        .isEqualTo(2 * interval);
    time.advance(Duration.ofNanos(turn.waitNanos()));
    send(call);
  }
}
