package io.github.okretry.bench;

import io.github.okretry.Jitter;
import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Issue 37: what a successful call that retried once allocates in okretry ({@code -prof gc}, {@code
 * gc.alloc.rate.norm}): {@link RetryInterceptor#intercept} against a stub chain that answers 503,
 * then 200, for a GET and for a POST (which gets a generated key), with a 1 ns wait and no jitter
 * (the sleep is real), no budget (a call in two fails would drain it). The stub's responses are
 * prebuilt, so what is counted is okretry's: its per-call state, its steps and waits, and since
 * issue 37 the request copy that carries the outcome tag and the outcome itself. Compare two builds
 * in one session: {@code bench/run.sh retried}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RetriedCallBenchmark {

  private RetryInterceptor retry;
  private StubChain getChain;
  private StubChain postChain;

  @Setup(Level.Trial)
  public void setUp() {
    retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .maxRetries(3)
                .baseDelay(1, TimeUnit.NANOSECONDS)
                .jitter(Jitter.NONE)
                .retryBudget(RetryBudget.unlimited())
                .build());
    Request get = new Request.Builder().url("http://127.0.0.1:8080/item").build();
    Request post =
        new Request.Builder()
            .url("http://127.0.0.1:8080/orders")
            .post(RequestBody.create("{}", MediaType.get("application/json")))
            .build();
    getChain = new StubChain(get, response(get, 503), response(get, 200));
    postChain = new StubChain(post, response(post, 503), response(post, 200));
  }

  private static Response response(Request request, int code) {
    return new Response.Builder()
        .request(request)
        .protocol(Protocol.HTTP_1_1)
        .code(code)
        .message("x")
        .body(ResponseBody.create("ok", MediaType.get("text/plain")))
        .build();
  }

  @Benchmark
  public Response getAfterA503() throws IOException {
    return retry.intercept(getChain);
  }

  @Benchmark
  public Response postAfterA503() throws IOException {
    return retry.intercept(postChain);
  }
}
