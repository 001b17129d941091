package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.SocketTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The verification table, on fake time with scripted outcomes: no network, no real waiting. */
class RetryInterceptorTest {
  @RegisterExtension final LogCapture log = LogCapture.okretry();

  static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  final FakeTime time = new FakeTime();
  final Script script = new Script();
  final Recorder events = new Recorder();

  RetryInterceptor.Builder retry() {
    return RetryInterceptor.builder()
        .timeSource(time)
        .clock(Clock.fixed(NOW, ZoneOffset.UTC)::millis)
        .random(new SplittableRandom(1)::nextLong)
        .listener(events);
  }

  OkHttpClient client(RetryInterceptor.Builder builder) {
    return new OkHttpClient.Builder().addInterceptor(builder.build()).addInterceptor(script).build();
  }

  static Request get() {
    return new Request.Builder().url("http://example.test/a?token=secret").build();
  }

  static Request post() {
    return new Request.Builder().url("http://example.test/pay").post(RequestBody.create("{}", MediaType.get("application/json"))).build();
  }

  // --- the verification table -------------------------------------------------------------

  @Test
  void firstSuccessIsOneCallAndNoWait() throws IOException {
    script.status(200);
    try (Response r = client(retry()).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).isEmpty();
    assertThat(events.log).containsExactly("start 1", "succeeded 1 HTTP 200");
  }

  @Test
  void failTwiceThenSucceedIsThreeCallsAndTwoWaits() throws IOException {
    script.status(503).fail(new SocketTimeoutException("timeout")).status(200);
    try (Response r = client(retry()).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).isEqualTo("attempt 3");
    }
    assertThat(script.attempts()).isEqualTo(3);
    assertThat(time.sleeps()).hasSize(2);
    assertThat(events.log)
        .containsExactly(
            "start 1", "retry 1 HTTP 503", "start 2", "retry 2 SocketTimeoutException: timeout", "start 3",
            "succeeded 3 HTTP 200");
  }

  @Test
  void maxRetriesZeroIsOneCall() throws IOException {
    script.status(503);
    try (Response r = client(retry().maxRetries(0)).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).isEmpty();
    assertThat(events.log).containsExactly("start 1", "gaveUp 1 RETRIES_EXHAUSTED HTTP 503");
  }

  @Test
  void nonRetryableErrorIsThrownAtOnceWithoutWaiting() {
    ProtocolException protocol = new ProtocolException("bad status line");
    script.fail(protocol);
    assertThatThrownBy(() -> client(retry()).newCall(get()).execute()).isSameAs(protocol);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).isEmpty();
    assertThat(events.log).containsExactly("start 1", "gaveUp 1 NOT_RETRYABLE ProtocolException: bad status line");
  }

  @Test
  void nonRetryableStatusReturnsAtOnce() throws IOException {
    script.status(500);
    try (Response r = client(retry()).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(500);
    }
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.sleeps()).isEmpty();
  }

  @Test
  void retryLimitReturnsLastFailureWithoutAFinalWait() throws IOException {
    script.status(503).status(503).status(503).status(429);
    try (Response r = client(retry().maxRetries(3)).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(429);
      assertThat(r.body().string()).isEqualTo("attempt 4"); // the last response, body readable
    }
    assertThat(script.attempts()).isEqualTo(4);
    assertThat(time.sleeps()).hasSize(3);
    // every retried response was closed before the wait; the returned one was left open
    List<Response> returned = script.returned();
    for (int i = 0; i < 3; i++) {
      assertThat(((Script.TrackingBody) returned.get(i).body()).closed).as("response %d closed", i + 1).isTrue();
    }
  }

  @Test
  void lastExceptionCarriesEarlierOnesAsSuppressed() {
    IOException first = new ConnectException("refused");
    IOException second = new SocketTimeoutException("timeout");
    IOException last = new SocketTimeoutException("timeout again");
    script.fail(first).fail(second).fail(last);
    assertThatThrownBy(() -> client(retry().maxRetries(2)).newCall(get()).execute())
        .isSameAs(last)
        .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(first, second));
    assertThat(time.sleeps()).hasSize(2);
  }

  @Test
  void withoutJitterBaseOneSecondCapThreeWaitsOneTwoThreeThree() throws IOException {
    script.status(503).status(503).status(503).status(503).status(200);
    RetryInterceptor.Builder b =
        retry().jitter(Jitter.NONE).baseDelay(Duration.ofSeconds(1)).maxDelay(Duration.ofSeconds(3)).maxRetries(4);
    client(b).newCall(get()).execute().close();
    assertThat(time.sleepMillis()).containsExactly(1000L, 2000L, 3000L, 3000L);
  }

  @Test
  void fullJitterKeepsEveryWaitWithinThatRetrysCap() throws IOException {
    for (int i = 0; i < 10; i++) script.status(503);
    script.status(200);
    RetryInterceptor.Builder b =
        retry().baseDelay(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(2)).maxRetries(10);
    client(b).newCall(get()).execute().close();
    List<Duration> sleeps = time.sleeps();
    assertThat(sleeps).hasSize(10);
    for (int n = 1; n <= 10; n++) {
      long cap = Math.min(100L << (n - 1), 2000L);
      assertThat(sleeps.get(n - 1)).isBetween(Duration.ZERO, Duration.ofMillis(cap));
    }
    assertThat(sleeps).as("jittered, not the cap every time").doesNotHaveDuplicates();
  }

  // --- Retry-After ----------------------------------------------------------------------

  @Test
  void retryAfterSecondsOverridesBackoff() throws IOException {
    script.status(429, "Retry-After", "7").status(200);
    client(retry().retryAfterSpread(0)).newCall(get()).execute().close();
    assertThat(time.sleepMillis()).containsExactly(7000L);
  }

  @Test
  void retryAfterDateUsesTheResponseDateHeader() throws IOException {
    script
        .status(503, "Retry-After", "Thu, 01 Jan 2026 00:00:12 GMT", "Date", "Thu, 01 Jan 2026 00:00:10 GMT")
        .status(200);
    client(retry().retryAfterSpread(0)).newCall(get()).execute().close();
    assertThat(time.sleepMillis()).containsExactly(2000L);
  }

  @Test
  void invalidRetryAfterFallsBackToBackoff() throws IOException {
    script.status(503, "Retry-After", "soon").status(200);
    client(retry().jitter(Jitter.NONE).baseDelay(Duration.ofMillis(250))).newCall(get()).execute().close();
    assertThat(time.sleepMillis()).containsExactly(250L);
  }

  @Test
  void retryAfterOverTheCeilingReturnsTheResponseAtOnce() throws IOException {
    script.status(503, "Retry-After", "3600");
    try (Response r = client(retry().maxRetryAfter(Duration.ofMinutes(2))).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.header("Retry-After")).isEqualTo("3600");
    }
    assertThat(time.sleeps()).isEmpty();
    assertThat(events.log).contains("gaveUp 1 RETRY_AFTER_TOO_LONG HTTP 503");
  }

  @Test
  void retryAfterPastTheDeadlineReturnsTheResponseAtOnce() throws IOException {
    script.status(429, "Retry-After", "5");
    try (Response r = client(retry().deadline(Duration.ofSeconds(3))).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(429);
    }
    assertThat(time.sleeps()).isEmpty();
    assertThat(events.log).contains("gaveUp 1 DEADLINE_EXCEEDED HTTP 429");
  }

  @Test
  void byDefaultRetryAfterIsSpreadUpToHalfAgainButNeverPastTheDeadline() throws IOException {
    for (int i = 0; i < 10; i++) script.status(503, "Retry-After", "2");
    script.status(200);
    client(retry().maxRetries(10)).newCall(get()).execute().close();
    assertThat(time.sleeps()).hasSize(10).allSatisfy(d -> assertThat(d).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(3)));

    FakeTime t2 = new FakeTime();
    Script s2 = new Script().status(503, "Retry-After", "2").status(200);
    RetryInterceptor tight = retry().timeSource(t2).deadline(Duration.ofMillis(2100)).build();
    new OkHttpClient.Builder().addInterceptor(tight).addInterceptor(s2).build().newCall(get()).execute().close();
    assertThat(t2.sleeps()).singleElement().satisfies(d -> assertThat(d).isBetween(Duration.ofSeconds(2), Duration.ofMillis(2100)));
  }

  @Test
  void retryAfterIsSpreadOnlyUpward() throws IOException {
    for (int i = 0; i < 20; i++) script.status(503, "Retry-After", "1");
    script.status(200);
    client(retry().maxRetries(20).retryAfterSpread(0.5)).newCall(get()).execute().close();
    assertThat(time.sleeps()).hasSize(20).allSatisfy(d -> assertThat(d).isBetween(Duration.ofSeconds(1), Duration.ofMillis(1500)));
    assertThat(time.sleeps()).doesNotHaveDuplicates();
  }

  // --- classification ----------------------------------------------------------------------

  @ParameterizedTest(name = "HTTP {0} is not retried")
  @ValueSource(ints = {200, 201, 204, 301, 400, 401, 403, 404, 408, 409, 422, 500, 502, 504})
  void otherStatusesAreNotRetried(int code) throws IOException {
    script.status(code);
    client(retry()).newCall(get()).execute().close();
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void extraStatusCodesAndPredicatesExtendWhatIsRetried() throws IOException {
    script.status(502).status(500, "X-Retry", "yes").fail(new IOException("custom")).status(200);
    RetryInterceptor.Builder b =
        retry()
            .retryOnStatus(502)
            .retryOnResponse(r -> "yes".equals(r.header("X-Retry")))
            .retryOnException(e -> "custom".equals(e.getMessage()));
    client(b).newCall(get()).execute().close();
    assertThat(script.attempts()).isEqualTo(4);
  }

  static List<IOException> retryableExceptions() {
    return List.of(
        new SocketTimeoutException("timeout"),
        new ConnectException("Failed to connect"),
        new java.net.SocketException("Connection reset"),
        new java.net.NoRouteToHostException("no route"),
        new java.net.UnknownHostException("example.test"),
        new IOException("unexpected end of stream on http://example.test/...", new java.io.EOFException("\\n not found")));
  }

  @Test
  void timeoutsAndConnectionFailuresAreRetried() throws IOException {
    for (IOException e : retryableExceptions()) {
      Script s = new Script().fail(e).status(200);
      OkHttpClient c = new OkHttpClient.Builder().addInterceptor(retry().build()).addInterceptor(s).build();
      c.newCall(get()).execute().close();
      assertThat(s.attempts()).as("%s", e).isEqualTo(2);
    }
  }

  @Test
  void tlsProtocolAndUnknownFailuresAreNotRetried() {
    List<IOException> never =
        List.of(
            new SSLHandshakeException("bad cert"),
            new IOException("wrapped", new javax.net.ssl.SSLPeerUnverifiedException("pin")),
            new ProtocolException("Too many follow-up requests"),
            new java.net.UnknownServiceException("CLEARTEXT communication not enabled"),
            new IOException("something else"));
    for (IOException e : never) {
      Script s = new Script().fail(e).status(200);
      OkHttpClient c = new OkHttpClient.Builder().addInterceptor(retry().build()).addInterceptor(s).build();
      assertThatThrownBy(() -> c.newCall(get()).execute()).isSameAs(e);
      assertThat(s.attempts()).as("%s", e).isEqualTo(1);
    }
    assertThat(time.sleeps()).isEmpty();
  }

  @Test
  void interruptedAttemptIsNotRetried() {
    script.fail(new InterruptedIOException("interrupted")).status(200);
    assertThatThrownBy(() -> client(retry()).newCall(get()).execute()).isInstanceOf(InterruptedIOException.class);
    assertThat(script.attempts()).isEqualTo(1);
  }

  // --- safety -------------------------------------------------------------------------

  @ParameterizedTest(name = "{0} is retried after a timeout")
  @ValueSource(strings = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
  void idempotentMethodsAreRetriedAfterATimeout(String method) throws IOException {
    script.fail(new SocketTimeoutException("timeout")).status(200);
    RequestBody body = method.equals("PUT") ? RequestBody.create("x", null) : null;
    Request request = new Request.Builder().url("http://example.test/").method(method, body).build();
    client(retry()).newCall(request).execute().close();
    assertThat(script.attempts()).isEqualTo(2);
  }

  @Test
  void postGetsOneGeneratedKeyReusedOnEveryAttempt() throws IOException {
    AtomicInteger generated = new AtomicInteger();
    script.status(503).fail(new SocketTimeoutException("timeout")).status(200);
    client(retry().keyGenerator(() -> "key-" + generated.incrementAndGet())).newCall(post()).execute().close();
    assertThat(script.seen()).extracting(s -> s.request().header("Idempotency-Key")).containsExactly("key-1", "key-1", "key-1");
    assertThat(generated).hasValue(1);
  }

  @Test
  void patchGetsAKeyGetAndPutDoNot() throws IOException {
    script.status(200).status(200).status(200);
    OkHttpClient c = client(retry());
    c.newCall(new Request.Builder().url("http://example.test/").patch(RequestBody.create("x", null)).build()).execute().close();
    c.newCall(get()).execute().close();
    c.newCall(new Request.Builder().url("http://example.test/").put(RequestBody.create("x", null)).build()).execute().close();
    assertThat(script.seen()).extracting(s -> s.request().header("Idempotency-Key") != null).containsExactly(true, false, false);
  }

  @Test
  void callerKeyTagAndHeaderAreUsedAndNeverReplaced() throws IOException {
    script.status(503).status(200).status(200);
    OkHttpClient c = client(retry());
    c.newCall(post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.of("order-42")).build()).execute().close();
    c.newCall(post().newBuilder().header("Idempotency-Key", "mine").tag(IdempotencyKey.class, IdempotencyKey.of("tag")).build())
        .execute()
        .close();
    assertThat(script.seen()).extracting(s -> s.request().header("Idempotency-Key")).containsExactly("order-42", "order-42", "mine");
  }

  @Test
  void generateForcesAKeyOnAGetAndHeaderNameAndQuotingAreConfigurable() throws IOException {
    script.status(200);
    RetryInterceptor.Builder b = retry().idempotencyKeyHeader("X-Request-Key").quoteIdempotencyKey(true).keyGenerator(() -> "k1");
    client(b).newCall(get().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.generate()).build()).execute().close();
    assertThat(script.seen().get(0).request().header("X-Request-Key")).isEqualTo("\"k1\"");
    assertThat(script.seen().get(0).request().header("Idempotency-Key")).isNull();
  }

  @Test
  void postWithoutKeyIsRetriedWhenTheFailureProvesTheServerDidNotProcessIt() throws IOException {
    script.status(503).status(429).fail(new ConnectException("refused")).status(200);
    Request request = post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    client(retry()).newCall(request).execute().close();
    assertThat(script.attempts()).isEqualTo(4);
  }

  @Test
  void postWithoutKeyIsNotRetriedOnExtraStatuses() throws IOException {
    script.status(502).status(200);
    Request request = post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.none()).build();
    try (Response r = client(retry().retryOnStatus(502)).newCall(request).execute()) {
      assertThat(r.code()).isEqualTo(502);
    }
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void oneShotAndDuplexBodiesAreNeverRepeated() throws IOException {
    for (boolean duplex : new boolean[] {false, true}) {
      Script s = new Script().status(503).status(200);
      OkHttpClient c = new OkHttpClient.Builder().addInterceptor(retry().build()).addInterceptor(s).build();
      Request request = new Request.Builder().url("http://example.test/").put(new OneShotBody(!duplex, duplex)).build();
      try (Response r = c.newCall(request).execute()) {
        assertThat(r.code()).isEqualTo(503);
      }
      assertThat(s.attempts()).isEqualTo(1);
    }
  }

  // --- deadline -----------------------------------------------------------------------

  @Test
  void eachAttemptsTimeoutsShrinkToTheTimeLeft() throws IOException {
    script.fail(new SocketTimeoutException("timeout")).status(200);
    OkHttpClient c =
        new OkHttpClient.Builder()
            .connectTimeout(Duration.ofSeconds(10))
            .readTimeout(Duration.ZERO) // "none" must become the time left, never stay unbounded
            .writeTimeout(Duration.ofMillis(500))
            .addInterceptor(retry().jitter(Jitter.NONE).baseDelay(Duration.ofMillis(400)).deadline(Duration.ofSeconds(2)).build())
            .addInterceptor(script)
            .build();
    c.newCall(get()).execute().close();
    List<Script.Seen> seen = script.seen();
    assertThat(seen.get(0)).isEqualTo(new Script.Seen(seen.get(0).request(), 2000, 2000, 500));
    assertThat(seen.get(1)).isEqualTo(new Script.Seen(seen.get(1).request(), 1600, 1600, 500));
  }

  @Test
  void perRequestOverridesReplaceDeadlineAndRetryCount() throws IOException {
    script.status(503).status(503).status(200);
    RetryOverrides overrides = RetryOverrides.builder().maxRetries(1).deadline(Duration.ofMillis(700)).build();
    try (Response r = client(retry().maxRetries(5)).newCall(get().newBuilder().tag(RetryOverrides.class, overrides).build()).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(script.attempts()).isEqualTo(2);
    assertThat(script.seen().get(0).readTimeoutMillis()).isEqualTo(700);
  }

  @Test
  void callTimeoutBoundsTheDeadlineWhenItIsShorter() throws IOException {
    script.status(200);
    OkHttpClient c =
        new OkHttpClient.Builder()
            .callTimeout(Duration.ofMillis(1500))
            .addInterceptor(retry().deadline(Duration.ofSeconds(30)).build())
            .addInterceptor(script)
            .build();
    c.newCall(get()).execute().close();
    assertThat(script.seen().get(0).readTimeoutMillis()).isEqualTo(1500);
  }

  @Test
  void aWaitThatWouldEndPastTheDeadlineIsNotStarted() {
    IOException timeout = new SocketTimeoutException("timeout");
    script.fail(new SocketTimeoutException("first")).fail(timeout).status(200);
    RetryInterceptor.Builder b = retry().jitter(Jitter.NONE).baseDelay(Duration.ofMillis(600)).deadline(Duration.ofSeconds(1));
    assertThatThrownBy(() -> client(b).newCall(get()).execute()).isSameAs(timeout);
    assertThat(time.sleepMillis()).containsExactly(600L); // the second wait (1200 ms) would overrun
    assertThat(events.log).contains("gaveUp 2 DEADLINE_EXCEEDED SocketTimeoutException: timeout");
  }

  @Test
  void noDeadlineLeavesTimeoutsAlone() throws IOException {
    script.status(200);
    OkHttpClient c =
        new OkHttpClient.Builder().readTimeout(Duration.ZERO).addInterceptor(retry().build()).addInterceptor(script).build();
    c.newCall(get()).execute().close();
    assertThat(script.seen().get(0).readTimeoutMillis()).isZero();
  }

  @Test
  void decorrelatedJitterDoesNotGrowFromARetryAfter() throws IOException {
    script.status(503, "Retry-After", "50").status(503).status(200);
    RetryInterceptor.Builder b = retry().jitter(Jitter.DECORRELATED).baseDelay(Duration.ofMillis(100))
        .maxDelay(Duration.ofSeconds(60)).retryAfterSpread(0);
    client(b).newCall(get()).execute().close();
    assertThat(time.sleeps()).hasSize(2);
    assertThat(time.sleeps().get(0)).isEqualTo(Duration.ofSeconds(50));
    // drawn from [base, 3 × base], not from [base, 3 × 50 s]
    assertThat(time.sleeps().get(1)).isBetween(Duration.ofMillis(100), Duration.ofMillis(300));
  }

  @Test
  void aThrowingResponsePredicateReachesTheCallerAndClosesTheResponse() {
    script.status(500);
    RetryInterceptor.Builder b = retry().retryOnResponse(r -> {
      throw new IllegalStateException("predicate bug");
    });
    assertThatThrownBy(() -> client(b).newCall(get()).execute())
        .isInstanceOf(IOException.class)
        .hasMessageContaining("retryOnResponse predicate threw")
        .hasRootCauseMessage("predicate bug");
    assertThat(((Script.TrackingBody) script.returned().get(0).body()).closed).isTrue();
  }

  @Test
  void aThrowingPredicateEndsTheCallWithAnIOExceptionCarryingItAsCauseAndEarlierFailuresAsSuppressed() {
    // As docs/semantics.md says: the predicate's exception is the cause, never thrown as it is.
    IOException timeout = new SocketTimeoutException("timeout");
    IOException odd = new IOException("odd"); // not retried by default, so the predicate is asked
    script.fail(timeout).fail(odd);
    RetryInterceptor.Builder onException = retry().retryOnException(e -> {
      throw new IllegalStateException("predicate bug");
    });
    assertThatThrownBy(() -> client(onException).newCall(get()).execute())
        .isExactlyInstanceOf(IOException.class)
        .hasMessage("okretry: the retryOnException predicate threw")
        .hasCauseExactlyInstanceOf(IllegalStateException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(odd, timeout));

    IOException refused = new ConnectException("refused");
    script.fail(refused).status(500);
    RetryInterceptor.Builder onResponse = retry().retryOnResponse(r -> {
      throw new IllegalStateException("predicate bug");
    });
    assertThatThrownBy(() -> client(onResponse).newCall(get()).execute())
        .isExactlyInstanceOf(IOException.class)
        .hasMessage("okretry: the retryOnResponse predicate threw")
        .hasCauseExactlyInstanceOf(IllegalStateException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(refused));
    assertThat(events.log).filteredOn(line -> line.startsWith("gaveUp")).hasSize(2);
  }

  @Test
  void anInterruptArrivingWithARetryableResponseEndsTheCallWithoutSpendingTheBudget() throws IOException {
    Script interrupting = new Script() {
      @Override
      public synchronized Response intercept(Chain chain) throws IOException {
        Thread.currentThread().interrupt();
        return super.intercept(chain);
      }
    };
    interrupting.status(503).status(200);
    RetryBudget budget = RetryBudget.builder().minRetriesPerSecond(1).build();
    OkHttpClient c = new OkHttpClient.Builder().addInterceptor(retry().retryBudget(budget).build()).addInterceptor(interrupting).build();
    try {
      assertThatThrownBy(() -> c.newCall(get()).execute()).isInstanceOf(InterruptedIOException.class);
      assertThat(Thread.currentThread().isInterrupted()).as("flag kept").isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(((Script.TrackingBody) interrupting.returned().get(0).body()).closed).isTrue();
    assertThat(events.log).containsExactly("start 1", "gaveUp 1 INTERRUPTED HTTP 503");
    assertThat(budget.tryWithdraw(time.nanoTime())).as("the reserve token is still there").isTrue();
  }

  @Test
  void aHostileRetryAfterClosesTheOriginNoLongerThanMaxRetryAfter() throws IOException {
    script.status(503, "Retry-After", "99999999").status(200);
    OkHttpClient c = client(retry().originWideRetryAfter(true).maxRetryAfter(Duration.ofSeconds(2)));
    c.newCall(get()).execute().close(); // too long: returned at once, but closes the origin
    assertThat(time.sleeps()).isEmpty();
    try (Response r = c.newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200); // waited out the 2 s the origin stays closed, not 99999999 s
    }
    assertThat(time.sleeps()).singleElement().isEqualTo(Duration.ofSeconds(2));
    assertThat(script.attempts()).isEqualTo(2);
  }

  // --- listener -----------------------------------------------------------------------------

  @Test
  void aThrowingListenerNeverChangesTheOutcome() throws IOException {
    script.status(503).status(200);
    IllegalStateException bug = new IllegalStateException("listener bug");
    RetryListener bad =
        new RetryListener() {
          @Override
          public void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
            throw bug;
          }
        };
    try (Response r = client(retry().listener(bad)).newCall(get()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    // Logged once as a warning naming the method, with the exception (captured, not printed).
    assertThat(log.warnings()).singleElement().satisfies(e -> {
      assertThat(e.message()).contains("RetryListener.onRetryScheduled");
      assertThat(e.thrown()).isSameAs(bug);
    });
  }

  /** Records listener events as short strings. */
  static final class Recorder implements RetryListener {
    final List<String> log = new ArrayList<>();

    @Override
    public synchronized void onAttemptStarted(Request request, int attempt) {
      log.add("start " + attempt);
    }

    @Override
    public synchronized void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
      log.add("retry " + attempt + " " + reason);
    }

    @Override
    public synchronized void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
      log.add("gaveUp " + attempts + " " + reason + " " + lastFailure);
    }

    @Override
    public synchronized void onSucceeded(Request request, Response response, int attempts) {
      log.add("succeeded " + attempts + " HTTP " + response.code());
    }
  }

  static final class OneShotBody extends RequestBody {
    private final boolean oneShot;
    private final boolean duplex;

    OneShotBody(boolean oneShot, boolean duplex) {
      this.oneShot = oneShot;
      this.duplex = duplex;
    }

    @Override
    public MediaType contentType() {
      return null;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      sink.writeUtf8("x");
    }

    @Override
    public boolean isOneShot() {
      return oneShot;
    }

    @Override
    public boolean isDuplex() {
      return duplex;
    }
  }

}
