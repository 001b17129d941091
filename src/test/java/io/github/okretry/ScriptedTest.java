package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;
import java.util.SplittableRandom;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.provider.Arguments;

/**
 * What the unit tests of okretry's behaviour start from: a {@link Script} instead of a server,
 * {@link FakeTime} instead of waiting, a clock fixed at {@link #NOW}, seeded randomness and an
 * {@link EventLog}. No sockets, no real waits: a whole retry timeline is asserted instantly. Every
 * test is checked for leaks ({@link LeakCheck}), and okretry's warnings are captured ({@link
 * #log}), not printed.
 */
@ExtendWith(LeakCheck.class)
abstract class ScriptedTest {
  static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  @RegisterExtension final LogCapture log = LogCapture.okretry();

  final FakeTime time = new FakeTime();

  /** The driver the test runs on; a class parameterized over {@link Driver} sets it. */
  Driver driver = Driver.BLOCKING;

  final Script script = new Script();
  final EventLog events = new EventLog();

  /** Fake time, a clock fixed at {@link #NOW}, jitter from a seeded generator, the event log. */
  RetryPolicy.Builder retry() {
    return RetryPolicy.builder()
        .timeSource(time)
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)::millis)
        .random(new SplittableRandom(1)::nextLong)
        .listener(events);
  }

  /**
   * Fake time, every jitter draw 0, generated keys "k1", and no listener: a call's first attempt is
   * made without per-call state (see {@code LogicalCall.open}).
   */
  RetryPolicy.Builder quietRetry() {
    return RetryPolicy.builder().timeSource(time).keyGenerator(() -> "k1").random(() -> 0L);
  }

  /**
   * Calls through {@link #driver} to {@link #script}: the interceptor on a client, or a {@link
   * RetryingCallFactory} on the fake scheduler, whose calls' {@code execute()} returns what the
   * callback got.
   */
  Call.Factory client(RetryPolicy.Builder retry) {
    return driver.calls(retry.build(), script, time);
  }

  /**
   * A row of a table of bad settings: what sets it, and the setting and value its message names.
   */
  static Arguments bad(String name, Executable setting, String field, String value) {
    return Arguments.of(Named.of(name, setting), field, value);
  }

  /**
   * {@code setting} throws an IllegalArgumentException whose message names {@code field} and {@code
   * value}.
   */
  static void assertRejectedNaming(Executable setting, String field, String value) {
    assertThatThrownBy(setting::execute)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(field)
        .hasMessageContaining(value);
  }

  /** Executes {@code request} and returns the status of the response it ends with, closed. */
  static int code(Call.Factory client, Request request) throws IOException {
    try (Response r = client.newCall(request).execute()) {
      return r.code();
    }
  }

  /**
   * Another call of {@code client} succeeds now; on the async driver it runs as the scheduler goes
   * on.
   */
  void anotherCallSucceeds(Call.Factory client) {
    Call other = client.newCall(get());
    if (driver == Driver.BLOCKING) {
      try {
        other.execute().close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return;
    }
    other.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call call, Response response) {
            response.close();
          }

          @Override
          public void onFailure(Call call, IOException e) {
            throw new AssertionError(e);
          }
        });
  }

  static Request get() {
    return new Request.Builder().url("http://example.test/a").build();
  }

  /** A POST, which gets a generated key unless the request says otherwise. */
  static Request post() {
    return request("POST");
  }

  /** A request of {@code method}, with a body for POST, PUT and PATCH (which need one). */
  static Request request(String method) {
    RequestBody body =
        Set.of("POST", "PUT", "PATCH").contains(method)
            ? RequestBody.create("{}", MediaType.get("application/json"))
            : null;
    return new Request.Builder().url("http://example.test/pay").method(method, body).build();
  }
}
