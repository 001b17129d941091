package io.github.okretry;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import okhttp3.Headers;
import okhttp3.Interceptor;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * An interceptor placed after {@link RetryInterceptor} that plays scripted outcomes instead of
 * touching the network, and records each request it sees (one per attempt) with its timeouts.
 */
class Script implements Interceptor {
  record Seen(Request request, int connectTimeoutMillis, int readTimeoutMillis, int writeTimeoutMillis) {}

  private final Deque<Object> outcomes = new ArrayDeque<>();
  private final List<Seen> seen = new ArrayList<>();
  private final List<Response> returned = new ArrayList<>();

  Script status(int code, String... headerPairs) {
    outcomes.add(Headers.of(headerPairs).newBuilder().add(":status", Integer.toString(code)).build());
    return this;
  }

  Script fail(IOException e) {
    outcomes.add(e);
    return this;
  }

  synchronized List<Seen> seen() {
    return List.copyOf(seen);
  }

  int attempts() {
    return seen().size();
  }

  /** Responses this script returned, to check that retried ones were closed. */
  List<Response> returned() {
    return returned;
  }

  @Override
  public synchronized Response intercept(Chain chain) throws IOException {
    seen.add(new Seen(chain.request(), chain.connectTimeoutMillis(), chain.readTimeoutMillis(), chain.writeTimeoutMillis()));
    Object next = outcomes.poll();
    if (next == null) throw new AssertionError("script exhausted at attempt " + seen.size());
    if (next instanceof IOException e) throw e;
    Headers headers = (Headers) next;
    int code = Integer.parseInt(headers.get(":status"));
    Response response =
        new Response.Builder()
            .request(chain.request())
            .protocol(Protocol.HTTP_1_1)
            .code(code)
            .message("scripted")
            .headers(headers.newBuilder().removeAll(":status").build())
            .body(new TrackingBody("attempt " + seen.size()))
            .build();
    returned.add(response);
    return response;
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
