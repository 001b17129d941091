package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The interceptor's own branches, driven through a real OkHttpClient whose "server" is a stub
 * interceptor behind okretry (no sockets, FakeTime): overrides, keys, one-shot bodies, listener
 * failures, suppressed exceptions, timeouts shrunk to the deadline, and the public value types.
 */
@ExtendWith(LeakCheck.class)
class ReliabilityInterceptorUnitsTest {
  @RegisterExtension final LogCapture log = LogCapture.okretry();


  /** Answers each attempt with the next scripted outcome and records what it was sent. */
  static final class Script implements Interceptor {
    final Deque<Object> outcomes = new ConcurrentLinkedDeque<>();
    final List<Request> seen = new ArrayList<>();
    final List<int[]> timeouts = new ArrayList<>();

    Script then(Object outcome) {
      outcomes.add(outcome);
      return this;
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
      seen.add(chain.request());
      timeouts.add(new int[] {chain.connectTimeoutMillis(), chain.readTimeoutMillis(), chain.writeTimeoutMillis()});
      Object next = outcomes.isEmpty() ? 200 : outcomes.poll();
      if (next instanceof IOException e) throw e;
      String[] parts = next.toString().split(" ", 2);
      Response.Builder b = new Response.Builder().request(chain.request()).protocol(Protocol.HTTP_1_1)
          .code(Integer.parseInt(parts[0])).message("m");
      if (parts.length > 1) b.header("Retry-After", parts[1]);
      return b.build();
    }
  }

  final FakeTime time = new FakeTime();

  RetryInterceptor.Builder retry() {
    return RetryInterceptor.builder().timeSource(time).keyGenerator(() -> "k1").random(() -> 0L);
  }

  OkHttpClient client(RetryInterceptor retry, Script script) {
    return LeakCheck.track(new OkHttpClient.Builder().addInterceptor(retry).addInterceptor(script).build());
  }

  static Request get() {
    return new Request.Builder().url("http://example.invalid/").build();
  }

  static Request post(String method) {
    return new Request.Builder().url("http://example.invalid/").method(method, RequestBody.create("x", MediaType.get("text/plain"))).build();
  }

  int code(OkHttpClient client, Request request) throws IOException {
    try (Response r = client.newCall(request).execute()) {
      return r.code();
    }
  }

  @Test
  void perRequestOverrides() throws Exception {
    Script script = new Script().then(503).then(503).then(503);
    OkHttpClient client = client(retry().jitter(Jitter.NONE).maxRetries(5).build(), script);
    Request once = get().newBuilder().tag(RetryOverrides.class, RetryOverrides.noRetries()).build();
    assertThat(code(client, once)).isEqualTo(503);
    assertThat(script.seen).hasSize(1);
    // A per-request deadline replaces the interceptor's: base delay 200 ms does not fit in 150 ms.
    Request tight = get().newBuilder().tag(RetryOverrides.class, RetryOverrides.builder().deadline(Duration.ofMillis(150)).build()).build();
    assertThat(code(client, tight)).isEqualTo(503);
    assertThat(script.seen).hasSize(2);
    assertThat(time.sleeps()).isEmpty();
  }

  @Test
  void timeoutsShrinkToTheTimeLeft() throws Exception {
    Script script = new Script().then(503).then(200);
    OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().jitter(Jitter.NONE).deadline(Duration.ofMillis(1000)).build())
        .addInterceptor(script)
        .connectTimeout(Duration.ofMillis(800)).readTimeout(Duration.ZERO).writeTimeout(Duration.ofMillis(5000))
        .build());
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(script.timeouts.get(0)).containsExactly(800, 1000, 1000); // 0 = none becomes the time left
    assertThat(script.timeouts.get(1)).containsExactly(800, 800, 800); // 200 ms slept
    assertThat(time.sleepMillis()).containsExactly(200L);
  }

  @Test
  void callTimeoutIsADeadlineToo() throws Exception {
    Script script = new Script().then("503 5");
    OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().build()).addInterceptor(script).callTimeout(Duration.ofSeconds(2)).build());
    assertThat(code(client, get())).isEqualTo(503); // 5 s does not fit in 2 s: returned at once
    assertThat(time.sleeps()).isEmpty();
    assertThat(AttemptSettings.shrink(0, 5)).isEqualTo(5);
    assertThat(AttemptSettings.shrink(10, 5)).isEqualTo(5);
    assertThat(AttemptSettings.shrink(3, 5)).isEqualTo(3);
  }

  @Test
  void keysAreStampedOnceAndAsConfigured() throws Exception {
    Script script = new Script();
    OkHttpClient client = client(retry().build(), script);
    code(client, post("POST"));
    code(client, post("PATCH"));
    code(client, post("PUT"));
    code(client, get().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.generate()).build());
    code(client, post("POST").newBuilder().tag(IdempotencyKey.class, IdempotencyKey.of("mine")).build());
    code(client, post("POST").newBuilder().header("Idempotency-Key", "header-wins").tag(IdempotencyKey.class, IdempotencyKey.of("tag")).build());
    code(client, post("POST").newBuilder().tag(IdempotencyKey.class, IdempotencyKey.none()).build());
    assertThat(script.seen).extracting(r -> r.header("Idempotency-Key"))
        .containsExactly("k1", "k1", null, "k1", "mine", "header-wins", null);

    Script quoted = new Script();
    OkHttpClient q = client(retry().keyGenerator(() -> "a\"b\\c").quoteIdempotencyKey(true).idempotencyKeyHeader("X-Key").build(), quoted);
    code(q, post("POST"));
    assertThat(quoted.seen.get(0).header("X-Key")).isEqualTo("\"a\\\"b\\\\c\"");

    Script off = new Script();
    code(client(retry().generateIdempotencyKeys(false).build(), off), post("POST"));
    assertThat(off.seen.get(0).header("Idempotency-Key")).isNull();
  }

  @Test
  void keylessPostRetriedOnlyOnProof() throws Exception {
    Script script = new Script().then(500).then(503).then(200);
    OkHttpClient client = client(retry().retryOnStatus(500).generateIdempotencyKeys(false).build(), script);
    assertThat(code(client, post("POST"))).isEqualTo(500); // 500 proves nothing
    assertThat(code(client, post("POST"))).isEqualTo(200); // 503 does
    assertThat(script.seen).hasSize(3);
    Script keyed = new Script().then(500).then(200);
    assertThat(code(client(retry().retryOnStatus(500).build(), keyed), post("POST"))).isEqualTo(200);
  }

  @Test
  void oneShotBodiesAreNeverRepeated() throws Exception {
    Script script = new Script().then(503).then(200);
    OkHttpClient client = client(retry().build(), script);
    RequestBody oneShot = new RequestBody() {
      @Override public MediaType contentType() { return null; }
      @Override public void writeTo(BufferedSink sink) {}
      @Override public boolean isOneShot() { return true; }
    };
    Request put = new Request.Builder().url("http://example.invalid/").put(oneShot).build();
    assertThat(code(client, put)).isEqualTo(503);
    assertThat(script.seen).hasSize(1);
  }

  @Test
  void listenerFailuresChangeNothingAndEventsAddUp() throws Exception {
    List<String> events = new ArrayList<>();
    IllegalStateException bug = new IllegalStateException("listener bug");
    RetryListener throwing = new RetryListener() {
      @Override public void onAttemptStarted(Request r, int a) { events.add("start " + a); throw bug; }
      @Override public void onRetryScheduled(Request r, int a, String why, Duration d) { events.add("retry " + a + " " + why + " " + d.toMillis()); throw bug; }
      @Override public void onGaveUp(Request r, int a, GiveUpReason why, String last) { events.add("gaveUp " + a + " " + why + " " + last); throw bug; }
      @Override public void onSucceeded(Request r, Response resp, int a) { events.add("ok " + a); throw bug; }
    };
    Script script = new Script().then(new SocketTimeoutException("timeout")).then(200).then(503).then(404);
    OkHttpClient client = client(retry().jitter(Jitter.NONE).maxRetries(1).listener(throwing).build(), script);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(code(client, get())).isEqualTo(404); // not retryable, so a "success" for okretry
    assertThat(events).containsExactly(
        "start 1", "retry 1 SocketTimeoutException: timeout 200", "start 2", "ok 2",
        "start 1", "retry 1 HTTP 503 200", "start 2", "ok 2");
    Script failing = new Script().then(503).then(503);
    events.clear();
    assertThat(code(client(retry().jitter(Jitter.NONE).maxRetries(1).listener(throwing).build(), failing), get())).isEqualTo(503);
    assertThat(events).endsWith("gaveUp 2 RETRIES_EXHAUSTED HTTP 503");
    // Each throw is logged once, as a warning naming the listener method, with the exception.
    List<String> threw = new ArrayList<>();
    for (LogCapture.Event e : log.warnings()) {
      assertThat(e.thrown()).isSameAs(bug);
      Matcher m = Pattern.compile("RetryListener\\.(\\w+) threw").matcher(e.message());
      threw.add(m.find() ? m.group(1) : e.message());
    }
    assertThat(threw).containsExactly(
        "onAttemptStarted", "onRetryScheduled", "onAttemptStarted", "onSucceeded",
        "onAttemptStarted", "onRetryScheduled", "onAttemptStarted", "onSucceeded",
        "onAttemptStarted", "onRetryScheduled", "onAttemptStarted", "onGaveUp");
  }

  @Test
  void earlierFailuresRideAlongAsSuppressed() {
    IOException first = new SocketTimeoutException("one");
    IOException second = new java.net.SocketException("two");
    IOException third = new java.io.EOFException();
    Script script = new Script().then(first).then(second).then(third);
    OkHttpClient client = client(retry().maxRetries(2).build(), script);
    assertThatThrownBy(() -> client.newCall(get()).execute())
        .isSameAs(third)
        .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(first, second));
    assertThat(Events.describe(null, third)).isEqualTo("EOFException");
    assertThat(Events.describe(null, first)).isEqualTo("SocketTimeoutException: one");
  }

  @Test
  void predicatesExtendWhatIsRetried() throws Exception {
    @SuppressWarnings("serial") class Custom extends IOException {}
    Script script = new Script().then(new Custom()).then(200).then(418).then(200);
    OkHttpClient client = client(retry().retryOnException(e -> e instanceof Custom)
        .retryOnResponse(r -> r.code() == 418).retryOnResponse(r -> false).build(), script);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(code(client, get())).isEqualTo(200);
    assertThat(script.seen).hasSize(4);
  }

  @Test
  void builderSnapshotsAndAccessors() {
    RetryInterceptor.Builder b = RetryInterceptor.builder().maxRetries(5).baseDelay(Duration.ofMillis(7))
        .maxDelay(Duration.ofSeconds(3)).multiplier(3).jitter(Jitter.EQUAL).deadline(Duration.ofSeconds(9))
        .maxRetryAfter(Duration.ofSeconds(4)).retryOnStatus(500).idempotencyKeyHeader("X-K");
    RetryInterceptor a = b.build();
    b.maxRetries(1).noDeadline().retryOnStatus(502);
    assertThat(a.maxRetries()).isEqualTo(5);
    assertThat(a.baseDelay()).isEqualTo(Duration.ofMillis(7));
    assertThat(a.maxDelay()).isEqualTo(Duration.ofSeconds(3));
    assertThat(a.multiplier()).isEqualTo(3);
    assertThat(a.jitter()).isEqualTo(Jitter.EQUAL);
    assertThat(a.deadline()).contains(Duration.ofSeconds(9));
    assertThat(a.maxRetryAfter()).isEqualTo(Duration.ofSeconds(4));
    assertThat(a.retryStatuses()).containsExactly(429, 500, 503);
    assertThat(a.idempotencyKeyHeader()).isEqualTo("X-K");
    RetryInterceptor copy = a.toBuilder().build();
    assertThat(copy.retryStatuses()).isEqualTo(a.retryStatuses());
    assertThat(copy.deadline()).isEqualTo(a.deadline());
    assertThat(b.build().deadline()).isEmpty();
    assertThat(RetryInterceptor.create().maxRetries()).isEqualTo(3);
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader("a b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader("a:b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().jitter(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().listener(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().retryOnResponse(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().retryOnException(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().baseDelay(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("baseDelay");
    assertThat(RetryInterceptor.builder().maxRetries(0).build().maxRetries()).isZero();
    assertThat(RetryInterceptor.builder().baseDelay(Duration.ofHours(24)).build().baseDelay()).isEqualTo(Duration.ofHours(24));
  }

  @Test
  void cancelAndInterruptEndTheCallWithoutAnotherAttempt() throws Exception {
    List<GiveUpReason> reasons = new ArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override public void onGaveUp(Request r, int a, GiveUpReason why, String last) { reasons.add(why); }
    };
    // Canceled while the attempt ran: not retried, whatever the failure.
    Interceptor cancelThenFail = chain -> {
      chain.call().cancel();
      throw new SocketTimeoutException("timeout");
    };
    OkHttpClient c1 = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().listener(listener).build()).addInterceptor(cancelThenFail).build());
    assertThatThrownBy(() -> c1.newCall(get()).execute()).isInstanceOf(SocketTimeoutException.class);
    // Interrupted while the attempt ran: not retried, and the flag stays set.
    Interceptor interruptThenFail = chain -> {
      Thread.currentThread().interrupt();
      throw new SocketTimeoutException("timeout");
    };
    OkHttpClient c2 = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().listener(listener).build()).addInterceptor(interruptThenFail).build());
    try {
      assertThatThrownBy(() -> c2.newCall(get()).execute()).isInstanceOf(SocketTimeoutException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    // Canceled during the wait: FakeTime's sleep sees it, like the real one.
    Interceptor cancelThen503 = chain -> {
      chain.call().cancel();
      return new Response.Builder().request(chain.request()).protocol(Protocol.HTTP_1_1).code(503).message("m").build();
    };
    OkHttpClient c3 = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().listener(listener).build()).addInterceptor(cancelThen503).build());
    assertThatThrownBy(() -> c3.newCall(get()).execute()).hasMessage("Canceled");
    // Interrupted during the wait.
    Interceptor interruptThen503 = chain -> {
      Thread.currentThread().interrupt();
      return new Response.Builder().request(chain.request()).protocol(Protocol.HTTP_1_1).code(503).message("m").build();
    };
    OkHttpClient c4 = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().listener(listener).build()).addInterceptor(interruptThen503).build());
    try {
      assertThatThrownBy(() -> c4.newCall(get()).execute()).isInstanceOf(java.io.InterruptedIOException.class);
    } finally {
      Thread.interrupted();
    }
    assertThat(reasons).containsExactly(GiveUpReason.CANCELED, GiveUpReason.INTERRUPTED, GiveUpReason.CANCELED, GiveUpReason.INTERRUPTED);
  }

  /**
   * A failure before any byte was written (here: a later application interceptor, say one that
   * fetches an auth token, throws) proves the server saw nothing, so even a keyless POST is retried.
   */
  @Test
  void keylessPostRetriedWhenNothingWasSent() throws Exception {
    Script script = new Script().then(new SocketTimeoutException("token service timed out")).then(200);
    OkHttpClient client = client(retry().generateIdempotencyKeys(false).build(), script);
    assertThat(code(client, post("POST"))).isEqualTo(200);
    assertThat(script.seen).hasSize(2);
    Script once = new Script().then(new SocketTimeoutException("token service timed out")).then(200);
    OkHttpClient noRetries = client(retry().generateIdempotencyKeys(false).maxRetries(0).build(), once);
    assertThatThrownBy(() -> noRetries.newCall(post("POST")).execute()).isInstanceOf(SocketTimeoutException.class);
  }

  @SuppressWarnings("unchecked")
  static <E extends Throwable> void sneakyThrow(Throwable t) throws E {
    throw (E) t;
  }

  /** What OkHttp's connect does on an interrupt: an undeclared InterruptedException, flag cleared. */
  @Test
  void undeclaredInterruptedExceptionBecomesInterruptedIOException() {
    List<String> events = new ArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override public void onGaveUp(Request r, int a, GiveUpReason why, String last) { events.add(why + " " + a); }
    };
    Interceptor connect = chain -> {
      sneakyThrow(new InterruptedException());
      return null;
    };
    OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder()
        .addInterceptor(retry().listener(listener).build()).addInterceptor(connect).build());
    try {
      assertThatThrownBy(() -> client.newCall(get()).execute())
          .isInstanceOf(java.io.InterruptedIOException.class)
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    assertThat(events).containsExactly("INTERRUPTED 1");
    Interceptor broken = chain -> {
      throw new IllegalStateException("a bug below");
    };
    OkHttpClient c2 = LeakCheck.track(new OkHttpClient.Builder().addInterceptor(retry().build()).addInterceptor(broken).build());
    assertThatThrownBy(() -> c2.newCall(get()).execute()).isInstanceOf(IllegalStateException.class).hasMessage("a bug below");
  }

  @Test
  void defaultsDrawRealKeysAndRealJitter() throws Exception {
    Script script = new Script();
    for (int i = 0; i < 10; i++) script.then(503);
    FakeTime t = new FakeTime();
    OkHttpClient client = client(RetryInterceptor.builder().timeSource(t).maxRetries(19).build(), script);
    assertThat(code(client, post("POST"))).isEqualTo(200);
    assertThat(script.seen.get(0).header("Idempotency-Key")).matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    assertThat(t.sleeps()).hasSize(10).anyMatch(d -> d.toNanos() > 0).doesNotHaveDuplicates();
  }

  @Test
  void valueTypes() {
    assertThat(IdempotencyKey.of("a").hashCode()).isNotEqualTo(IdempotencyKey.of("b").hashCode());
    assertThat(RetryOverrides.builder().maxRetries(0).build().maxRetries()).isEqualTo(0);
    assertThat(RetryOverrides.builder().maxRetries(1).build().hashCode()).isNotEqualTo(RetryOverrides.builder().maxRetries(2).build().hashCode());
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader("a\u007fb")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader(" ")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryInterceptor.builder().idempotencyKeyHeader("\"k")).isInstanceOf(IllegalArgumentException.class);
    assertThat(RetryInterceptor.builder().idempotencyKeyHeader("!~").build().idempotencyKeyHeader()).isEqualTo("!~");
    assertThat(IdempotencyKey.of("k")).isEqualTo(IdempotencyKey.of("k")).hasSameHashCodeAs(IdempotencyKey.of("k"))
        .isNotEqualTo(IdempotencyKey.of("j")).isNotEqualTo(IdempotencyKey.generate());
    assertThat(IdempotencyKey.of("secret").toString()).doesNotContain("secret");
    assertThat(IdempotencyKey.none()).hasToString("IdempotencyKey.none()");
    assertThat(IdempotencyKey.generate()).hasToString("IdempotencyKey.generate()");
    assertThat(IdempotencyKey.none().isNone()).isTrue();
    assertThat(IdempotencyKey.generate().isNone()).isFalse();
    assertThat(IdempotencyKey.of("k").isNone()).isFalse();
    assertThat(IdempotencyKey.generate().isGenerated()).isTrue();
    assertThat(IdempotencyKey.of("k").isGenerated()).isFalse();
    assertThat(IdempotencyKey.of("k").value()).isEqualTo("k");
    assertThat(IdempotencyKey.none().value()).isNull();
    assertThat(IdempotencyKey.of("!~")).isNotNull();
    assertThatThrownBy(() -> IdempotencyKey.of("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IdempotencyKey.of("a b")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("index 1: U+0020");
    assertThatThrownBy(() -> IdempotencyKey.of("a\u007f")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IdempotencyKey.of(null)).isInstanceOf(NullPointerException.class);

    RetryOverrides o = RetryOverrides.builder().maxRetries(2).deadline(Duration.ofSeconds(1)).build();
    assertThat(o.maxRetries()).isEqualTo(2);
    assertThat(o.deadlineNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
    assertThat(o).isEqualTo(RetryOverrides.builder().maxRetries(2).deadline(Duration.ofSeconds(1)).build())
        .hasSameHashCodeAs(RetryOverrides.builder().maxRetries(2).deadline(Duration.ofSeconds(1)).build())
        .isNotEqualTo(RetryOverrides.noRetries());
    assertThat(RetryOverrides.builder().build().maxRetries()).isNull();
    assertThat(RetryOverrides.builder().build().deadlineNanos()).isNull();
    assertThat(RetryOverrides.noRetries().maxRetries()).isEqualTo(0);
    assertThat(o.toString()).contains("maxRetries=2");
    assertThatThrownBy(() -> RetryOverrides.builder().maxRetries(-1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryOverrides.builder().deadline(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
  }
}
