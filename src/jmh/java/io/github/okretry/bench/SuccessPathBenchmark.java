package io.github.okretry.bench;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Issue 5.1: the cost of one successful call (GET or POST answered 200 over a kept-alive loopback
 * connection) through bare OkHttp and through each retry library configured alike. All variants run
 * in one JMH run, so their ratios share the machine's load.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SuccessPathBenchmark {

  /**
   * {@code okretry-deadline}: okretry with a 10 s deadline, which shrinks each attempt's timeouts;
   * {@code noop-interceptor}: what any application interceptor costs; {@code +key}: the peer with a
   * hand-made idempotency key on POST (see {@link Peers}).
   */
  @Param({
    "bare", "noop-interceptor", "okretry", "okretry-deadline",
    "failsafe", "failsafe+key", "resilience4j", "resilience4j+key"
  })
  public String variant;

  private TinyHttpServer server;
  private Peers.Executor executor;
  private Request get;
  private Request post;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    server = TinyHttpServer.ok();
    executor = Peers.create(variant, new OkHttpClient());
    get = Peers.get(server.url(""));
    post = Peers.post(server.url(""));
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    server.close();
  }

  @Benchmark
  public int get() throws IOException {
    return Peers.callOk(executor, get);
  }

  @Benchmark
  public int post() throws IOException {
    return Peers.callOk(executor, post);
  }
}
