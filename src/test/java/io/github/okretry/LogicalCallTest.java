package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Decisions of one {@link LogicalCall} driven by hand on fake time, as a driver would, that the
 * scripted tests do not reach: which retryable responses end hedging for the call
 * (docs/semantics.md, "Hedging", Refused), and a retry without evidence whose Full Jitter wait drew
 * 0.
 */
@Tag("unit")
class LogicalCallTest {
  static final long MS = 1_000_000L;

  final FakeTime time = new FakeTime();
  final Request get = new Request.Builder().url("https://a.test/x").build();

  Response response(int code, String... headers) {
    return new Response.Builder()
        .request(get)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("x")
        .headers(Headers.of(headers))
        .body(ResponseBody.create("", (MediaType) null))
        .build();
  }

  /** Retries a 500 too; its origin has answered once, and a call succeeded. */
  RetryPolicy policy() {
    RetryPolicy p =
        RetryPolicy.builder()
            .timeSource(time)
            .jitter(Jitter.NONE)
            .baseDelay(Duration.ofMillis(100))
            .random(() -> 0L)
            .retryOnStatus(500)
            .build();
    RetryBudgetTest.returned(p.budget, 200, 1);
    return p;
  }

  /** A factory's hedging after 50 ms, its origin having answered once. */
  Hedging.Shared hedging() {
    Hedging.Shared h = new Hedging.Shared(HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
    h.origins.record(get.url(), 5 * MS);
    return h;
  }

  /**
   * The call's first attempt answered {@code first}; after the retry's wait, may its retry be
   * hedged?
   */
  long hedgeDelayOfTheRetryAfter(Response first) {
    LogicalCall call = LogicalCall.start(policy(), get, 0, hedging());
    Step send = call.next(null);
    assertThat(Attempt.of(send).hedgeAfterNanos)
        .as("the first round may be hedged")
        .isEqualTo(50 * MS);
    Step wait = call.ended(Attempt.of(send), first, null, 0);
    assertThat(wait.kind()).isEqualTo(Step.Kind.WAIT);
    time.advance(Duration.ofNanos(wait.waitNanos()));
    return Attempt.of(call.next(null)).hedgeAfterNanos;
  }

  @Test
  void aRetryableResponseWithRetryAfterEndsHedgingForTheCall() {
    assertThat(hedgeDelayOfTheRetryAfter(response(500, "Retry-After", "1")))
        .as("a Retry-After pushes back: no hedge in the retries")
        .isZero();
  }

  @Test
  void aRetryableResponseThatDoesNotPushBackLeavesHedgingOn() {
    assertThat(hedgeDelayOfTheRetryAfter(response(500)))
        .as("the retry's round may be hedged")
        .isEqualTo(50 * MS);
  }

  // A regression test (a review of issue 42's budget): a retry that waits out a 503's
  // Retry-After waits with its origin's crowd; when the budget skips it, the turn it gave back is
  // taken again, so the retry that finally leaves goes through the crowd's pacer. Reads the call's
  // crowd state, which nothing outside shows.

  static Object crowd(LogicalCall call) throws Exception {
    Field f = LogicalCall.class.getDeclaredField("origin");
    f.setAccessible(true);
    Object turn = f.get(call);
    Field c = OriginTurn.class.getDeclaredField("crowd");
    c.setAccessible(true);
    return c.get(turn);
  }

  Step after(LogicalCall call, Step wait) {
    assertThat(wait.kind()).isEqualTo(Step.Kind.WAIT);
    time.advance(Duration.ofNanos(wait.waitNanos()));
    return call.next(null);
  }

  /** Waits of 1, 2 s, none jittered, the server's waits exact; 2 retries. */
  RetryPolicy pacedPolicy() {
    return RetryPolicy.builder()
        .timeSource(time)
        .jitter(Jitter.NONE)
        .baseDelay(Duration.ofSeconds(1))
        .maxDelay(Duration.ofSeconds(3))
        .random(() -> 0L)
        .retryAfterSpread(0)
        .maxRetries(2)
        .build();
  }

  @Test
  void aRetryTheBudgetSkippedLeavesThroughItsCrowdsPacer() throws Exception {
    RetryPolicy p = pacedPolicy();
    // Call A spends the origin's count with errors: 2 retries, 4 halves.
    LogicalCall a = LogicalCall.start(p, get, 0);
    Step s = a.next(null);
    for (int i = 0; i < 2; i++) {
      s = after(a, a.ended(Attempt.of(s), null, new ConnectException("x"), 0));
    }
    assertThat(a.ended(Attempt.of(s), null, new ConnectException("x"), 0).kind())
        .isEqualTo(Step.Kind.THROW);
    // Call B: a 503 with Retry-After: 1 -> it waits in its origin's crowd.
    LogicalCall b = LogicalCall.start(p, get, 0);
    Step b1 = b.next(null);
    Step w = b.ended(Attempt.of(b1), response(503, "Retry-After", "1"), null, 0);
    assertThat(crowd(b).toString()).isEqualTo("WAITING");
    Step skipped = after(b, w);
    assertThat(skipped.kind()).as("skipped").isEqualTo(Step.Kind.WAIT);
    assertThat(crowd(b).toString()).as("its turn taken again").isEqualTo("WAITING");
    // The origin answers another call; B's retry now leaves.
    p.budget.returned(get.url(), response(200), 1, null, time);
    Step b2 = after(b, skipped);
    assertThat(b2.kind()).isEqualTo(Step.Kind.SEND);
    assertThat(crowd(b).toString())
        .as("the retry after its Retry-After goes through its crowd's pacer")
        .isEqualTo("SENT");
  }

  @Test
  void withoutASkipTheRetryAfterItsRetryAfterGoesThroughItsCrowdsPacer() throws Exception {
    RetryPolicy p = pacedPolicy();
    LogicalCall b = LogicalCall.start(p, get, 0);
    Step b1 = b.next(null);
    Step w = b.ended(Attempt.of(b1), response(503, "Retry-After", "1"), null, 0);
    Step b2 = after(b, w);
    assertThat(b2.kind()).isEqualTo(Step.Kind.SEND);
    assertThat(crowd(b).toString()).isEqualTo("SENT");
  }
}
