package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two okretry layers on one call do not multiply: the first layer a call meets governs it, and a
 * layer inside it passes each attempt through once. One test per way users stack them, against a
 * server that answers 503 to everything (no {@code Retry-After}, so OkHttp repeats nothing itself);
 * each call runs by {@code execute()} and by {@code enqueue()}, which for the factory are its two
 * drivers. Waits are on fake time and the budgets unlimited, so only the layers count.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class StackedLayersTest {

  /** How the caller runs the call: on its own thread, or enqueued (the factory's async driver). */
  enum Run {
    EXECUTE,
    ENQUEUE
  }

  MockWebServer server;

  @BeforeEach
  void start() throws Exception {
    server = new MockWebServer();
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            return new MockResponse.Builder().code(503).body("busy").build();
          }
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** Fake time (waits pass at once), no budget, and {@code maxRetries} retries. */
  static RetryPolicy.Builder policy(int maxRetries) {
    return RetryPolicy.builder()
        .maxRetries(maxRetries)
        .timeSource(new FakeTime())
        .retryBudget(RetryBudget.unlimited());
  }

  Request get() {
    return new Request.Builder().url(server.url("/")).build();
  }

  /** Runs {@code request} to its end and returns its status code, or -1 if it threw. */
  static int run(Call.Factory calls, Request request, Run how) throws Exception {
    Call call = calls.newCall(request);
    if (how == Run.EXECUTE) {
      try (Response r = call.execute()) {
        return r.code();
      } catch (IOException e) {
        return -1;
      }
    }
    CompletableFuture<Integer> code = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response r) {
            r.close();
            code.complete(r.code());
          }

          @Override
          public void onFailure(Call c, IOException e) {
            code.complete(-1);
          }
        });
    return code.get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @EnumSource(Run.class)
  void twoInstallsOnOneBuilderSendWhatTheFirstAllows(Run how) throws Exception {
    EventLog outerEvents = new EventLog();
    EventLog innerEvents = new EventLog();
    RetryInterceptor outer = RetryInterceptor.create(policy(2).listener(outerEvents).build());
    RetryInterceptor inner = RetryInterceptor.create(policy(3).listener(innerEvents).build());
    OkHttpClient client =
        LeakCheck.track(inner.install(outer.install(new OkHttpClient.Builder())).build());

    assertThat(run(client, get(), how)).isEqualTo(503);
    assertThat(server.getRequestCount()).as("outer's maxRetries + 1, not 3 x 4").isEqualTo(3);
    assertThat(outerEvents.lines("retry")).hasSize(2);
    assertThat(innerEvents.lines()).as("the inner layer makes no attempt of its own").isEmpty();
    assertThat(client.networkInterceptors()).as("one Retry-After guard").hasSize(1);
  }

  @ParameterizedTest
  @EnumSource(Run.class)
  void twoInterceptorsWithTwoPoliciesNeverMakeFewerAttemptsThanTheOuterAlone(Run how)
      throws Exception {
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(RetryInterceptor.create(policy(3).build()))
                .addInterceptor(RetryInterceptor.create(policy(1).build()))
                .build());

    assertThat(run(client, get(), how)).isEqualTo(503);
    assertThat(server.getRequestCount())
        .as("outer's 3 + 1, not 4 x 2, nor the inner's 2")
        .isEqualTo(4);
  }

  @ParameterizedTest
  @EnumSource(Run.class)
  void theSameInterceptorAddedTwiceRetriesOnce(Run how) throws Exception {
    EventLog events = new EventLog();
    RetryInterceptor retry = RetryInterceptor.create(policy(3).listener(events).build());
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder().addInterceptor(retry).addInterceptor(retry).build());

    assertThat(run(client, get(), how)).isEqualTo(503);
    assertThat(server.getRequestCount()).isEqualTo(4);
    assertThat(events.lines("start")).containsExactly("start 1", "start 2", "start 3", "start 4");
    assertThat(events.lines("retry")).as("no onRetryScheduled twice").hasSize(3);
    assertThat(events.lines("gaveUp")).hasSize(1);
  }

  @Test
  void installingTheSameInterceptorTwiceAddsItOnce() {
    RetryInterceptor retry = RetryInterceptor.create();
    OkHttpClient.Builder builder = retry.install(retry.install(new OkHttpClient.Builder()));
    assertThat(builder.interceptors()).containsExactly(retry);
    assertThat(builder.networkInterceptors()).containsExactly(RetryAfterGuard.INSTANCE);
  }

  /** A library's client, with its layer, given to an app that adds its own through newBuilder(). */
  @ParameterizedTest
  @EnumSource(Run.class)
  void anAppsLayerAddedThroughNewBuilderOfALibrarysClientPassesItsAttemptsThrough(Run how)
      throws Exception {
    EventLog library = new EventLog();
    EventLog app = new EventLog();
    OkHttpClient libraryClient =
        LeakCheck.track(
            RetryInterceptor.create(policy(3).listener(library).build())
                .install(new OkHttpClient.Builder())
                .build());
    OkHttpClient appClient =
        LeakCheck.track(
            RetryInterceptor.create(policy(3).listener(app).build())
                .install(libraryClient.newBuilder())
                .build());

    assertThat(run(appClient, get(), how)).isEqualTo(503);
    assertThat(server.getRequestCount()).as("4, not 16").isEqualTo(4);
    assertThat(library.lines("retry")).hasSize(3);
    assertThat(app.lines()).isEmpty();
  }

  /**
   * The outer layer's key, deadline and events, with a shared listener and an inner key header of
   * its own.
   */
  @ParameterizedTest
  @EnumSource(Run.class)
  void theOuterLayersKeyDeadlineAndEventsStayRight(Run how) throws Exception {
    FakeTime time = new FakeTime();
    EventLog events = new EventLog();
    RetryPolicy.Builder builder =
        RetryPolicy.builder()
            .timeSource(time)
            .retryBudget(RetryBudget.unlimited())
            .listener(events)
            .jitter(Jitter.NONE)
            .baseDelay(Duration.ofMillis(400))
            .maxDelay(Duration.ofMillis(400))
            .deadline(Duration.ofSeconds(1));
    RetryPolicy outer = builder.build();
    RetryPolicy inner = builder.deadline(Duration.ZERO).idempotencyKeyHeader("X-Inner-Key").build();
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(RetryInterceptor.create(outer))
                .addInterceptor(RetryInterceptor.create(inner))
                .build());
    Request post =
        new Request.Builder()
            .url(server.url("/pay"))
            .post(RequestBody.create("{}", MediaType.get("application/json")))
            .build();

    assertThat(run(client, post, how)).isEqualTo(503);
    // 400 ms waits in a 1 s deadline: attempts at 0, 400 and 800 ms, and no wait past it.
    assertThat(server.getRequestCount()).isEqualTo(3);
    assertThat(time.sleeps()).containsExactly(Duration.ofMillis(400), Duration.ofMillis(400));
    String key = null;
    for (int i = 0; i < 3; i++) {
      RecordedRequest r = server.takeRequest();
      assertThat(r.getHeaders().get("X-Inner-Key")).isNull();
      if (key == null) key = r.getHeaders().get("Idempotency-Key");
      assertThat(r.getHeaders().get("Idempotency-Key"))
          .as("one key across all attempts")
          .isNotNull()
          .isEqualTo(key);
    }
    assertThat(events.lines("start")).hasSize(3);
    assertThat(events.lines("retry")).hasSize(2);
    assertThat(events.lines("gaveUp")).hasSize(1);
  }

  /**
   * A layer the factory's {@code create} cannot see: an interceptor of the factory's client that
   * hands its calls to a RetryInterceptor set after {@code create} (as tooling that decorates
   * interceptors does). The factory governs, on both of its drivers.
   */
  @ParameterizedTest
  @EnumSource(Run.class)
  void aLayerThatReachesTheFactorysClientAfterCreatePassesItsAttemptsThrough(Run how)
      throws Exception {
    Delegating later = new Delegating();
    EventLog factoryEvents = new EventLog();
    EventLog innerEvents = new EventLog();
    OkHttpClient base = LeakCheck.track(new OkHttpClient.Builder().addInterceptor(later).build());
    try (RetryingCallFactory calls =
        RetryingCallFactory.create(
            base.newBuilder().build(), policy(3).listener(factoryEvents).build())) {
      later.delegate = RetryInterceptor.create(policy(3).listener(innerEvents).build());

      assertThat(run(calls, get(), how)).isEqualTo(503);
      assertThat(server.getRequestCount()).as("4, not 16").isEqualTo(4);
      assertThat(factoryEvents.lines("retry")).hasSize(3);
      assertThat(innerEvents.lines()).isEmpty();
    }
  }

  /**
   * A client that already holds a RetryInterceptor (a library's) is accepted: the factory governs.
   */
  @ParameterizedTest
  @EnumSource(Run.class)
  void aFactoryOverAClientWithALayerGovernsIt(Run how) throws Exception {
    EventLog factoryEvents = new EventLog();
    EventLog libraryEvents = new EventLog();
    OkHttpClient library =
        LeakCheck.track(
            RetryInterceptor.create(policy(3).listener(libraryEvents).build())
                .install(new OkHttpClient.Builder())
                .build());
    try (RetryingCallFactory calls =
        RetryingCallFactory.create(library, policy(2).listener(factoryEvents).build())) {
      assertThat(run(calls, get(), how)).isEqualTo(503);
      assertThat(server.getRequestCount()).as("the factory's 2 + 1").isEqualTo(3);
      assertThat(factoryEvents.lines("retry")).hasSize(2);
      assertThat(libraryEvents.lines()).isEmpty();
    }
  }

  /**
   * An interceptor that runs whatever interceptor it is given, possibly after the client is built.
   */
  static final class Delegating implements Interceptor {
    volatile @Nullable Interceptor delegate;

    @Override
    public Response intercept(Chain chain) throws IOException {
      Interceptor d = delegate;
      return d != null ? d.intercept(chain) : chain.proceed(chain.request());
    }
  }

  /** Only stacking is undone: the inner layer still retries a call no layer is above. */
  @Test
  void theInnerLayerAloneStillRetries() throws Exception {
    RetryInterceptor inner = RetryInterceptor.create(policy(1).build());
    OkHttpClient stacked =
        LeakCheck.track(
            inner
                .install(
                    RetryInterceptor.create(policy(3).build()).install(new OkHttpClient.Builder()))
                .build());
    OkHttpClient alone = LeakCheck.track(inner.install(new OkHttpClient.Builder()).build());
    assertThat(run(stacked, get(), Run.EXECUTE)).isEqualTo(503);
    assertThat(server.getRequestCount()).isEqualTo(4);
    assertThat(run(alone, get(), Run.EXECUTE)).isEqualTo(503);
    assertThat(server.getRequestCount()).isEqualTo(4 + 2);
  }

  /**
   * A separate call made inside a layer (say an interceptor that refreshes a token through another
   * client with okretry) is a call of its own, with its own layer governing it.
   */
  @Test
  void aSeparateCallMadeInsideALayerIsGovernedByItsOwn() throws Exception {
    OkHttpClient tokens =
        LeakCheck.track(
            RetryInterceptor.create(policy(2).build()).install(new OkHttpClient.Builder()).build());
    Interceptor refresh =
        chain -> {
          if (chain.request().url().encodedPath().equals("/")) {
            tokens
                .newCall(new Request.Builder().url(server.url("/token")).build())
                .execute()
                .close();
          }
          return chain.proceed(chain.request());
        };
    OkHttpClient client =
        LeakCheck.track(
            RetryInterceptor.create(policy(1).build())
                .install(new OkHttpClient.Builder())
                .addInterceptor(refresh)
                .build());
    assertThat(run(client, get(), Run.EXECUTE)).isEqualTo(503);
    // each of the 2 attempts refreshes the token with 3 requests of its own
    assertThat(server.getRequestCount()).isEqualTo(2 * (1 + 3));
  }
}
