package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An application interceptor before okretry that proceeds a second time on the same OkHttp call (a
 * 401 answered with a fresh token, a failover to a backup host): each pass through okretry is a
 * logical call of its own, with its retries, its key, its deadline and its events (issue 36, item
 * 1: the stacking mark of issue 31 outlived the pass that set it, and a second pass was sent once,
 * with no key and no deadline). Two layers on one call still do not multiply: the mark holds while
 * a pass runs, also across an interceptor that proceeds on a thread of its own. Each call runs by
 * {@code execute()} and by {@code enqueue()}; waits are on fake time, budgets unlimited.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class ProceedAgainTest {

  enum Run {
    EXECUTE,
    ENQUEUE
  }

  MockWebServer server;

  /** What a request with the fresh token gets, in order; 200 once they run out. */
  final Deque<MockResponse> fresh = new ConcurrentLinkedDeque<>();

  @BeforeEach
  void start() throws Exception {
    server = new MockWebServer();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if (!"Bearer fresh".equals(request.getHeaders().get("Authorization"))) {
              return new MockResponse.Builder().code(401).body("expired").build();
            }
            MockResponse next = fresh.poll();
            return next != null ? next : new MockResponse.Builder().body("ok").build();
          }
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static MockResponse status(int code) {
    return new MockResponse.Builder().code(code).body("status " + code).build();
  }

  /** Fake time, no budget, 3 retries. */
  static RetryPolicy.Builder policy() {
    return RetryPolicy.builder().timeSource(new FakeTime()).retryBudget(RetryBudget.unlimited());
  }

  /** Sends with a stale token; on a 401, proceeds again on the same call with a fresh one. */
  static final class TokenRefresh implements Interceptor {
    volatile String token = "stale";

    @Override
    public Response intercept(Chain chain) throws IOException {
      Response response = chain.proceed(withToken(chain.request()));
      if (response.code() != 401) return response;
      response.close();
      token = "fresh";
      return chain.proceed(withToken(chain.request()));
    }

    private Request withToken(Request request) {
      return request.newBuilder().header("Authorization", "Bearer " + token).build();
    }
  }

  /** {@code refresh} first, then okretry, as {@link RetryInterceptor#install}'s doc asks. */
  static OkHttpClient client(Interceptor before, RetryPolicy policy) {
    return LeakCheck.track(
        RetryInterceptor.create(policy)
            .install(new OkHttpClient.Builder().addInterceptor(before))
            .build());
  }

  Request get() {
    return new Request.Builder().url(server.url("/")).build();
  }

  /**
   * Runs {@code request}: the response (its body read and closed) as "code body", or the exception.
   */
  static Object run(Call.Factory calls, Request request, Run how) throws Exception {
    Call call = calls.newCall(request);
    if (how == Run.EXECUTE) {
      try (Response r = call.execute()) {
        return r.code() + " " + r.body().string();
      } catch (IOException e) {
        return e;
      }
    }
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response r) throws IOException {
            try (r) {
              outcome.complete(r.code() + " " + r.body().string());
            }
          }

          @Override
          public void onFailure(Call c, IOException e) {
            outcome.complete(e);
          }
        });
    return outcome.get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @EnumSource(Run.class)
  void aRequestSentAgainWithAFreshTokenIsRetried(Run how) throws Exception {
    fresh.add(status(503));
    fresh.add(status(503));
    EventLog events = new EventLog();
    OkHttpClient client = client(new TokenRefresh(), policy().listener(events).build());

    assertThat(run(client, get(), how)).isEqualTo("200 ok");
    assertThat(server.getRequestCount()).as("the 401, then 503, 503, 200").isEqualTo(4);
    assertThat(events.lines())
        .as("two logical calls, one after the other")
        .containsExactly(
            "start 1",
            "succeeded 1 HTTP 401",
            "start 1",
            "retry 1 HTTP 503",
            "start 2",
            "retry 2 HTTP 503",
            "start 3",
            "succeeded 3 HTTP 200");
  }

  /**
   * Each pass hears only its own network requests (issue 43.6): the first pass's watcher stayed on
   * the OkHttp call and reported the second pass's requests as more of its own attempt.
   */
  @ParameterizedTest
  @EnumSource(Run.class)
  void eachPassHearsOnlyItsOwnNetworkRequests(Run how) throws Exception {
    fresh.add(status(503));
    List<String> heard = java.util.Collections.synchronizedList(new ArrayList<>());
    RetryListener listener =
        new RetryListener() {
          @Override
          public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
            heard.add(
                request.header("Authorization")
                    + ", attempt "
                    + attempt
                    + ", request "
                    + requestInAttempt);
          }
        };
    OkHttpClient client = client(new TokenRefresh(), policy().listener(listener).build());

    assertThat(run(client, get(), how)).isEqualTo("200 ok");
    assertThat(server.getRequestCount()).as("the 401, then 503, 200").isEqualTo(3);
    assertThat(heard)
        .containsExactly(
            "Bearer stale, attempt 1, request 1",
            "Bearer fresh, attempt 1, request 1",
            "Bearer fresh, attempt 2, request 1");
  }

  @ParameterizedTest
  @EnumSource(Run.class)
  void aPostSentAgainCarriesAKeyOnEachOfItsAttempts(Run how) throws Exception {
    fresh.add(status(503));
    OkHttpClient client = client(new TokenRefresh(), policy().build());
    Request post =
        new Request.Builder()
            .url(server.url("/pay"))
            .post(RequestBody.create("{}", MediaType.get("application/json")))
            .build();

    assertThat(run(client, post, how)).isEqualTo("200 ok");
    assertThat(server.getRequestCount()).isEqualTo(3);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 3; i++) keys.add(server.takeRequest().getHeaders().get("Idempotency-Key"));
    assertThat(keys).as("a key on every request").doesNotContainNull();
    assertThat(keys.get(2)).as("the second pass's retry repeats its key").isEqualTo(keys.get(1));
  }

  @ParameterizedTest
  @EnumSource(Run.class)
  void aRequestSentAgainKeepsToItsDeadline(Run how) throws Exception {
    fresh.add(new MockResponse.Builder().body("late").headersDelay(4, TimeUnit.SECONDS).build());
    OkHttpClient client =
        client(new TokenRefresh(), RetryPolicy.builder().deadline(Duration.ofSeconds(1)).build());

    long start = System.nanoTime();
    Object outcome = run(client, get(), how);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    Diagnostics.println(
        "a refreshed request answered after 4 s, deadline 1 s ("
            + how
            + "): "
            + elapsedMs
            + " ms, "
            + outcome);
    assertThat(outcome).isInstanceOf(IOException.class);
    assertThat(elapsedMs)
        .as("the second pass's own 1 s deadline, not the server's 4 s")
        .isBetween(900L, 2_500L);
  }

  /** Proceeds to the primary host; on a 5xx, again on the same call to the backup host. */
  @ParameterizedTest
  @EnumSource(Run.class)
  void aFailoverToABackupHostIsRetried(Run how) throws Exception {
    try (MockWebServer backup = new MockWebServer()) {
      backup.enqueue(status(503));
      backup.enqueue(status(503));
      backup.enqueue(new MockResponse.Builder().body("backup").build());
      backup.start();
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              return status(500);
            }
          });
      HttpUrl backupUrl = backup.url("/");
      Interceptor failover =
          chain -> {
            Response primary = chain.proceed(chain.request());
            if (primary.code() < 500) return primary;
            primary.close();
            return chain.proceed(chain.request().newBuilder().url(backupUrl).build());
          };
      OkHttpClient client = client(failover, policy().build());

      assertThat(run(client, get(), how)).isEqualTo("200 backup");
      assertThat(server.getRequestCount()).as("a 500 is not retried").isEqualTo(1);
      assertThat(backup.getRequestCount()).isEqualTo(3);
    }
  }

  /** Inside a pass, an interceptor that proceeds twice does not wake a layer under it. */
  @ParameterizedTest
  @EnumSource(Run.class)
  void aLayerUnderAnInterceptorThatProceedsAgainInsideAPassStillPassesItsAttemptsThrough(Run how)
      throws Exception {
    for (int i = 0; i < 10; i++) fresh.add(status(503));
    EventLog outerEvents = new EventLog();
    EventLog innerEvents = new EventLog();
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(
                    RetryInterceptor.create(policy().maxRetries(2).listener(outerEvents).build()))
                .addInterceptor(new TokenRefresh())
                .addInterceptor(
                    RetryInterceptor.create(policy().maxRetries(3).listener(innerEvents).build()))
                .build());

    assertThat(run(client, get(), how)).isEqualTo("503 status 503");
    assertThat(server.getRequestCount())
        .as("the outer's 3 attempts, the first with its 401 and refresh")
        .isEqualTo(4);
    assertThat(outerEvents.lines("retry")).hasSize(2);
    assertThat(innerEvents.lines()).isEmpty();
  }

  /**
   * The mark of a running pass is seen on another thread: an interceptor between two layers may
   * proceed on one of its own.
   */
  @ParameterizedTest
  @EnumSource(Run.class)
  void aLayerReachedOnAnotherThreadInsideAPassPassesItsAttemptsThrough(Run how) throws Exception {
    for (int i = 0; i < 10; i++) fresh.add(status(503));
    ExecutorService elsewhere = Executors.newSingleThreadExecutor();
    try {
      Interceptor hop =
          chain -> {
            try {
              return elsewhere.submit(() -> chain.proceed(chain.request())).get();
            } catch (Exception e) {
              throw new IOException(e);
            }
          };
      EventLog innerEvents = new EventLog();
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .addInterceptor(
                      chain ->
                          chain.proceed(
                              chain
                                  .request()
                                  .newBuilder()
                                  .header("Authorization", "Bearer fresh")
                                  .build()))
                  .addInterceptor(RetryInterceptor.create(policy().maxRetries(2).build()))
                  .addInterceptor(hop)
                  .addInterceptor(
                      RetryInterceptor.create(policy().maxRetries(3).listener(innerEvents).build()))
                  .build());

      assertThat(run(client, get(), how)).isEqualTo("503 status 503");
      assertThat(server.getRequestCount()).as("the outer's 3, not 3 x 4").isEqualTo(3);
      assertThat(innerEvents.lines()).isEmpty();
    } finally {
      elsewhere.shutdown();
    }
  }

  /**
   * A factory over a client whose interceptor refreshes before a library's layer: the factory
   * governs.
   */
  @ParameterizedTest
  @EnumSource(Run.class)
  void aFactoryGovernsALayerUnderAnInterceptorThatProceedsAgain(Run how) throws Exception {
    fresh.add(status(503));
    fresh.add(status(503));
    EventLog factoryEvents = new EventLog();
    EventLog libraryEvents = new EventLog();
    OkHttpClient library = client(new TokenRefresh(), policy().listener(libraryEvents).build());
    try (RetryingCallFactory calls =
        RetryingCallFactory.create(library, policy().listener(factoryEvents).build())) {
      assertThat(run(calls, get(), how)).isEqualTo("200 ok");
      assertThat(server.getRequestCount())
          .as("the 401 and a 503 in attempt 1, then 503, 200")
          .isEqualTo(4);
      assertThat(factoryEvents.lines("start")).hasSize(3);
      assertThat(libraryEvents.lines()).isEmpty();
    }
  }

  /** A pass that threw ends too: the interceptor above may proceed again and be retried. */
  @Test
  void aPassThatThrewLeavesNoMark() throws Exception {
    fresh.add(status(503));
    Interceptor again =
        chain -> {
          try {
            return chain.proceed(
                chain
                    .request()
                    .newBuilder()
                    .url(chain.request().url().newBuilder().port(1).build())
                    .build());
          } catch (IOException refused) {
            return chain.proceed(
                chain.request().newBuilder().header("Authorization", "Bearer fresh").build());
          }
        };
    OkHttpClient client = client(again, policy().maxRetries(1).build());
    assertThat(run(client, get(), Run.EXECUTE)).isEqualTo("200 ok");
    assertThat(server.getRequestCount()).as("503, then 200").isEqualTo(2);
  }
}
