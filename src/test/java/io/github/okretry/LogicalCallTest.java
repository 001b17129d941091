package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

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
}
