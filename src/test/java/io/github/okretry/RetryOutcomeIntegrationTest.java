package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.okretry.RetryOutcome.Processing;
import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import okhttp3.Cache;
import okhttp3.CacheControl;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import retrofit2.HttpException;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.POST;

/**
 * Issue 37 on real sockets, both drivers: a keyless POST whose request reached the server and then
 * timed out "may have been processed" (okretry watched its network requests), a keyed POST whose
 * attempts time out says so after each, and Retrofit's {@code Response.raw()} carries the outcome.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class RetryOutcomeIntegrationTest {
  MockWebServer server;
  RetryingCallFactory factory;

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() {
    if (factory != null) factory.close();
    server.close();
  }

  static RequestBody json() {
    return RequestBody.create("{\"amount\":42}", MediaType.get("application/json"));
  }

  // One per test, so no test meets another's budget: a port the system gives out again is the same
  // origin to a shared budget, which a 1 ms backoff makes "down" 14 ms after its failures began.
  final RetryPolicy policy = RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).build();

  /** The blocking driver, or the async one's enqueue(), each with a 200 ms read timeout. */
  Exec calls(String driver) {
    OkHttpClient base =
        LeakCheck.track(new OkHttpClient.Builder().readTimeout(Duration.ofMillis(200)).build());
    if (driver.equals("blocking")) {
      OkHttpClient client = RetryInterceptor.create(policy).install(base.newBuilder()).build();
      return request -> client.newCall(request).execute();
    }
    factory = RetryingCallFactory.create(base, policy);
    return request -> new EnqueuedCall(factory.newCall(request)).execute();
  }

  /** Runs one call to its end. */
  interface Exec {
    Response execute(Request request) throws IOException;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aKeylessPostThatTimesOutOnceMayHaveBeenProcessed(String driver) {
    server.enqueue(new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build());
    Request request =
        new Request.Builder()
            .url(server.url("/pay"))
            .post(json())
            .tag(IdempotencyKey.class, IdempotencyKey.none())
            .build();
    SocketTimeoutException e =
        catchThrowableOfType(SocketTimeoutException.class, () -> calls(driver).execute(request));
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(outcome.attempts()).isEqualTo(1);
    assertThat(outcome.requestsSent()).as("its headers were written: watched").isEqualTo(1);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT);
    assertThat(outcome.idempotencyKey()).isNull();
    assertThat(outcome.processing()).isEqualTo(Processing.MAYBE);
    assertThat(e.getSuppressed()[e.getSuppressed().length - 1])
        .hasMessageStartingWith(
            "okretry: after 1 attempt: NOT_SAFE_TO_REPEAT (1 request, waited 0 s, may have been"
                + " processed");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aKeyedPostWhoseFourAttemptsTimeOut(String driver) {
    for (int i = 0; i < 4; i++) {
      server.enqueue(new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build());
    }
    Request request =
        new Request.Builder()
            .url(server.url("/pay"))
            .post(json())
            .tag(IdempotencyKey.class, IdempotencyKey.of("order-42"))
            .build();
    SocketTimeoutException e =
        catchThrowableOfType(SocketTimeoutException.class, () -> calls(driver).execute(request));
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(outcome.attempts()).isEqualTo(4);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(outcome.idempotencyKey()).isEqualTo("order-42");
    assertThat(outcome.processing()).isEqualTo(Processing.MAYBE);
    assertThat(server.getRequestCount()).isEqualTo(4);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aSuccessAfterTwo503s(String driver) throws IOException {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(201).body("made").build());
    try (Response response =
        calls(driver)
            .execute(new Request.Builder().url(server.url("/orders")).post(json()).build())) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(response.body().string()).isEqualTo("made");
      assertThat(outcome.attempts()).isEqualTo(3);
      assertThat(outcome.giveUpReason()).isNull();
      assertThat(outcome.idempotencyKey())
          .isNotNull()
          .isEqualTo(server.takeRequest().getHeaders().get("Idempotency-Key"));
      assertThat(outcome.processing()).isEqualTo(Processing.PROCESSED);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * A redirect is a network request on every attempt (issue 43.6): a first attempt's success
   * counted its redirect, a retried call's attempt did not. The guide's promise is the server's
   * load, redirects and auth follow-ups included, so each attempt counts the requests its response
   * shows: the 503, then the 302 and the 200.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aRedirectCountsAsARequestOnARetriedAttemptToo(String driver) throws IOException {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(302).addHeader("Location", "/there").build());
    server.enqueue(new MockResponse.Builder().body("there").build());
    Exec calls = calls(driver);
    try (Response response =
        calls.execute(new Request.Builder().url(server.url("/here")).build())) {
      assertThat(response.body().string()).isEqualTo("there");
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.attempts()).isEqualTo(2);
      assertThat(outcome.requestsSent()).isEqualTo(server.getRequestCount()).isEqualTo(3);
    }
    server.enqueue(new MockResponse.Builder().code(302).addHeader("Location", "/there").build());
    server.enqueue(new MockResponse.Builder().body("there").build());
    try (Response response =
        calls.execute(new Request.Builder().url(server.url("/here")).build())) {
      assertThat(RetryOutcome.of(response).requestsSent()).as("a first attempt's").isEqualTo(2);
    }
  }

  /**
   * A response from OkHttp's cache sent no request (issue 43.6: it read "1 request"), whether the
   * call's first attempt met it or a retry after a 503 from the network.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aResponseFromTheCacheSentNoRequest(String driver, @TempDir File dir) throws IOException {
    server.enqueue(
        new MockResponse.Builder().addHeader("Cache-Control", "max-age=600").body("kept").build());
    server.enqueue(new MockResponse.Builder().code(503).build());
    AtomicBoolean skipTheCacheOnce = new AtomicBoolean();
    Interceptor attemptsSkipTheCacheWhenAsked =
        chain ->
            chain.proceed(
                skipTheCacheOnce.getAndSet(false)
                    ? chain.request().newBuilder().cacheControl(CacheControl.FORCE_NETWORK).build()
                    : chain.request());
    try (Cache cache = new Cache(dir, 1 << 20)) {
      // the interceptor below okretry, so that it sees each attempt
      OkHttpClient.Builder builder = new OkHttpClient.Builder().cache(cache);
      Exec calls;
      if (driver.equals("blocking")) {
        OkHttpClient client =
            LeakCheck.track(
                RetryInterceptor.create(policy)
                    .install(builder)
                    .addInterceptor(attemptsSkipTheCacheWhenAsked)
                    .build());
        calls = request -> client.newCall(request).execute();
      } else {
        factory =
            RetryingCallFactory.create(
                LeakCheck.track(builder.addInterceptor(attemptsSkipTheCacheWhenAsked).build()),
                policy);
        calls = request -> new EnqueuedCall(factory.newCall(request)).execute();
      }
      Request kept = new Request.Builder().url(server.url("/kept")).build();
      try (Response response = calls.execute(kept)) {
        assertThat(response.body().string()).isEqualTo("kept");
        assertThat(RetryOutcome.of(response).requestsSent()).as("from the network").isEqualTo(1);
      }
      try (Response response = calls.execute(kept)) {
        assertThat(response.cacheResponse()).isNotNull();
        assertThat(response.networkResponse()).isNull();
        assertThat(RetryOutcome.of(response).requestsSent()).as("from the cache").isZero();
      }
      skipTheCacheOnce.set(true); // its first attempt meets the 503, its retry the cache
      try (Response response = calls.execute(kept)) {
        assertThat(response.body().string()).isEqualTo("kept");
        assertThat(response.networkResponse()).isNull();
        RetryOutcome outcome = RetryOutcome.of(response);
        assertThat(outcome.attempts()).isEqualTo(2);
        assertThat(outcome.requestsSent()).as("the 503 alone").isEqualTo(1);
      }
      assertThat(server.getRequestCount()).isEqualTo(2);
    }
  }

  interface Orders {
    @POST("orders")
    retrofit2.Call<ResponseBody> create(@Body RequestBody body);
  }

  @Test
  void retrofitsRawResponseCarriesIt() throws IOException {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().code(201).body("made").build());
    OkHttpClient client =
        LeakCheck.track(
            RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build());
    Orders orders =
        new Retrofit.Builder().baseUrl(server.url("/")).client(client).build().create(Orders.class);
    retrofit2.Response<ResponseBody> response = orders.create(json()).execute();
    try (ResponseBody body = response.body()) {
      RetryOutcome outcome = RetryOutcome.of(response.raw());
      assertThat(outcome.attempts()).isEqualTo(2);
      assertThat(outcome.processing()).isEqualTo(Processing.PROCESSED);
      assertThat(outcome.idempotencyKey()).isNotNull();
    }
  }

  // Issue 43, item 3: the outcome is there and true wherever a caller looks.

  /**
   * A client of {@code policy} on {@code driver}: {@code "blocking"} (the interceptor's {@code
   * execute()}) or {@code "async"} (the factory's {@code enqueue()}), from {@code base}.
   */
  Exec calls(String driver, OkHttpClient base, RetryPolicy policy) {
    if (driver.equals("blocking")) {
      OkHttpClient client = RetryInterceptor.create(policy).install(base.newBuilder()).build();
      return request -> client.newCall(request).execute();
    }
    factory = RetryingCallFactory.create(base, policy);
    return request -> new EnqueuedCall(factory.newCall(request)).execute();
  }

  /**
   * OkHttp resends a keyed POST by itself when the pooled connection it went out on drops after the
   * server read it: the server got it twice, and {@code requestsSent()} says 2, on both drivers,
   * with or without a listener (one that does not ask for network requests).
   */
  @ParameterizedTest(name = "{0}, listener: {1}")
  @CsvSource({"blocking, false", "blocking, true", "async, false", "async, true"})
  void okHttpsOwnResendOfAPostOnAPooledConnectionIsCounted(String driver, boolean listener)
      throws Exception {
    server.enqueue(new MockResponse.Builder().body("warm").build());
    server.enqueue(
        new MockResponse.Builder()
            .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE) // the request was read
            .build());
    server.enqueue(new MockResponse.Builder().code(201).body("made").build());
    RetryPolicy.Builder policy = RetryPolicy.builder().baseDelay(Duration.ofMillis(1));
    if (listener) policy.listener(new RetryListener() {});
    Exec calls = calls(driver, LeakCheck.track(new OkHttpClient.Builder().build()), policy.build());
    calls.execute(new Request.Builder().url(server.url("/warm")).build()).close(); // pools it
    try (Response response =
        calls.execute(new Request.Builder().url(server.url("/orders")).post(json()).build())) {
      assertThat(response.body().string()).isEqualTo("made");
      RetryOutcome outcome = RetryOutcome.of(response);
      int received = server.getRequestCount() - 1; // after the warm-up
      assertThat(received).as("OkHttp resent it on a fresh connection").isEqualTo(2);
      assertThat(outcome.attempts()).isEqualTo(1);
      assertThat(outcome.requestsSent()).as("what the server received").isEqualTo(received);
      assertThat(outcome.processing()).isEqualTo(Processing.PROCESSED);
    }
  }

  /**
   * OkHttp's {@code callTimeout} ends a call that okretry retried: OkHttp throws {@code
   * InterruptedIOException("timeout")} with what the chain threw as its cause, which carries the
   * outcome.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void aCallOkHttpsCallTimeoutEndedCarriesItOnTheCause(String driver) {
    server.enqueue(new MockResponse.Builder().code(503).build());
    server.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).build());
    OkHttpClient base =
        LeakCheck.track(new OkHttpClient.Builder().callTimeout(Duration.ofMillis(500)).build());
    InterruptedIOException e =
        catchThrowableOfType(
            InterruptedIOException.class,
            () ->
                calls(driver, base, policy)
                    .execute(new Request.Builder().url(server.url("/")).build()));
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(outcome).as("read through its cause: %s", e).isNotNull();
    assertThat(outcome.attempts()).isEqualTo(2);
    assertThat(outcome.processing()).isEqualTo(Processing.MAYBE);
  }

  /** A call run on an executor: {@code Future.get()} throws it as the cause of its own. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"blocking", "async"})
  void anExecutionExceptionCarriesItOnTheCause(String driver) throws Exception {
    Exec calls = calls(driver, LeakCheck.track(new OkHttpClient.Builder().build()), policy);
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try (RefusingPort refusing = new RefusingPort()) {
      Request request =
          new Request.Builder().url("http://127.0.0.1:" + refusing.port() + "/").build();
      ExecutionException e =
          catchThrowableOfType(
              ExecutionException.class,
              () ->
                  executor
                      .submit(
                          () -> {
                            calls.execute(request).close();
                            return null;
                          })
                      .get(10, TimeUnit.SECONDS));
      RetryOutcome outcome = RetryOutcome.of(e);
      assertThat(outcome).as("read through its cause: %s", e).isNotNull();
      assertThat(outcome.attempts()).isEqualTo(4);
      assertThat(outcome.processing()).isEqualTo(Processing.NOT_PROCESSED);
    } finally {
      executor.shutdownNow();
    }
  }

  interface AsyncOrders {
    @POST("orders")
    CompletableFuture<ResponseBody> create(@Body RequestBody body);
  }

  /**
   * Retrofit's {@code HttpException} (an adapter's answer to a status that is not a success) holds
   * the response: the guide's recipe reads the outcome from it.
   */
  @Test
  void retrofitsHttpExceptionCarriesItOnItsResponse() {
    for (int i = 0; i < 4; i++) server.enqueue(new MockResponse.Builder().code(503).build());
    OkHttpClient client =
        LeakCheck.track(
            RetryInterceptor.create(policy).install(new OkHttpClient.Builder()).build());
    AsyncOrders orders =
        new Retrofit.Builder()
            .baseUrl(server.url("/"))
            .client(client)
            .build()
            .create(AsyncOrders.class);
    ExecutionException e =
        catchThrowableOfType(
            ExecutionException.class, () -> orders.create(json()).get(10, TimeUnit.SECONDS));
    assertThat(e).hasCauseInstanceOf(HttpException.class);
    HttpException httpException = (HttpException) e.getCause();
    // The guide's recipe:
    retrofit2.Response<?> response = httpException.response();
    RetryOutcome outcome = response != null ? RetryOutcome.of(response.raw()) : null;
    assertThat(outcome).isNotNull();
    assertThat(outcome.attempts()).isEqualTo(4);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(outcome.processing()).isEqualTo(Processing.NOT_PROCESSED);
  }

  /**
   * An enqueued call whose execute() waits for its callback: the async driver, as a caller meets
   * it.
   */
  static final class EnqueuedCall {
    private final Call call;

    EnqueuedCall(Call call) {
      this.call = call;
    }

    Response execute() throws IOException {
      java.util.concurrent.CompletableFuture<Object> done =
          new java.util.concurrent.CompletableFuture<>();
      call.enqueue(
          new okhttp3.Callback() {
            @Override
            public void onResponse(Call c, Response response) {
              done.complete(response);
            }

            @Override
            public void onFailure(Call c, IOException e) {
              done.complete(e);
            }
          });
      Object result = done.join();
      if (result instanceof Response r) return r;
      throw (IOException) result;
    }
  }
}
