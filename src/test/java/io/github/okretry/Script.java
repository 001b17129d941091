package io.github.okretry;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.IntFunction;
import okhttp3.Headers;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * The scripted "server" of the unit tests: an interceptor placed after {@link RetryInterceptor}
 * that plays one outcome per attempt instead of touching the network, and records each request it
 * sees (one per attempt) with its timeouts and each response it returns.
 *
 * <pre>{@code
 * Script script = new Script().status(503, "Retry-After", "2").fail(new SocketTimeoutException()).status(200);
 * try (Response r = script.client(retry).newCall(request).execute()) { ... }
 * assertThat(script.attempts()).isEqualTo(3);
 * }</pre>
 *
 * <p>Outcomes, one per attempt, in order: {@link #status} (a response with a body that remembers
 * whether it was closed), {@link #fail} (an {@code IOException}), {@link #raise} (any throwable,
 * even a checked one an interceptor may not declare), {@link #then} (computed when the attempt
 * comes). {@link #cancelingTheCall} and {@link #interruptingTheCaller} make the next attempt do
 * that first. After the scripted outcomes, {@link #thenAlways} answers every further attempt;
 * without it, an attempt past the end fails the test.
 */
final class Script implements Interceptor {

  /** One attempt as the script saw it: the request and the chain's timeouts. */
  record Seen(
      Request request, int connectTimeoutMillis, int readTimeoutMillis, int writeTimeoutMillis) {}

  /** What one attempt gets: a response, or a thrown exception. {@code attempt} counts from 1. */
  @FunctionalInterface
  interface Outcome {
    Response play(Chain chain, int attempt) throws IOException;
  }

  private record Step(Outcome outcome, boolean cancel, boolean interrupt) {}

  private final Deque<Step> steps = new ArrayDeque<>();
  private final List<Seen> seen = new ArrayList<>();
  private final List<Response> returned = new ArrayList<>();
  private Outcome always;
  private boolean cancelNext;
  private boolean interruptNext;

  /** Answers {@code code} with these header name/value pairs and the body "attempt n". */
  Script status(int code, String... headerPairs) {
    return then(response(code, Headers.of(headerPairs)));
  }

  /** Answers {@code code} with {@code headers} as they are (non-ASCII values included). */
  Script status(int code, Headers headers) {
    return then(response(code, headers));
  }

  Script fail(IOException e) {
    return then(
        (chain, attempt) -> {
          throw e;
        });
  }

  /**
   * Throws {@code t} as it is: a {@code RuntimeException} (a bug below okretry), or a checked
   * exception no interceptor may declare, as OkHttp's connect does with {@code
   * InterruptedException}.
   */
  Script raise(Throwable t) {
    return then((chain, attempt) -> sneakyThrow(t));
  }

  Script then(Outcome outcome) {
    steps.add(new Step(outcome, cancelNext, interruptNext));
    cancelNext = false;
    interruptNext = false;
    return this;
  }

  /** The next attempt cancels its call before it plays its outcome. */
  Script cancelingTheCall() {
    cancelNext = true;
    return this;
  }

  /** The next attempt interrupts the calling thread before it plays its outcome. */
  Script interruptingTheCaller() {
    interruptNext = true;
    return this;
  }

  /** Every attempt after the scripted ones answers {@code code}. */
  Script thenAlways(int code) {
    return thenAlways(response(code, Headers.of()));
  }

  /** Every attempt after the scripted ones fails with {@code failure.apply(attempt)}. */
  Script thenAlwaysFail(IntFunction<IOException> failure) {
    return thenAlways(
        (chain, attempt) -> {
          throw failure.apply(attempt);
        });
  }

  Script thenAlways(Outcome outcome) {
    always = outcome;
    return this;
  }

  /** A client that sends through {@code retry} and then this script. */
  OkHttpClient client(RetryInterceptor retry) {
    return LeakCheck.track(clientBuilder(retry).build());
  }

  /**
   * The same, to add timeouts first; build it through {@link LeakCheck#track} in a LeakCheck test.
   */
  OkHttpClient.Builder clientBuilder(RetryInterceptor retry) {
    return new OkHttpClient.Builder().addInterceptor(retry).addInterceptor(this);
  }

  /** A client that sends through an interceptor running {@code policy}, then this script. */
  OkHttpClient client(RetryPolicy policy) {
    return client(RetryInterceptor.create(policy));
  }

  /** {@link #clientBuilder(RetryInterceptor)} with an interceptor running {@code policy}. */
  OkHttpClient.Builder clientBuilder(RetryPolicy policy) {
    return clientBuilder(RetryInterceptor.create(policy));
  }

  synchronized List<Seen> seen() {
    return List.copyOf(seen);
  }

  /** The requests the attempts sent, in order. */
  synchronized List<Request> requests() {
    return seen.stream().map(Seen::request).toList();
  }

  synchronized int attempts() {
    return seen.size();
  }

  /** Responses this script returned, to check that retried ones were closed. */
  synchronized List<Response> returned() {
    return List.copyOf(returned);
  }

  /** Whether the body of the {@code n}-th response returned (from 1) was closed. */
  synchronized boolean closed(int n) {
    return ((TrackingBody) returned.get(n - 1).body()).closed;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Step step;
    int attempt;
    synchronized (this) {
      seen.add(
          new Seen(
              chain.request(),
              chain.connectTimeoutMillis(),
              chain.readTimeoutMillis(),
              chain.writeTimeoutMillis()));
      attempt = seen.size();
      step = steps.poll();
      if (step == null && always == null) {
        throw new AssertionError("script exhausted at attempt " + attempt);
      }
    }
    if (step != null && step.cancel) chain.call().cancel();
    if (step != null && step.interrupt) Thread.currentThread().interrupt();
    Response response = (step != null ? step.outcome : always).play(chain, attempt);
    synchronized (this) {
      returned.add(response);
    }
    return response;
  }

  static Outcome response(int code, Headers headers) {
    return (chain, attempt) ->
        new Response.Builder()
            .request(chain.request())
            .protocol(Protocol.HTTP_1_1)
            .code(code)
            .message("scripted")
            .headers(headers)
            .body(new TrackingBody("attempt " + attempt))
            .build();
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> Response sneakyThrow(Throwable t) throws E {
    throw (E) t;
  }

  /** A body that remembers whether it was closed. */
  static final class TrackingBody extends ResponseBody {
    private final okio.Buffer buffer;
    volatile boolean closed;

    TrackingBody(String text) {
      this.buffer = new okio.Buffer().writeUtf8(text);
    }

    @Override
    public okhttp3.MediaType contentType() {
      return null;
    }

    @Override
    public long contentLength() {
      return buffer.size();
    }

    @Override
    public okio.BufferedSource source() {
      return buffer;
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
