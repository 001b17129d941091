package io.github.okretry.bench;

import dev.failsafe.RetryPolicy;
import dev.failsafe.okhttp.FailsafeCall;
import io.github.okretry.Jitter;
import io.github.okretry.RetryInterceptor;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The same retry policy written the way a skilled user of each library would: retry {@link
 * IOException}, 429 and 503; 3 retries (4 attempts); exponential backoff from 200 ms, doubling, up
 * to 10 s, with jitter; a retried response is closed before waiting. A variant name ending in
 * {@code +key} is the peer with a hand-made idempotency key on POST and PATCH (see {@link
 * #withIdempotencyKey}).
 */
public final class Peers {

  /** How a benchmark executes one logical call. */
  public interface Executor {
    Response execute(Request request) throws IOException;
  }

  private static final MediaType JSON = MediaType.get("application/json");
  private static final byte[] ORDER_JSON = "{\"order\":42,\"items\":[1,2,3]}".getBytes();

  private Peers() {}

  static boolean retryableStatus(Response r) {
    return r.code() == 429 || r.code() == 503;
  }

  public static Executor create(String variant, OkHttpClient base) {
    return create(variant, base, null);
  }

  /**
   * @param answer if not null, an application interceptor added after the variant's own, which
   *     answers every call from memory instead of the network
   */
  public static Executor create(String variant, OkHttpClient base, Interceptor answer) {
    if (variant.endsWith("+key")) {
      Executor peer =
          create(variant.substring(0, variant.length() - "+key".length()), base, answer);
      return request -> peer.execute(withIdempotencyKey(request));
    }
    switch (variant) {
      case "bare":
        {
          OkHttpClient client = finish(base.newBuilder(), answer);
          return request -> client.newCall(request).execute();
        }
      case "bare-call-timeout":
        {
          // OkHttp's own whole-call timeout: the same okio watchdog timer okretry's deadline uses.
          OkHttpClient client =
              finish(base.newBuilder().callTimeout(Duration.ofSeconds(10)), answer);
          return request -> client.newCall(request).execute();
        }
      case "noop-interceptor":
        {
          // What any application interceptor costs: OkHttp copies its chain once per interceptor.
          OkHttpClient client =
              finish(base.newBuilder().addInterceptor(c -> c.proceed(c.request())), answer);
          return request -> client.newCall(request).execute();
        }
      case "okretry-add":
        {
          // The bare interceptor, without install()'s network guard: issue 10's allocation target.
          OkHttpClient client =
              finish(base.newBuilder().addInterceptor(RetryInterceptor.create()), answer);
          return request -> client.newCall(request).execute();
        }
      case "okretry":
      case "okretry-deadline":
      case "okretry-listener":
      case "okretry-call-timeout":
        {
          io.github.okretry.RetryPolicy.Builder retry =
              io.github.okretry.RetryPolicy.builder()
                  .maxRetries(3)
                  .baseDelay(Duration.ofMillis(200))
                  .maxDelay(Duration.ofSeconds(10))
                  .jitter(Jitter.FULL); // 429, 503 and transient IOExceptions are the defaults
          // With a deadline, each attempt's timeouts shrink to the time left.
          if (variant.equals("okretry-deadline")) retry.deadline(Duration.ofSeconds(10));
          // A listener that hears every event: what an app's logging or metrics listener costs.
          if (variant.equals("okretry-listener")) {
            retry.listener(new io.github.okretry.RetryListener() {});
          }
          // As the README installs it: the interceptor, plus its network interceptor that guards
          // OkHttp against an out-of-range Retry-After (one more chain copy per network request).
          OkHttpClient.Builder builder = base.newBuilder();
          // A call timeout: okretry keeps per-call state (a LogicalCall) from the first attempt.
          if (variant.equals("okretry-call-timeout")) builder.callTimeout(Duration.ofSeconds(10));
          OkHttpClient client =
              finish(RetryInterceptor.create(retry.build()).install(builder), answer);
          return request -> client.newCall(request).execute();
        }
      case "failsafe":
        {
          RetryPolicy<Response> policy =
              RetryPolicy.<Response>builder()
                  .handle(IOException.class)
                  .handleResultIf(Peers::retryableStatus)
                  .withMaxRetries(3)
                  .withBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 2.0)
                  .withJitter(0.5)
                  .onFailedAttempt(
                      e -> {
                        Response r = e.getLastResult();
                        if (r != null) r.close();
                      })
                  .build();
          OkHttpClient client = finish(base.newBuilder(), answer);
          return request -> FailsafeCall.with(policy).compose(client.newCall(request)).execute();
        }
      case "resilience4j":
        {
          RetryConfig config =
              RetryConfig.<Response>custom()
                  .maxAttempts(4)
                  .intervalFunction(
                      IntervalFunction.ofExponentialRandomBackoff(
                          Duration.ofMillis(200), 2.0, 0.5, Duration.ofSeconds(10)))
                  .retryOnException(e -> e instanceof IOException)
                  .retryOnResult(Peers::retryableStatus)
                  .consumeResultBeforeRetryAttempt((attempt, r) -> r.close())
                  .build();
          Retry retry = Retry.of("bench", config);
          OkHttpClient client = finish(base.newBuilder(), answer);
          return request -> {
            try {
              return retry.executeCheckedSupplier(() -> client.newCall(request).execute());
            } catch (IOException | RuntimeException | Error e) {
              throw e;
            } catch (Throwable t) {
              throw new IOException(t);
            }
          };
        }
      default:
        throw new IllegalArgumentException("unknown variant: " + variant);
    }
  }

  /** The GET every success-path benchmark sends: {@code /item} on the server at {@code origin}. */
  static Request get(String origin) {
    return new Request.Builder().url(origin + "/item").build();
  }

  /** The POST every success-path benchmark sends: a 30-byte JSON order to {@code /orders}. */
  static Request post(String origin) {
    return new Request.Builder()
        .url(origin + "/orders")
        .post(RequestBody.create(ORDER_JSON, JSON))
        .build();
  }

  /**
   * One successful call through {@code executor}: fails on any status but 200, and reads the body
   * so the connection goes back to the pool.
   *
   * @return the body's length, for the caller to consume
   */
  static int callOk(Executor executor, Request request) throws IOException {
    try (Response response = executor.execute(request)) {
      if (response.code() != 200) throw new IOException("unexpected " + response.code());
      return response.body().bytes().length;
    }
  }

  private static OkHttpClient finish(OkHttpClient.Builder builder, Interceptor answer) {
    return (answer != null ? builder.addInterceptor(answer) : builder).build();
  }

  /**
   * What a careful user of a generic retry library does before retrying a POST or PATCH on an
   * {@code IOException}: give the logical call one key that every attempt repeats, taken from
   * {@code SecureRandom} as okretry's default generator does.
   */
  static Request withIdempotencyKey(Request request) {
    String method = request.method();
    if (!method.equals("POST") && !method.equals("PATCH")) return request;
    if (request.header("Idempotency-Key") != null) return request;
    return request.newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build();
  }
}
