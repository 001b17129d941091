package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.net.ConnectException;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A regression test (a review of issue 42's budget): a retry that waits out a 503's {@code
 * Retry-After} waits with its origin's crowd; when the budget skips it, the turn it gave back is
 * taken again, so the retry that finally leaves goes through the crowd's pacer. Reads the call's
 * crowd state, which nothing outside shows.
 */
@Tag("unit")
class SkippedRetryCrowdTest {
  static final long MS = 1_000_000L;
  final FakeTime time = new FakeTime();
  final Request get = new Request.Builder().url("https://a.test/x").build();

  Response response(int code, String... headers) {
    return new Response.Builder()
        .request(get)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("x")
        .headers(okhttp3.Headers.of(headers))
        .body(ResponseBody.create("", (MediaType) null))
        .build();
  }

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
  RetryPolicy policy() {
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
    RetryPolicy p = policy();
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
  void controlWithoutASkip() throws Exception {
    RetryPolicy p = policy();
    LogicalCall b = LogicalCall.start(p, get, 0);
    Step b1 = b.next(null);
    Step w = b.ended(Attempt.of(b1), response(503, "Retry-After", "1"), null, 0);
    Step b2 = after(b, w);
    assertThat(b2.kind()).isEqualTo(Step.Kind.SEND);
    assertThat(crowd(b).toString()).isEqualTo("SENT");
  }
}
