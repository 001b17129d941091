package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A follow-up built from the request of a factory's response ({@code
 * response.request().newBuilder().url(next)}, as pagination and redirects by hand do) is a call
 * like any other, retried by whichever driver runs it (issue 36, item 2: the factory's attempt rode
 * on its request as a tag, which {@code newBuilder()} copied, and a layer that met it sent the
 * follow-up once). The response the caller holds keeps no attempt or logical call alive.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class FollowUpRequestTest {

  /** Who runs the follow-up. */
  enum Via {
    FACTORY_EXECUTE,
    FACTORY_ENQUEUE,
    INTERCEPTOR_EXECUTE,
    INTERCEPTOR_ENQUEUE
  }

  MockWebServer server;
  final java.util.concurrent.atomic.AtomicInteger nextRequests =
      new java.util.concurrent.atomic.AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    server = new MockWebServer();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if (request.getUrl().encodedPath().equals("/first")) {
              return new MockResponse.Builder().body("first").build();
            }
            // /next: 503, 503, then 200
            int n = nextRequests.incrementAndGet();
            return n <= 2
                ? new MockResponse.Builder().code(503).body("busy").build()
                : new MockResponse.Builder().body("next").build();
          }
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static RetryPolicy policy() {
    return RetryPolicy.builder()
        .retryBudget(RetryBudget.unlimited())
        .baseDelay(Duration.ofMillis(1))
        .maxDelay(Duration.ofMillis(1))
        .build();
  }

  /** Runs {@code request} by enqueue() and returns the response (the body left to the caller). */
  static Response enqueued(Call call) throws Exception {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response r) {
            outcome.complete(r);
          }

          @Override
          public void onFailure(Call c, IOException e) {
            outcome.complete(e);
          }
        });
    Object o = outcome.get(10, TimeUnit.SECONDS);
    if (o instanceof IOException e) throw e;
    return (Response) o;
  }

  @ParameterizedTest
  @EnumSource(Via.class)
  void aFollowUpBuiltFromAnEnqueuedCallsResponseIsRetried(Via via) throws Exception {
    OkHttpClient client = LeakCheck.track(new OkHttpClient());
    OkHttpClient intercepted =
        LeakCheck.track(
            RetryInterceptor.create(policy()).install(new OkHttpClient.Builder()).build());
    try (RetryingCallFactory calls = RetryingCallFactory.create(client, policy())) {
      Request followUp;
      try (Response first =
          enqueued(calls.newCall(new Request.Builder().url(server.url("/first")).build()))) {
        assertThat(first.body().string()).isEqualTo("first");
        assertThat(first.request().tag(Attempt.class))
            .as("nothing of okretry's on the caller's request")
            .isNull();
        followUp = first.request().newBuilder().url(server.url("/next")).build();
      }

      Call call =
          switch (via) {
            case FACTORY_EXECUTE, FACTORY_ENQUEUE -> calls.newCall(followUp);
            case INTERCEPTOR_EXECUTE, INTERCEPTOR_ENQUEUE -> intercepted.newCall(followUp);
          };
      boolean execute = via == Via.FACTORY_EXECUTE || via == Via.INTERCEPTOR_EXECUTE;
      try (Response next = execute ? call.execute() : enqueued(call)) {
        assertThat(next.code() + " " + next.body().string()).isEqualTo("200 next");
      }
      assertThat(nextRequests.get()).as("503, 503, 200").isEqualTo(3);
    }
  }

  /** The first attempt's failure, which only the logical call holds, goes once the call is over. */
  @Test
  void aResponseTheCallerHoldsKeepsNoLogicalCallAlive() throws Exception {
    AtomicReference<WeakReference<IOException>> firstFailure = new AtomicReference<>();
    Interceptor failsOnce =
        chain -> {
          if (firstFailure.get() == null) {
            IOException e = new SocketTimeoutException("attempt 1");
            firstFailure.set(new WeakReference<>(e));
            throw e;
          }
          return chain.proceed(chain.request());
        };
    OkHttpClient client =
        LeakCheck.track(new OkHttpClient.Builder().addInterceptor(failsOnce).build());
    try (RetryingCallFactory calls = RetryingCallFactory.create(client, policy())) {
      Response held =
          enqueued(calls.newCall(new Request.Builder().url(server.url("/first")).build()));
      try (held) {
        assertThat(held.body().string()).isEqualTo("first");
        for (int i = 0; i < 50 && firstFailure.get().get() != null; i++) {
          System.gc();
          Thread.sleep(20);
        }
        assertThat(firstFailure.get().get()).as("collected while the response is held").isNull();
        assertThat(held.code()).isEqualTo(200);
      }
    }
  }
}
