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
 * How one logical call meets its origin's pacer, on fake time: after a 429/503 {@code
 * Retry-After} it waits the server's time, then takes its turn from the pacer of the origin that
 * answered, never past {@code maxRetryAfter} or half the time left; its answer teaches the pacer;
 * and such a retry costs the budget half a token.
 */
@Tag("unit")
class PacingHooksTest {

  static final long MS = 1_000_000L;

  final FakeTime time = new FakeTime();
  final RetryBudget budget = RetryBudget.builder().build();

  RetryInterceptor retry(Duration deadline) {
    return RetryInterceptor.create(RetryPolicy.builder()
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
    Response.Builder b = new Response.Builder()
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
   * The pacer of {@code origin} learns a {@code gapMs} gap, someone takes the turn at now and is
   * admitted, and, if {@code crowd}, another call holds the next turn, {@code gapMs} from now: a
   * retry asking now waits behind it. Alone, a retry would go within its own spread.
   */
  void teach(RetryInterceptor retry, String origin, long gapMs, boolean crowd) {
    long now = time.nanoTime();
    long base = now - 2 * gapMs * MS;
    OriginGate gate = retry.policy().originGate;
    gate.used(origin, gate.reserve(origin, base, FAR, FAR), base);
    gate.released(origin, base, true, RetryAfter.ABSENT, LONG_RETRY_AFTER, base + MS);
    // Refused 0.8 × gapMs after an admitted one: turns go 0.8 × 1.25 = gapMs apart.
    gate.released(origin, base + gapMs * 4 / 5 * MS, false, LONG_RETRY_AFTER, LONG_RETRY_AFTER, base + 2 * MS);
    gate.used(origin, gate.reserve(origin, now, FAR, FAR), now);
    gate.released(origin, now, true, RetryAfter.ABSENT, LONG_RETRY_AFTER, now);
    if (crowd) gate.reserve(origin, now, FAR, FAR);
  }

  void teach(RetryInterceptor retry, String origin, long gapMs) {
    teach(retry, origin, gapMs, true);
  }

  @Test
  void afterItsRetryAfterARetryWaitsForItsTurnFromTheOriginThatAnswered() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    Request toA = get("https://a.test/start");
    Request toB = get("https://b.test/moved"); // A redirected to B, and B refused
    LogicalCall call = LogicalCall.start(retry.policy(), toA, 0);
    Attempt attempt = send(call);
    Step decision = call.ended(attempt, response(toB, 429, "1"), null, 0);
    assertThat(decision.waitNanos()).as("the server's second, exactly (spread 0)").isEqualTo(1_000 * MS);
    assertThat(budget.availableTokens()).as("a retry that honours Retry-After costs half").isEqualTo(99.5);

    time.advance(Duration.ofSeconds(1));
    teach(retry, "https://b.test:443", 400); // B's pacer: turns 400 ms apart, another call's next
    Step turn = call.next(null);
    assertThat(turn.waitNanos()).as("the turn after the other call's at B").isEqualTo(800 * MS);
    time.advance(Duration.ofMillis(800));
    attempt = send(call);
    assertThat(call.ended(attempt, response(toB, 200, null), null, 0)).isSameAs(Step.RETURN);
    // The admitted turn, 800 ms after the last admitted one, was back to back with it (hi = 800
    // ms): B's turns now go min(hi, lo × 1.25 = 400 ms) × 1.1 (PACING_MARGIN) apart.
    long now = time.nanoTime();
    assertThat(retry.policy().originGate.reserve("https://b.test:443", now, FAR, FAR)).isEqualTo(now + 440 * MS);
    assertThat(retry.policy().originGate.reserve("https://a.test:443", now, FAR, FAR))
        .as("A was never paced").isEqualTo(now);
  }

  @Test
  void aRetryBehindOthersWhoseTurnWouldComePastItsLatestTimeGivesUpWithTheOriginsStatus() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(4));
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    Step decision = call.ended(attempt, response(request, 503, "1"), null, 0);
    assertThat(decision.waitNanos()).isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    teach(retry, "https://a.test:443", 10_000); // turns 2 s apart (the rate cap), another call's next
    // 4 s deadline: 1 s Retry-After leaves 3 s, of which the wait may take half: at most 2.5 s.
    // Its turn (4 s from now) is later: held to 2.5 s it would bunch with every other such call,
    // sent now it would only add to the crowd the origin turns away.
    Step step = call.next(null);
    assertThat(step.kind()).isEqualTo(Step.Kind.RETURN);
    Response local = step.responseOr(null);
    assertThat(local.code()).isEqualTo(503);
    assertThat(local.header("Retry-After")).isEqualTo("4");
    long now = time.nanoTime();
    assertThat(nextTurn(retry, now)).as("it took no turn: the next follows the other call's").isEqualTo(now + 4_000 * MS);
  }

  @Test
  void aRetryAloneOnItsOriginIsNeverHeldPastItsOwnSpread() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20)); // retryAfterSpread 0: its spread adds nothing
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    assertThat(call.ended(attempt, response(request, 429, "1"), null, 0).waitNanos()).isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    teach(retry, ORIGIN, 10_000, false); // turns 2 s apart, the last one now, nobody waiting
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
    assertThat(budget.availableTokens()).isEqualTo(99.0);
    time.advance(Duration.ofNanos(decision.waitNanos()));
    teach(retry, "https://a.test:443", 10_000);
    send(call);
  }

  @Test
  void theOriginTableEmptiesItselfOnceThrottlingIsOverWhicheverOriginIsCalledNext() throws IOException {
    RetryInterceptor retry = RetryInterceptor.create(RetryPolicy.builder().timeSource(time).build());
    Script script = new Script().status(429, "Retry-After", "1").status(200).thenAlways(200);
    okhttp3.OkHttpClient client = script.client(retry);
    client.newCall(get("https://a.test/")).execute().close();
    assertThat(retry.policy().originGate.size()).as("a.test was paced").isEqualTo(1);
    time.advance(Duration.ofMinutes(10)); // far past Tuning.PACING_MEMORY_NANOS
    Request toB = get("https://b.test/");
    client.newCall(toB).execute().close();
    assertThat(retry.policy().originGate.size()).isZero();
    assertThat(StatelessAttempt.open(retry.policy(), toB, 0))
        .as("calls make their first attempt without state again").isNull();
  }

  /** Asks {@code call} for its next step, which must be SEND, and returns the attempt to send. */
  static Attempt send(LogicalCall call) {
    Step step = call.next(null);
    assertThat(step.kind()).as("SEND").isEqualTo(Step.Kind.SEND);
    return step.attempt();
  }

  static final String ORIGIN = "https://a.test:443";
  static final long LONG_RETRY_AFTER = 60_000 * MS;

  /** What the origin's pacer hands out next at {@code nowNanos}: the turn of a retry asking then. */
  long nextTurn(RetryInterceptor retry, long nowNanos) {
    return retry.policy().originGate.reserve(ORIGIN, nowNanos, FAR, FAR);
  }

  /**
   * A call that is not paced reports its send to the pacers of a paced origin and, once admitted,
   * its admission: a crowd's refused turn then counts its gap from that admission, not from the
   * crowd's own last one.
   */
  @Test
  void aCallThatIsNotPacedReportsWhenItWasSentAndAdmitted() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    teach(retry, ORIGIN, 400, false); // lo 320 ms; the last turn, admitted, now
    long taught = time.nanoTime();
    time.advance(Duration.ofMillis(100));
    long sent = time.nanoTime();
    LogicalCall other = LogicalCall.start(retry.policy(), get("https://a.test/other"), 0);
    Attempt attempt = send(other);
    assertThat(other.ended(attempt, response(attempt.request(), 200, null), null, 0)).isSameAs(Step.RETURN);
    // A turn refused 360 ms after the other call's admission (460 ms after the crowd's last one).
    retry.policy().originGate.released(ORIGIN, sent + 360 * MS, false, LONG_RETRY_AFTER, LONG_RETRY_AFTER, sent + 361 * MS);
    assertThat(nextTurn(retry, sent + 1)).as("lo 360 ms: turns 450 ms apart").isEqualTo(taught + 450 * MS);
  }

  @Test
  void aTurnRefusedWhileACallThatIsNotPacedIsInFlightTeachesNothing() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    teach(retry, ORIGIN, 400, false);
    long taught = time.nanoTime();
    time.advance(Duration.ofMillis(100));
    long sent = time.nanoTime();
    LogicalCall other = LogicalCall.start(retry.policy(), get("https://a.test/other"), 0);
    send(other); // sent, not answered yet
    retry.policy().originGate.released(ORIGIN, sent + 360 * MS, false, LONG_RETRY_AFTER, LONG_RETRY_AFTER, sent + 361 * MS);
    assertThat(nextTurn(retry, sent + 1)).as("still 400 ms apart: the refusal may be the other call's doing")
        .isEqualTo(taught + 400 * MS);
  }

  @Test
  void aRefusedTurnTeachesThePacerOfTheOriginThatRefusedIt() throws IOException {
    RetryInterceptor retry = retry(Duration.ofSeconds(20));
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    assertThat(call.ended(attempt, response(request, 429, "1"), null, 0).waitNanos()).isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    teach(retry, ORIGIN, 400); // lo 320 ms; the last turn, admitted, now; another call's next
    assertThat(call.next(null).waitNanos()).isEqualTo(800 * MS);
    time.advance(Duration.ofMillis(800));
    attempt = send(call);
    assertThat(call.ended(attempt, response(request, 429, "1"), null, 0).kind()).isEqualTo(Step.Kind.WAIT);
    // Refused 800 ms after the last admission: lo 800 ms, turns 800 × 1.25 = 1 000 ms apart,
    // which is also the most the Retry-Afters that taught it allow.
    long now = time.nanoTime();
    assertThat(nextTurn(retry, now)).isEqualTo(now + 1_000 * MS);
  }

  @Test
  void aTurnThatEndsInAnExceptionEndsThePacingAndTheNextAttemptIsAnotherCall() throws IOException {
    RetryInterceptor retry = RetryInterceptor.create(RetryPolicy.builder().timeSource(time).retryAfterSpread(0).jitter(Jitter.NONE)
        .maxRetries(5).maxRetryAfter(Duration.ofSeconds(5)).deadline(Duration.ofSeconds(20)).retryBudget(budget).build());
    Request request = get("https://a.test/");
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    Attempt attempt = send(call);
    call.ended(attempt, response(request, 429, "1"), null, 0);
    time.advance(Duration.ofSeconds(1));
    teach(retry, ORIGIN, 400);
    assertThat(call.next(null).waitNanos()).isEqualTo(800 * MS);
    time.advance(Duration.ofMillis(800));
    attempt = send(call);
    Step backoff = call.ended(attempt, null, new SocketTimeoutException("timeout"), 0);
    assertThat(backoff.waitNanos()).as("an exception: backoff, not pacing").isEqualTo(400 * MS);
    time.advance(Duration.ofNanos(backoff.waitNanos()));
    long sent = time.nanoTime();
    attempt = send(call);
    call.ended(attempt, response(request, 200, null), null, 0);
    // Its admission counts as another call's: a turn refused 360 ms later teaches lo = 360 ms.
    retry.policy().originGate.released(ORIGIN, sent + 360 * MS, false, LONG_RETRY_AFTER, LONG_RETRY_AFTER, sent + 361 * MS);
    long lastTurn = sent - 400 * MS; // the turn that ended in the exception
    assertThat(nextTurn(retry, sent + 1)).isEqualTo(lastTurn + 450 * MS);
  }

  /** A call the origin-wide gate held joins the crowd: once the gate opens it takes a turn. */
  @Test
  void aCallHeldAtTheOriginGateTakesItsTurnWhenTheGateOpens() throws IOException {
    RetryInterceptor retry = RetryInterceptor.create(RetryPolicy.builder().timeSource(time).retryAfterSpread(0).maxRetries(5)
        .maxRetryAfter(Duration.ofSeconds(5)).deadline(Duration.ofSeconds(20)).retryBudget(budget)
        .originWideRetryAfter(true).build());
    Request request = get("https://a.test/");
    long start = time.nanoTime();
    retry.policy().originGate.close(request.url(), start, start + 1_000 * MS, 503);
    LogicalCall call = LogicalCall.start(retry.policy(), request, 0);
    assertThat(call.next(null).waitNanos()).isEqualTo(1_000 * MS);
    time.advance(Duration.ofSeconds(1));
    teach(retry, ORIGIN, 400);
    assertThat(call.next(null).waitNanos()).as("the gate is open: the turn after the other call's").isEqualTo(800 * MS);
    time.advance(Duration.ofMillis(800));
    send(call);
  }
}
