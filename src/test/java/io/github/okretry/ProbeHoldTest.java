package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import okhttp3.Call;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 30 item 4, on fake time and both drivers: {@code QuotaPacing.PROBE} holds a crowd on a
 * fresh origin while the first call's answer is pending, but the hold is one wait like any other,
 * bounded from the call's first wait by {@code maxRetryAfter} and half the time the call had left;
 * then the call goes and the server decides. Before, each 5 ms wait passed those checks alone, so a
 * slow first answer held the others until their deadline, unsent.
 *
 * <p>The first call's answer plays the crowd: while it is pending (inside its scripted outcome),
 * the others are made one after another, each pending at the server while the next calls.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class ProbeHoldTest extends ScriptedTest {

  static final long MS = 1_000_000L;

  /**
   * With the first, five calls pending at once: OkHttp's default {@code maxRequestsPerHost}, which
   * the async driver's calls queue behind.
   */
  static final int OTHERS = 4;

  /**
   * When each of the others (from 1) started and when its request reached the server, on the fake
   * clock.
   */
  final Map<Integer, long[]> others = new LinkedHashMap<>();

  ProbeHoldTest(Driver driver) {
    this.driver = driver;
  }

  static Request to(String path) {
    return new Request.Builder().url("http://fresh.test" + path).build();
  }

  /**
   * The first call to the fresh origin answers 200 without a quota {@code firstAnswerMillis} after
   * it was sent. While it is pending, {@link #OTHERS} others call, one after another: each reaches
   * the server and stays pending there while the next calls, so no answer frees the origin until
   * the last of them was sent; then each gets 200 without a quota. Returns the first call's status.
   */
  int crowdBehindASlowFirstAnswer(Call.Factory client, long firstAnswerMillis) throws IOException {
    script
        .then(
            (chain, attempt) -> {
              long sent = time.nanoTime();
              call(client, 1);
              long left = sent + firstAnswerMillis * MS - time.nanoTime();
              if (left > 0) time.advance(Duration.ofNanos(left));
              return ok(chain);
            })
        .thenAlways(
            (chain, attempt) -> {
              int other =
                  Integer.parseInt(
                      chain.request().url().encodedPath().substring("/other".length()));
              others.get(other)[1] = time.nanoTime();
              if (other < OTHERS) call(client, other + 1);
              return ok(chain);
            });
    return code(client, to("/first"));
  }

  /** Makes the {@code other}-th call (from 1) and runs it to its end. */
  void call(Call.Factory client, int other) {
    others.put(other, new long[] {time.nanoTime(), -1});
    try {
      assertThat(code(client, to("/other" + other))).as("other " + other).isEqualTo(200);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "other " + other + " failed while the first answer was pending", e);
    }
  }

  static Response ok(okhttp3.Interceptor.Chain chain) {
    return new Response.Builder()
        .request(chain.request())
        .protocol(Protocol.HTTP_1_1)
        .code(200)
        .message("OK")
        .body(new Script.TrackingBody("ok"))
        .build();
  }

  /** How long each of the others waited before its request was sent, in ms. */
  Map<Integer, Long> heldMillis() {
    Map<Integer, Long> held = new LinkedHashMap<>();
    others.forEach((other, t) -> held.put(other, t[1] < 0 ? -1 : (t[1] - t[0]) / MS));
    return held;
  }

  @Test
  void aCrowdHeldBehindASlowFirstAnswerGoesAtHalfItsTimeLeftInsteadOfMissingItsDeadlineUnsent()
      throws IOException {
    Call.Factory client =
        client(retry().quotaPacing(QuotaPacing.PROBE).deadline(Duration.ofSeconds(1)));
    crowdBehindASlowFirstAnswer(client, 3_000);
    // Each was held (the probe works), then went once its hold reached half its 1 s: sent, and
    // answered.
    assertThat(heldMillis())
        .hasSize(OTHERS)
        .allSatisfy((other, ms) -> assertThat(ms).as("other " + other).isBetween(490L, 500L));
    assertThat(script.attempts()).isEqualTo(1 + OTHERS);
    assertThat(events.lines("gaveUp")).isEmpty();
  }

  @Test
  void theHoldEndsAtMaxRetryAfterWhenThatIsTheTighterBound() throws IOException {
    // Half of 10 s left is 5 s; maxRetryAfter is 1 s. (A deadline all the same: before the fix, a
    // call without one was held as long as the first answer was pending, here for ever.)
    Call.Factory client =
        client(
            retry()
                .quotaPacing(QuotaPacing.PROBE)
                .maxRetryAfter(Duration.ofSeconds(1))
                .deadline(Duration.ofSeconds(10)));
    assertThat(crowdBehindASlowFirstAnswer(client, 5_000)).isEqualTo(200);
    assertThat(heldMillis())
        .hasSize(OTHERS)
        .allSatisfy((other, ms) -> assertThat(ms).as("other " + other).isBetween(990L, 1_000L));
    assertThat(script.attempts()).isEqualTo(1 + OTHERS);
  }
}
