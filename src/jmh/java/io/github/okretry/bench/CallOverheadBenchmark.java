package io.github.okretry.bench;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
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
 * Issue 5.1, what each library adds to one successful call, without the network. Every variant runs
 * a real OkHttp {@code Call} (dispatcher, event listener, interceptor chain) whose last application
 * interceptor answers {@code 200} from memory instead of opening a socket, so the part that differs
 * between variants is nearly all that is left to measure, and it is CPU work on the calling thread,
 * which a shared machine disturbs far less than a loopback round trip. What this leaves out:
 * network interceptors never run, so okretry's Retry-After guard (one chain copy and one header
 * lookup per network request) counts only in {@link SuccessPathBenchmark}.
 *
 * <p>{@link SuccessPathBenchmark} with {@code -p variant=bare} in the same JMH run gives the
 * loopback call the overhead is a fraction of; {@code bench/run.sh overhead} runs both.
 *
 * <p>The {@code +key} peers stamp a POST with a {@code SecureRandom} UUID {@code Idempotency-Key}
 * before their first attempt, as okretry does by default: without one, retrying a POST on an {@code
 * IOException} can charge a card twice, so a skilled user of a generic retry library adds it by
 * hand. Their GET is the plain peer's.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CallOverheadBenchmark {

  private static final byte[] OK_BODY = "ok".getBytes();

  /**
   * Named {@code library}, not {@code variant}, so {@code -p variant=…} narrows only the loopback
   * benchmark. {@code bare-call-timeout} is OkHttp with a 10 s {@code callTimeout}, the reference
   * for {@code okretry-deadline}: both arm one okio watchdog timer per call. It is also the
   * reference for {@code okretry-call-timeout}, okretry under that call timeout, which keeps
   * per-call state from the first attempt (a {@code LogicalCall} and its one {@code Attempt}): the
   * steps of its success allocate nothing more (a SEND is that {@code Attempt}, reused by every
   * attempt; a RETURN one constant). So what it adds over {@code bare-call-timeout}, less what
   * {@code okretry} adds over {@code bare}, is that state alone.
   */
  @Param({
    "bare",
    "bare-call-timeout",
    "noop-interceptor",
    "okretry-add",
    "okretry",
    "okretry-deadline",
    "okretry-listener",
    "okretry-call-timeout",
    "failsafe",
    "failsafe+key",
    "resilience4j",
    "resilience4j+key"
  })
  public String library;

  private Peers.Executor executor;
  private Request get;
  private Request post;

  @Setup(Level.Trial)
  public void setUp() {
    Interceptor answer =
        chain ->
            new Response.Builder()
                .request(chain.request())
                .protocol(Protocol.HTTP_1_1)
                .code(200)
                .message("OK")
                .body(ResponseBody.create(OK_BODY, null))
                .build();
    executor = Peers.create(library, new OkHttpClient(), answer);
    get = Peers.get("http://127.0.0.1:8080");
    post = Peers.post("http://127.0.0.1:8080");
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
