package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * okretry's own deadline in real time, on both paths ({@code execute()} through the interceptor,
 * {@code enqueue()} through the factory): a 1 s deadline ends the call after about 1 s although the
 * client's read timeout is 10 s, against a server that never answers and against a peer that
 * trickles a byte every 100 ms so that no read ever times out. Bounds are wide for a slow, noisy
 * 2-core machine. The rules on fake time: {@link DeadlineTest}; OkHttp's call timeout: {@link
 * CallTimeoutTest}.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class DeadlineIntegrationTest {

  static OkHttpClient client() {
    return LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build());
  }

  static RetryInterceptor retry() {
    return RetryInterceptor.create(RetryPolicy.builder().deadline(Duration.ofSeconds(1)).build());
  }

  /**
   * Runs {@code request} on {@code path}; returns what the caller got (a body or an exception), and
   * the time taken.
   */
  static Object outcome(String path, OkHttpClient client, Request request, long[] elapsedMs)
      throws Exception {
    long start = System.nanoTime();
    Object result;
    if (path.equals("execute")) {
      OkHttpClient retrying = LeakCheck.track(client.newBuilder().addInterceptor(retry()).build());
      try (Response r = retrying.newCall(request).execute()) {
        result = r.body().string();
      } catch (IOException e) {
        result = e;
      }
    } else {
      try (RetryingCallFactory calls = RetryingCallFactory.create(client, retry().policy())) {
        RetryingCallFactoryTest.Outcome done = new RetryingCallFactoryTest.Outcome();
        calls.newCall(request).enqueue(done);
        result = done.result.get(10, TimeUnit.SECONDS);
      }
    }
    elapsedMs[0] = (System.nanoTime() - start) / 1_000_000;
    return result;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "enqueue"})
  void aStalledServerWithALongReadTimeoutEndsAtTheDeadline(String path) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              return new MockResponse.Builder().headersDelay(1, TimeUnit.HOURS).build();
            }
          });
      server.start();
      long[] ms = {0};
      Object outcome =
          outcome(path, client(), new Request.Builder().url(server.url("/slow")).build(), ms);
      Diagnostics.println(
          path
              + ", stalled server, 10 s read timeout, 1 s deadline: call ended after "
              + ms[0]
              + " ms");
      assertThat(outcome).isInstanceOf(SocketTimeoutException.class);
      assertThat(ms[0]).isBetween(900L, 2_500L);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "enqueue"})
  void theDeadlineAlsoEndsAnAttemptWhosePeerTricklesBytes(String path) throws Exception {
    try (Trickler trickler = new Trickler()) {
      long[] ms = {0};
      Object outcome =
          outcome(path, client(), new Request.Builder().url(trickler.url()).build(), ms);
      Diagnostics.println(
          path
              + ", peer trickling a byte every 100 ms, 1 s deadline: call ended after "
              + ms[0]
              + " ms");
      assertThat(outcome).isInstanceOf(SocketTimeoutException.class);
      if (path.equals("execute")) assertThat((Throwable) outcome).hasMessageContaining("deadline");
      assertThat(ms[0]).isBetween(900L, 2_500L);
    }
  }

  /**
   * The factory shrinks each asynchronous attempt's timeouts to the time left, as the interceptor
   * does.
   */
  @Test
  void eachAsynchronousAttemptsTimeoutsShrinkToTheTimeLeft() throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      List<Integer> readTimeouts = new CopyOnWriteArrayList<>();
      OkHttpClient seeing =
          LeakCheck.track(
              client()
                  .newBuilder()
                  .addNetworkInterceptor(
                      chain -> {
                        readTimeouts.add(chain.readTimeoutMillis());
                        return chain.proceed(chain.request());
                      })
                  .build());
      try (RetryingCallFactory calls = RetryingCallFactory.create(seeing, retry().policy())) {
        RetryingCallFactoryTest.Outcome done = new RetryingCallFactoryTest.Outcome();
        calls.newCall(new Request.Builder().url(server.url("/")).build()).enqueue(done);
        assertThat(done.result.get(10, TimeUnit.SECONDS)).isEqualTo("200 ok");
      }
      assertThat(readTimeouts)
          .singleElement()
          .satisfies(ms -> assertThat(ms).as("10 s cut to the 1 s deadline").isBetween(1, 1_000));
    }
  }

  /**
   * Issue 22.4: a response decided before the deadline reaches the caller, however long the user
   * code that runs on it (a predicate, a listener) takes, and the events say what the caller got. A
   * 200 arrives ~300 ms into a 1 s deadline; the hook then takes 1 s; the caller reads all 3.2 MB
   * of its body.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "execute retryOnResponse",
        "execute onSucceeded",
        "enqueue retryOnResponse",
        "enqueue onSucceeded",
        "factory execute onSucceeded"
      })
  void aResponseDecidedBeforeTheDeadlineReachesTheCallerWhileUserCodeRuns(String path)
      throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              return new MockResponse.Builder()
                  .headersDelay(300, TimeUnit.MILLISECONDS)
                  .body(BIG_BODY)
                  .build();
            }
          });
      server.start();
      List<String> events = new CopyOnWriteArrayList<>();
      RetryPolicy.Builder policy = RetryPolicy.builder().deadline(Duration.ofSeconds(1));
      if (path.endsWith("retryOnResponse")) {
        policy.retryOnResponse(
            r -> {
              sleep(1_000);
              return false;
            });
      }
      policy.listener(
          new RetryListener() {
            @Override
            public void onSucceeded(Request request, Response response, int attempts) {
              events.add("succeeded HTTP " + response.code());
              if (path.endsWith("onSucceeded")) sleep(1_000);
            }

            @Override
            public void onGaveUp(
                Request request, int attempts, GiveUpReason reason, String lastFailure) {
              events.add("gave up " + reason);
            }
          });
      Request request = new Request.Builder().url(server.url("/")).build();
      OkHttpClient client = client();
      Object got;
      if (path.startsWith("enqueue")) {
        try (RetryingCallFactory calls = RetryingCallFactory.create(client, policy.build())) {
          RetryingCallFactoryTest.Outcome done = new RetryingCallFactoryTest.Outcome();
          calls.newCall(request).enqueue(done);
          got = done.result.get(10, TimeUnit.SECONDS);
        }
      } else {
        RetryingCallFactory calls =
            path.startsWith("factory") ? RetryingCallFactory.create(client, policy.build()) : null;
        Call call =
            calls != null
                ? calls.newCall(request)
                : LeakCheck.track(
                        client
                            .newBuilder()
                            .addInterceptor(RetryInterceptor.create(policy.build()))
                            .build())
                    .newCall(request);
        try (Response r = call.execute()) {
          got = r.code() + " " + r.body().string();
        } catch (IOException e) {
          got = e;
        } finally {
          if (calls != null) calls.close();
        }
      }
      assertThat(got).as(path).isEqualTo("200 " + BIG_BODY);
      assertThat(events).containsExactly("succeeded HTTP 200");
    }
  }

  /** Larger than the socket buffers, so a cancel under the caller is seen even by a body read. */
  static final String BIG_BODY = "decided in time ".repeat(200_000);

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
