package io.github.okretry.bench;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Issue 5.1, micro: {@link RetryInterceptor#intercept} alone against a stub chain whose {@code
 * proceed} returns a prebuilt 200, next to a no-op interceptor. Run with {@code -prof gc}: the
 * difference in {@code gc.alloc.rate.norm} is what okretry allocates per successful call. The
 * stub's {@code with…} methods return the chain itself, whereas OkHttp's real chain copies itself
 * on each (about 100 bytes apiece); those copies are counted in {@link SuccessPathBenchmark}, not
 * here.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class InterceptBenchmark {

  /**
   * {@code okretry-deadline}: the same with a 10 s deadline, which shrinks each attempt's timeouts.
   */
  @Param({"noop", "okretry", "okretry-deadline"})
  public String interceptor;

  private Interceptor subject;
  private StubChain getChain;
  private StubChain postChain;

  @Setup(Level.Trial)
  public void setUp() {
    switch (interceptor) {
      case "noop":
        subject = chain -> chain.proceed(chain.request());
        break;
      case "okretry":
        subject = RetryInterceptor.create(RetryPolicy.builder().maxRetries(3).build());
        break;
      case "okretry-deadline":
        subject =
            RetryInterceptor.create(
                RetryPolicy.builder().maxRetries(3).deadline(Duration.ofSeconds(10)).build());
        break;
      default:
        throw new IllegalArgumentException(interceptor);
    }
    Request get = new Request.Builder().url("http://127.0.0.1:8080/item").build();
    Request post =
        new Request.Builder()
            .url("http://127.0.0.1:8080/orders")
            .post(RequestBody.create("{}", MediaType.get("application/json")))
            .build();
    getChain = new StubChain(get, ok(get));
    postChain = new StubChain(post, ok(post));
  }

  private static Response ok(Request request) {
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(200)
        .message("OK")
        .body(ResponseBody.create("ok", MediaType.get("text/plain")))
        .build();
  }

  @Benchmark
  public Response get() throws IOException {
    return subject.intercept(getChain);
  }

  @Benchmark
  public Response post() throws IOException {
    return subject.intercept(postChain);
  }
}
