package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 29's first table, as a new user meets it: a brand-new client with every default (the
 * README's quick start: {@code maxRetries(3)}, a 10 s deadline), real OkHttp calls to a real
 * MockWebServer, through the interceptor and through {@link RetryingCallFactory}. The waits are
 * real but scaled to milliseconds; {@code BudgetRulesTest} asserts the 1, 2, 3, 3 s on fake time.
 */
@Tag("integration")
class RetryByDefaultIntegrationTest {

  MockWebServer server;
  final OkHttpClient base = new OkHttpClient.Builder().readTimeout(Duration.ofMillis(300)).build();
  final List<Long> delaysMillis = Collections.synchronizedList(new ArrayList<>());
  final RetryListener delays =
      new RetryListener() {
        @Override
        public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
          delaysMillis.add(TimeUnit.NANOSECONDS.toMillis(delayNanos));
        }
      };

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() throws IOException {
    server.close();
    base.dispatcher().executorService().shutdown();
    base.connectionPool().evictAll();
  }

  /**
   * Calls with {@code policy}: the interceptor's client, or a factory over the same base client.
   */
  Call.Factory client(boolean factory, RetryPolicy.Builder policy) {
    RetryPolicy p = policy.listener(delays).build();
    return factory
        ? RetryingCallFactory.create(base, p)
        : RetryInterceptor.create(p).install(base.newBuilder()).build();
  }

  static RetryPolicy.Builder quickStart() {
    return RetryPolicy.builder().maxRetries(3).deadline(10, TimeUnit.SECONDS);
  }

  int get(Call.Factory client) throws IOException {
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      r.body().string();
      return r.code();
    }
  }

  @ParameterizedTest(name = "factory: {0}")
  @ValueSource(booleans = {false, true})
  void failsTwiceThenSucceeds(boolean factory) throws IOException {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(200).body("ok").build());
    assertThat(get(client(factory, quickStart()))).isEqualTo(200);
    assertThat(server.getRequestCount()).isEqualTo(3);
    assertThat(delaysMillis).hasSize(2);
  }

  @ParameterizedTest(name = "factory: {0}")
  @ValueSource(booleans = {false, true})
  void aFirstAttemptThatTimesOutIsTriedAgain(boolean factory) throws IOException {
    server.enqueue(
        new MockResponse.Builder()
            .code(200)
            .body("late")
            .headersDelay(2, TimeUnit.SECONDS)
            .build());
    server.enqueue(new MockResponse.Builder().code(200).body("ok").build());
    assertThat(get(client(factory, quickStart()))).isEqualTo(200);
    assertThat(server.getRequestCount()).isEqualTo(2);
  }

  @ParameterizedTest(name = "factory: {0}")
  @ValueSource(booleans = {false, true})
  void alwaysFailingWaitsOneTwoThreeThreeThenReturnsTheLastFailure(boolean factory)
      throws IOException {
    for (int i = 1; i <= 5; i++) {
      server.enqueue(new MockResponse.Builder().code(503).body("attempt " + i).build());
    }
    RetryPolicy.Builder policy =
        quickStart()
            .maxRetries(4)
            .jitter(Jitter.NONE)
            .baseDelay(10, TimeUnit.MILLISECONDS)
            .maxDelay(30, TimeUnit.MILLISECONDS);
    Call.Factory client = client(factory, policy);
    try (Response r =
        client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.body().string()).isEqualTo("attempt 5");
    }
    assertThat(server.getRequestCount()).isEqualTo(5);
    assertThat(delaysMillis).containsExactly(10L, 20L, 30L, 30L);
  }

  @ParameterizedTest(name = "factory: {0}")
  @ValueSource(booleans = {false, true})
  void fiftyCallsOneAfterAnotherAgainstRandom503sGetThrough(boolean factory) throws IOException {
    SplittableRandom coin = new SplittableRandom(29);
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            synchronized (coin) {
              return new MockResponse.Builder().code(coin.nextBoolean() ? 503 : 200).build();
            }
          }
        });
    Call.Factory client =
        client(
            factory,
            quickStart()
                .maxRetries(14)
                .baseDelay(1, TimeUnit.MILLISECONDS)
                .maxDelay(5, TimeUnit.MILLISECONDS));
    int through = 0;
    for (int i = 0; i < 50; i++) {
      if (get(client) == 200) {
        through++;
      }
    }
    assertThat(through).isGreaterThanOrEqualTo(48);
  }
}
