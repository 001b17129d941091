package io.github.okretry.bench;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Issue 5.2, micro: the work okretry does to give up on a {@code 503} whose {@code Retry-After: 5}
 * cannot fit a 1 s deadline (parse the header, decide, notify, return the response), against a stub
 * chain, next to a no-op interceptor. Run with {@code -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GiveUpBenchmark {

  private Interceptor okretry;
  private Interceptor noop;
  private StubChain chain;

  @Setup(Level.Trial)
  public void setUp() {
    okretry =
        RetryInterceptor.create(RetryPolicy.builder().deadline(Duration.ofSeconds(1)).build());
    noop = c -> c.proceed(c.request());
    Request get = new Request.Builder().url("http://127.0.0.1:8080/busy").build();
    Response busy =
        new Response.Builder()
            .request(get)
            .protocol(Protocol.HTTP_1_1)
            .code(503)
            .message("Service Unavailable")
            .header("Retry-After", "5")
            .body(ResponseBody.create(new byte[0], null))
            .build();
    chain = new StubChain(get, busy);
  }

  @Benchmark
  public Response okretryGivesUp() throws IOException {
    Response r = okretry.intercept(chain);
    if (r.code() != 503) throw new AssertionError(r.code());
    return r;
  }

  @Benchmark
  public Response noop() throws IOException {
    return noop.intercept(chain);
  }
}
