package io.github.okretry.examples;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import io.github.okretry.IdempotencyKey;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryOverrides;
import io.github.okretry.RetryPolicy;
import io.github.okretry.RetryingCallFactory;
import java.io.IOException;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.ResponseBody;
import retrofit2.Call;
import retrofit2.Callback;
import retrofit2.Invocation;
import retrofit2.Response;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.GET;
import retrofit2.http.POST;
import retrofit2.http.Path;
import retrofit2.http.Tag;

/**
 * okretry under Retrofit 3: Retrofit builds the request, okretry retries it.
 *
 * <ul>
 *   <li>{@code execute()} and {@code enqueue()} through a client with {@code retry.install(…)}.
 *   <li>{@code @Tag IdempotencyKey} on a method parameter: Retrofit puts the argument on the
 *       request as a tag, so every attempt of that call carries the caller's key.
 *   <li>{@code @Retry(maxRetries = 1)} on a method: Retrofit tags each request with an {@link
 *       Invocation} (the service method and its arguments), and {@link #withRetryAnnotation} turns
 *       the annotation into okretry's {@link RetryOverrides} tag. For a client, an application
 *       interceptor added <em>before</em> okretry does it (tags survive {@code newBuilder()}); for
 *       a {@link RetryingCallFactory}, whose attempts are separate calls that start below the
 *       client's interceptors, the same function wraps the factory.
 *   <li>{@link RetryingCallFactory} as Retrofit's {@code callFactory}: enqueued calls wait between
 *       attempts without holding an OkHttp dispatcher thread.
 * </ul>
 *
 * <p>Maven: Retrofit 3.0.0 depends on {@code okhttp} 4.12.0, which would put OkHttp 4's classes
 * beside okhttp-jvm 5's (the first retry dies with {@code NoSuchMethodError}); exclude it:
 *
 * <pre>{@code
 * <dependency>
 *   <groupId>com.squareup.retrofit2</groupId>
 *   <artifactId>retrofit</artifactId>
 *   <version>3.0.0</version>
 *   <exclusions>
 *     <exclusion>
 *       <groupId>com.squareup.okhttp3</groupId>
 *       <artifactId>okhttp</artifactId>
 *     </exclusion>
 *   </exclusions>
 * </dependency>
 * }</pre>
 */
public final class RetrofitExample {
  private static final MediaType JSON = MediaType.get("application/json");

  /** Per-method retry settings for a Retrofit service method; see {@link #withRetryAnnotation}. */
  @Retention(RUNTIME)
  @Target(METHOD)
  @interface Retry {
    /** Retries after the first attempt; 0 = one attempt. */
    int maxRetries();
  }

  interface Orders {
    @GET("orders/{id}")
    Call<ResponseBody> get(@Path("id") String id);

    @POST("orders")
    Call<ResponseBody> create(@Body RequestBody order, @Tag IdempotencyKey key);

    @Retry(maxRetries = 1) // a report is cheap to ask for again later: do not insist
    @GET("reports/{day}")
    Call<ResponseBody> report(@Path("day") String day);
  }

  /**
   * {@code request} with a {@link RetryOverrides} tag from the {@link Retry} annotation of the
   * Retrofit method that made it, or {@code request} itself when there is none (or the caller
   * already chose overrides).
   */
  static Request withRetryAnnotation(Request request) {
    Invocation invocation = request.tag(Invocation.class);
    Retry retry = invocation == null ? null : invocation.method().getAnnotation(Retry.class);
    if (retry == null || request.tag(RetryOverrides.class) != null) return request;
    RetryOverrides overrides = RetryOverrides.builder().maxRetries(retry.maxRetries()).build();
    return request.newBuilder().tag(RetryOverrides.class, overrides).build();
  }

  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(new FlakyServer());
      server.start();

      Timeline timeline = new Timeline(Duration.ofMillis(100));
      RetryPolicy policy =
          RetryPolicy.builder()
              .maxRetries(3)
              .baseDelay(Duration.ofMillis(100))
              .listener(timeline)
              .build();
      RetryInterceptor retry = RetryInterceptor.create(policy);

      // 1. A client with okretry; the annotation interceptor goes before it.
      OkHttpClient client =
          retry
              .install(
                  new OkHttpClient.Builder()
                      .addInterceptor(chain -> chain.proceed(withRetryAnnotation(chain.request()))))
              .addInterceptor(timeline.attempts())
              .build();
      Orders orders =
          new Retrofit.Builder()
              .baseUrl(server.url("/"))
              .client(client)
              .build()
              .create(Orders.class);

      timeline.restart("client: orders.get(\"42\").execute()");
      show(timeline, orders.get("42").execute());

      timeline.restart("client: orders.create(order, IdempotencyKey.of(\"order-42\")).enqueue(…)");
      show(
          timeline,
          enqueue(
              orders.create(
                  RequestBody.create("{\"item\":42}", JSON), IdempotencyKey.of("order-42"))));

      timeline.restart(
          "client: orders.report(\"today\"), @Retry(maxRetries = 1): 2 attempts, not the client's"
              + " 4");
      show(timeline, orders.report("today").execute());

      // 2. RetryingCallFactory as Retrofit's call factory (over a client without okretry).
      OkHttpClient plain = new OkHttpClient.Builder().addInterceptor(timeline.attempts()).build();
      try (RetryingCallFactory calls = RetryingCallFactory.create(plain, policy)) {
        Orders async =
            new Retrofit.Builder()
                .baseUrl(server.url("/"))
                .callFactory(request -> calls.newCall(withRetryAnnotation(request)))
                .build()
                .create(Orders.class);

        timeline.restart(
            "callFactory: orders.get(\"43\").enqueue(…), no dispatcher thread held while waiting");
        show(timeline, enqueue(async.get("43")));

        timeline.restart(
            "callFactory: orders.report(\"yesterday\").enqueue(…), @Retry(maxRetries = 1)");
        show(timeline, enqueue(async.report("yesterday")));
      }

      for (OkHttpClient c : new OkHttpClient[] {client, plain}) {
        c.dispatcher().executorService().shutdown();
        c.connectionPool().evictAll();
      }
    }
  }

  /** Enqueues {@code call} and waits for its callback: the caller's view of an async call. */
  private static Response<ResponseBody> enqueue(Call<ResponseBody> call) throws Exception {
    CompletableFuture<Response<ResponseBody>> done = new CompletableFuture<>();
    call.enqueue(
        new Callback<>() {
          @Override
          public void onResponse(Call<ResponseBody> c, Response<ResponseBody> response) {
            done.complete(response);
          }

          @Override
          public void onFailure(Call<ResponseBody> c, Throwable t) {
            done.completeExceptionally(t);
          }
        });
    return done.get(10, TimeUnit.SECONDS);
  }

  private static void show(Timeline timeline, Response<ResponseBody> response) throws IOException {
    // Retrofit hands a non-2xx body over as errorBody(); either way, read and close it.
    try (ResponseBody body = response.isSuccessful() ? response.body() : response.errorBody()) {
      timeline.print("caller got HTTP " + response.code() + " \"" + body.string() + "\"");
    }
  }

  /**
   * The first request to each order or order list fails with a 503, the retry succeeds; reports are
   * always unavailable. Prints what it receives, with the idempotency key.
   */
  private static final class FlakyServer extends Dispatcher {
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getUrl().encodedPath();
      boolean first = seen.add(request.getMethod() + " " + path);
      int code =
          path.startsWith("/reports") || first
              ? 503
              : request.getMethod().equals("POST") ? 201 : 200;
      String key = request.getHeaders().get("Idempotency-Key");
      System.out.println(
          "           server: "
              + request.getMethod()
              + " "
              + path
              + (key == null ? "" : " key=" + key)
              + " -> "
              + code);
      return new MockResponse.Builder()
          .code(code)
          .body(
              code == 503
                  ? "busy"
                  : code == 201 ? "created" : "order " + path.substring(path.lastIndexOf('/') + 1))
          .build();
    }
  }
}
