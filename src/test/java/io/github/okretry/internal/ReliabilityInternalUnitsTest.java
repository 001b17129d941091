package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.GiveUpReason;
import io.github.okretry.Jitter;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.UnknownServiceException;
import java.security.cert.CertificateException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;
import io.github.okretry.internal.RandomSource;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.internal.http2.ConnectionShutdownException;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Focused, named unit cases for the internal decision code, written against the mutants PIT
 * reported as surviving the property tests: exact boundaries, each branch's exact value.
 */
class ReliabilityInternalUnitsTest {

  /** The decision for facts given in the order of the old positional contract. */
  static Decision decide(RetryRules rules, int attempt, int maxRetries, boolean retryable, boolean safe,
      long retryAfterNanos, long remainingNanos, long previousDelayNanos, RandomSource random) {
    return rules.decide(
        AttemptFacts.attempt(attempt, maxRetries).retryable(retryable).safeToRepeat(safe)
            .retryAfterNanos(retryAfterNanos).remainingNanos(remainingNanos)
            .previousDelayNanos(previousDelayNanos).build(),
        random);
  }

  /** A generator that always draws the lowest (or highest) value of any bounded range. */
  static RandomSource extreme(boolean highest) {
    return new RandomSource() {
      @Override
      public long nextLong() {
        return highest ? -1L : 0L;
      }

      @Override
      public long nextLong(long bound) {
        return highest ? bound - 1 : 0;
      }
    };
  }

  static final Request REQUEST = new Request.Builder().url("http://example.invalid/").build();

  static Response response(int code, String... headers) {
    return new Response.Builder().request(REQUEST).protocol(Protocol.HTTP_1_1).code(code).message("m")
        .headers(Headers.of(headers)).build();
  }

  @Nested
  class BackoffCases {
    @Test
    void rejectsInvalidParts() {
      assertThatThrownBy(() -> new Backoff(0, 1, 2, Jitter.NONE)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("baseNanos");
      assertThatThrownBy(() -> new Backoff(1, 0, 2, Jitter.NONE)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxNanos");
      assertThatThrownBy(() -> new Backoff(1, 1, 1.0, Jitter.NONE)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiplier");
      assertThatThrownBy(() -> new Backoff(1, 1, Double.NaN, Jitter.NONE)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> new Backoff(1, 1, Double.POSITIVE_INFINITY, Jitter.NONE)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> new Backoff(1, 1, 2, null)).isInstanceOf(NullPointerException.class);
      assertThat(new Backoff(1, 1, Math.nextUp(1.0), Jitter.NONE).multiplier()).isGreaterThan(1.0);
      assertThatThrownBy(() -> new Backoff(1, 1, 2, Jitter.NONE).capNanos(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retry < 1: 0");
    }

    @Test
    void exactCaps() {
      Backoff b = new Backoff(100, 1000, 2, Jitter.NONE);
      assertThat(new long[] {b.capNanos(1), b.capNanos(2), b.capNanos(3), b.capNanos(4), b.capNanos(5), b.capNanos(6)})
          .containsExactly(100, 200, 400, 800, 1000, 1000);
      assertThat(new Backoff(100, 400, 2, Jitter.NONE).capNanos(3)).isEqualTo(400); // exactly at the max
      assertThat(new Backoff(500, 100, 2, Jitter.NONE).capNanos(1)).isEqualTo(100); // max below base
      assertThat(b.delayNanos(3, 0, extreme(true))).isEqualTo(400);
    }

    @Test
    void fullJitterEnds() {
      Backoff b = new Backoff(100, 1000, 2, Jitter.FULL);
      assertThat(b.delayNanos(2, 0, extreme(false))).isEqualTo(0);
      assertThat(b.delayNanos(2, 0, extreme(true))).isEqualTo(200);
    }

    @Test
    void equalJitterEnds() {
      Backoff b = new Backoff(101, 1000, 2, Jitter.EQUAL);
      // cap 101: half 50, so [51, 101]
      assertThat(b.delayNanos(1, 0, extreme(false))).isEqualTo(51);
      assertThat(b.delayNanos(1, 0, extreme(true))).isEqualTo(101);
    }

    @Test
    void decorrelatedEnds() {
      Backoff b = new Backoff(100, 10_000, 2, Jitter.DECORRELATED);
      assertThat(b.delayNanos(1, 100, extreme(false))).isEqualTo(100);
      assertThat(b.delayNanos(1, 100, extreme(true))).isEqualTo(300);
      assertThat(b.delayNanos(2, 1000, extreme(true))).isEqualTo(3000);
      assertThat(b.delayNanos(2, 5000, extreme(true))).isEqualTo(10_000); // capped
      assertThat(b.delayNanos(2, 10, extreme(true))).isEqualTo(300); // previous below base: base
      assertThat(b.delayNanos(2, Long.MAX_VALUE, extreme(true))).isEqualTo(10_000); // saturated
      Backoff low = new Backoff(500, 200, 2, Jitter.DECORRELATED);
      assertThat(low.delayNanos(1, 500, extreme(false))).isEqualTo(200);
    }

    @Test
    void uniformAndSaturation() {
      assertThat(Backoff.uniform(extreme(true), 5, 5)).isEqualTo(5);
      assertThat(Backoff.uniform(extreme(true), 5, 4)).isEqualTo(5);
      assertThat(Backoff.uniform(extreme(true), 5, 7)).isEqualTo(7);
      assertThat(Backoff.uniform(extreme(false), 5, 7)).isEqualTo(5);
      assertThat(Backoff.uniform(extreme(true), 0, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE); // -1 >>> 1
      assertThat(Backoff.uniform(extreme(false), 0, Long.MAX_VALUE)).isEqualTo(0);
      assertThat(Backoff.saturatedMultiply(0, 3)).isEqualTo(0);
      assertThat(Backoff.saturatedMultiply(7, 3)).isEqualTo(21);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE / 3, 3)).isEqualTo(Long.MAX_VALUE / 3 * 3);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE / 3 + 1, 3)).isEqualTo(Long.MAX_VALUE);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE / 2 + 1, 3)).isEqualTo(Long.MAX_VALUE);
      assertThat(Backoff.saturatedMultiply(Long.MAX_VALUE, 3)).isEqualTo(Long.MAX_VALUE);
    }
  }

  @Nested
  class ClassifierCases {
    final Classifier plain = new Classifier(Set.of(429, 503), null, null);

    @ParameterizedTest
    @CsvSource({"429,true", "503,true", "500,false", "408,false", "200,false", "999,false", "1000,false", "0,false"})
    void statuses(int code, boolean retryable) {
      assertThat(plain.isRetryable(response(code))).isEqualTo(retryable);
    }

    @Test
    void extraStatusesAndPredicates() {
      Classifier c = new Classifier(Set.of(100, 999), r -> r.header("X-Retry") != null, e -> e.getMessage() != null && e.getMessage().equals("yes"));
      assertThat(c.isRetryable(response(100))).isTrue();
      assertThat(c.isRetryable(response(999))).isTrue();
      assertThat(c.isRetryable(response(200))).isFalse();
      assertThat(c.isRetryable(response(200, "X-Retry", "1"))).isTrue();
      assertThat(c.isRetryable(new IOException("yes"))).isTrue();
      assertThat(c.isRetryable(new IOException("no"))).isFalse();
      assertThat(plain.isRetryable(new IOException("yes"))).isFalse();
    }

    @Test
    void transientExceptions() {
      assertThat(plain.isRetryable(new SocketTimeoutException("timeout"))).isTrue();
      assertThat(plain.isRetryable(new ConnectException("refused"))).isTrue();
      assertThat(plain.isRetryable(new SocketException("reset"))).isTrue();
      assertThat(plain.isRetryable(new EOFException())).isTrue();
      assertThat(plain.isRetryable(new UnknownHostException("x"))).isTrue();
      assertThat(plain.isRetryable(new StreamResetException(ErrorCode.REFUSED_STREAM))).isTrue();
      assertThat(plain.isRetryable(new ConnectionShutdownException())).isTrue();
      assertThat(plain.isRetryable(new IOException("unexpected end of stream", new EOFException()))).isTrue();
      assertThat(plain.isRetryable(new IOException("wrapped", new UnknownHostException()))).isTrue();
    }

    @Test
    void permanentExceptions() {
      assertThat(plain.isRetryable(new IOException("plain"))).isFalse();
      assertThat(plain.isRetryable(new ProtocolException("bad"))).isFalse();
      assertThat(plain.isRetryable(new UnknownServiceException("cleartext"))).isFalse();
      assertThat(plain.isRetryable(new InterruptedIOException("interrupted"))).isFalse();
      assertThat(plain.isRetryable(new SSLHandshakeException("tls"))).isFalse();
      assertThat(plain.isRetryable(new SocketException("wraps tls") {{ initCause(new SSLHandshakeException("x")); }})).isFalse();
      assertThat(plain.isRetryable(new IOException(new CertificateException("bad cert")))).isFalse();
      // An SSL failure at depth 8 (the top is 0) is out of sight; the socket failure on top is what counts.
      IOException deep = new IOException("0");
      Throwable t = deep;
      for (int i = 1; i < 7; i++) {
        IOException next = new IOException(String.valueOf(i));
        t.initCause(next);
        t = next;
      }
      t.initCause(new SSLHandshakeException("at depth 8"));
      assertThat(plain.isRetryable(new SocketException("top") {{ initCause(deep); }})).isTrue();
      IOException seven = new IOException("1");
      t = seven;
      for (int i = 2; i < 7; i++) {
        IOException next = new IOException(String.valueOf(i));
        t.initCause(next);
        t = next;
      }
      t.initCause(new SSLHandshakeException("at depth 7"));
      assertThat(plain.isRetryable(new SocketException("top") {{ initCause(seven); }})).isFalse();
      // A transient cause deeper than 8 levels is not looked for.
      IOException buried = new IOException("0");
      t = buried;
      for (int i = 1; i < 8; i++) {
        IOException next = new IOException(String.valueOf(i));
        t.initCause(next);
        t = next;
      }
      t.initCause(new EOFException("8"));
      assertThat(plain.isRetryable(buried)).isFalse();
      IOException shallow = new IOException("0");
      t = shallow;
      for (int i = 1; i < 7; i++) {
        IOException next = new IOException(String.valueOf(i));
        t.initCause(next);
        t = next;
      }
      t.initCause(new EOFException("7"));
      assertThat(plain.isRetryable(shallow)).isTrue();
    }

    @Test
    void proofOfNotProcessing() {
      assertThat(Classifier.provesNotProcessed(response(429))).isTrue();
      assertThat(Classifier.provesNotProcessed(response(503))).isTrue();
      assertThat(Classifier.provesNotProcessed(response(500))).isFalse();
      assertThat(Classifier.provesNotProcessed(response(408))).isFalse();
      // Pre-send failures are proven by the SendTracker (no request headers written); by type,
      // only a refused HTTP/2 stream proves the server did not process a written request.
      assertThat(Classifier.provesNotProcessed(new StreamResetException(ErrorCode.REFUSED_STREAM))).isTrue();
      assertThat(Classifier.provesNotProcessed(new StreamResetException(ErrorCode.CANCEL))).isFalse();
      assertThat(Classifier.provesNotProcessed(new ConnectException())).isFalse();
      assertThat(Classifier.provesNotProcessed(new SocketTimeoutException("Read timed out"))).isFalse();
    }
  }

  @Nested
  class PolicyCases {
    final Backoff none = new Backoff(100, 1000, 2, Jitter.NONE);
    final RetryRules policy = new RetryRules(none, 5_000, 0);
    final RandomSource low = extreme(false);
    final long absent = RetryAfter.ABSENT;
    final long noDeadline = RetryRules.NO_DEADLINE;

    @Test
    void rejectsInvalid() {
      assertThatThrownBy(() -> new RetryRules(none, 0, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRetryAfterNanos");
      assertThatThrownBy(() -> new RetryRules(none, 1, -0.1)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> new RetryRules(none, 1, 1.1)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> new RetryRules(none, 1, Double.NaN)).isInstanceOf(IllegalArgumentException.class);
      assertThat(new RetryRules(none, 1, 1.0).retryAfterSpread()).isEqualTo(1.0);
      assertThat(new RetryRules(none, 1, 0.0).retryAfterSpread()).isEqualTo(0.0);
    }

    @Test
    void orderOfStops() {
      assertThat(decide(policy, 9, 3, false, false, absent, 0, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.NOT_RETRYABLE));
      assertThat(decide(policy, 9, 3, true, false, absent, 0, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.NOT_SAFE_TO_REPEAT));
      assertThat(decide(policy, 4, 3, true, true, 10_000, 0, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.RETRIES_EXHAUSTED));
      assertThat(decide(policy, 3, 3, true, true, 10_000, 0, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.RETRY_AFTER_TOO_LONG));
      assertThat(decide(policy, 3, 3, true, true, 5_000, 5_000, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED));
    }

    @Test
    void boundaries() {
      assertThat(decide(policy, 3, 3, true, true, 5_000, 5_001, 100, low)).isEqualTo(Decision.retryAfter(5_000));
      assertThat(decide(policy, 1, 3, true, true, 0, 1, 100, low)).isEqualTo(Decision.retryAfter(0));
      assertThat(decide(policy, 1, 0, true, true, absent, noDeadline, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.RETRIES_EXHAUSTED));
      assertThat(decide(policy, 2, 3, true, true, absent, noDeadline, 100, low)).isEqualTo(Decision.retryAfter(200));
      assertThat(decide(policy, 2, 3, true, true, absent, 200, 100, low)).isEqualTo(Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED));
      assertThat(decide(policy, 2, 3, true, true, absent, 201, 100, low)).isEqualTo(Decision.retryAfter(200));
    }

    @Test
    void spreadGoesOnlyUpwardAndStaysUnderTheCeiling() {
      RetryRules spread = new RetryRules(none, 5_000, 0.5);
      assertThat(spread.spreadUpward(1_000, RetryRules.NO_DEADLINE, extreme(false))).isEqualTo(1_000);
      assertThat(spread.spreadUpward(1_000, RetryRules.NO_DEADLINE, extreme(true))).isEqualTo(1_500);
      assertThat(spread.spreadUpward(4_000, RetryRules.NO_DEADLINE, extreme(true))).isEqualTo(5_000);
      assertThat(spread.spreadUpward(0, RetryRules.NO_DEADLINE, extreme(true))).isEqualTo(0);
      assertThat(policy.spreadUpward(1_000, RetryRules.NO_DEADLINE, extreme(true))).isEqualTo(1_000);
      assertThat(decide(spread, 1, 3, true, true, 1_000, noDeadline, 100, extreme(true))).isEqualTo(Decision.retryAfter(1_500));
    }

    /**
     * The spread is politeness, not the server's word: when the server's own Retry-After fits the
     * time left, the spread is trimmed to half the time the wait leaves, never turned into a
     * give-up.
     */
    @Test
    void spreadNeverTurnsAFittingRetryAfterIntoAGiveUp() {
      RetryRules spread = new RetryRules(none, 5_000, 1.0);
      assertThat(decide(spread, 1, 3, true, true, 1_000, 1_500, 100, extreme(true))).isEqualTo(Decision.retryAfter(1_250));
      assertThat(decide(spread, 1, 3, true, true, 1_000, 2_000, 100, extreme(true))).isEqualTo(Decision.retryAfter(1_500));
      assertThat(decide(spread, 1, 3, true, true, 1_000, 1_001, 100, extreme(true))).isEqualTo(Decision.retryAfter(1_000));
      assertThat(decide(spread, 1, 3, true, true, 1_000, 1_000, 100, extreme(true))).isEqualTo(Decision.giveUp(GiveUpReason.DEADLINE_EXCEEDED));
    }

    @Test
    void decisions() {
      assertThatThrownBy(() -> Decision.retryAfter(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
      assertThat(Decision.retryAfter(0).isRetry()).isTrue();
      assertThat(Decision.giveUp(GiveUpReason.CANCELED).isRetry()).isFalse();
      assertThat(Decision.giveUp(GiveUpReason.CANCELED).delayNanos()).isZero();
    }
  }

  @Nested
  class RetryAfterCases {
    final Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t", " \t ", "-1", "1.5", "10s", "soon", "+3", "1 2", "Thu, 01 Xyz 2026 00:00:00 GMT"})
    void absent(String value) {
      assertThat(RetryAfter.parse(value, Headers.of(), clock::millis)).isEqualTo(RetryAfter.ABSENT);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "0|0", "7|7000000000", "' 10 '|10000000000", "'\t3\t'|3000000000", "007|7000000000",
      "9223372036|9223372036000000000", "9223372037|9223372036000000000",
      "99999999999999999999999999|9223372036000000000",
      "'Thu, 01 Jan 2026 00:00:05 GMT'|5000000000", "'Wed, 31 Dec 2025 23:59:59 GMT'|0",
      "'Thu, 01 Jan 2026 00:00:00 GMT'|0", "'Thursday, 01-Jan-26 00:01:00 GMT'|60000000000",
      "'Thu Jan  1 00:00:02 2026'|2000000000"})
    void values(String value, long nanos) {
      assertThat(RetryAfter.parse(value, Headers.of(), clock::millis)).isEqualTo(nanos);
    }

    @Test
    void serverDateWinsOverTheLocalClock() {
      Headers h = Headers.of("Date", "Thu, 01 Jan 2026 00:00:10 GMT");
      assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:15 GMT", h, clock::millis)).isEqualTo(5_000_000_000L);
      assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:10 GMT", h, clock::millis)).isEqualTo(0);
      assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:11 GMT", Headers.of("Date", "garbage"), clock::millis)).isEqualTo(11_000_000_000L);
      assertThat(RetryAfter.parse("Fri, 01 Jan 2300 00:00:00 GMT", Headers.of("Date", "Thu, 01 Jan 1970 00:00:00 GMT"), clock::millis)).isEqualTo(Long.MAX_VALUE);
      assertThat(RetryAfter.parse(null, h, clock::millis)).isEqualTo(RetryAfter.ABSENT);
    }

    @Test
    void saturatesExactlyAtTheLastRepresentableMillisecond() {
      long date = Instant.parse("2300-01-01T00:00:00Z").toEpochMilli();
      long limit = Long.MAX_VALUE / 1_000_000L; // 9 223 372 036 854 ms, about 292 years
      String value = "Mon, 01 Jan 2300 00:00:00 GMT";
      Clock atLimit = Clock.fixed(Instant.ofEpochMilli(date - limit), ZoneOffset.UTC);
      Clock justUnder = Clock.fixed(Instant.ofEpochMilli(date - limit + 1), ZoneOffset.UTC);
      assertThat(RetryAfter.parse(value, Headers.of(), atLimit::millis)).isEqualTo(Long.MAX_VALUE);
      assertThat(RetryAfter.parse(value, Headers.of(), justUnder::millis)).isEqualTo((limit - 1) * 1_000_000L);
    }

    @Test
    void longestOfSeveralFields() {
      assertThat(RetryAfter.delayNanos(response(503), clock::millis)).isEqualTo(RetryAfter.ABSENT);
      assertThat(RetryAfter.delayNanos(response(503, "Retry-After", "x"), clock::millis)).isEqualTo(RetryAfter.ABSENT);
      assertThat(RetryAfter.delayNanos(response(503, "Retry-After", "2", "Retry-After", "x", "Retry-After", "5", "Retry-After", "1"), clock::millis))
          .isEqualTo(5_000_000_000L);
      assertThat(RetryAfter.delayNanos(response(503, "Retry-After", "0"), clock::millis)).isEqualTo(0);
    }
  }

  @Nested
  class TimeAndTracking {
    final OkHttpClient client = new OkHttpClient();

    @Test
    void systemSleepWaitsAndObeysCancelAndInterrupt() throws Exception {
      Call call = client.newCall(REQUEST);
      long start = System.nanoTime();
      TimeSource.SYSTEM.sleep(25_000_000L, call);
      assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(25_000_000L);
      TimeSource.SYSTEM.sleep(0, call);
      assertThat(TimeSource.SYSTEM.nanoTime()).isGreaterThan(start);
      assertThat(TimeSource.SYSTEM).hasToString("TimeSource.SYSTEM");

      call.cancel();
      assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(1_000_000_000L, call)).isExactlyInstanceOf(IOException.class).hasMessage("Canceled");
      assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(0, call)).hasMessage("Canceled");

      Call other = client.newCall(REQUEST);
      Thread.currentThread().interrupt();
      try {
        assertThatThrownBy(() -> TimeSource.SYSTEM.sleep(1_000_000_000L, other)).isInstanceOf(InterruptedIOException.class);
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
      } finally {
        Thread.interrupted();
      }
    }

    @Test
    void sendTrackerFollowsTheAttempt() {
      Call call = client.newCall(REQUEST);
      SendTracker tracker = SendTracker.attach(call);
      assertThat(tracker.requestSent()).isFalse();
      tracker.requestHeadersStart(call);
      assertThat(tracker.requestSent()).as("headers begun, not yet written whole").isFalse();
      tracker.requestHeadersEnd(call, REQUEST);
      assertThat(tracker.requestSent()).isTrue();
      assertThat(tracker.requestsThisAttempt()).isEqualTo(1);
      tracker.reset();
      assertThat(tracker.requestSent()).isFalse();
    }
  }
}
