import com.sun.net.httpserver.HttpServer;
import io.github.okretry.Jitter;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryListener;
import io.github.okretry.RetryOutcome;
import io.github.okretry.RetryPolicy;
import io.github.okretry.RetryingCallFactory;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.internal.http2.ConnectionShutdownException;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;

/**
 * The app bench/r8-check.sh shrinks with R8 and runs: retried calls on both drivers against a
 * loopback server (the JDK's), a listener that hears network requests, and two HTTP/2 failures
 * okretry knows by class name, thrown below it. Exits 1, naming what differs, if anything does.
 */
public final class Main {

  static final List<String> problems = new ArrayList<>();

  /** Hears network requests: okretry must find the override (by reflection) or watch anyway. */
  static final class Hearing implements RetryListener {
    final List<String> network = new CopyOnWriteArrayList<>();

    @Override
    public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
      network.add(request.url().encodedPath() + " " + attempt + "." + requestInAttempt);
    }
  }

  /** Hears attempts only: okretry must find that it keeps the default onNetworkRequest. */
  static final class Quiet implements RetryListener {
    final AtomicInteger attempts = new AtomicInteger();

    @Override
    public void onAttemptStarted(Request request, int attempt) {
      attempts.incrementAndGet();
    }
  }

  /** Below okretry: fails /h2's first two attempts as a refused stream and a GOAWAY would. */
  static final class Http2FailuresBelow implements Interceptor {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public Response intercept(Chain chain) throws IOException {
      if (chain.request().url().encodedPath().equals("/h2")) {
        int n = calls.incrementAndGet();
        if (n == 1) throw new StreamResetException(ErrorCode.REFUSED_STREAM);
        if (n == 2) throw new ConnectionShutdownException();
      }
      return chain.proceed(chain.request());
    }
  }

  public static void main(String[] args) throws Exception {
    Set<String> failedOnce = ConcurrentHashMap.newKeySet();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          String path = exchange.getRequestURI().getPath();
          boolean fail = !path.equals("/h2") && failedOnce.add(path); // 503 once, then 200
          byte[] body = (fail ? "busy" : "ok").getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(fail ? 503 : 200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    server.start();
    String base = "http://127.0.0.1:" + server.getAddress().getPort();

    Hearing hearing = new Hearing();
    RetryPolicy policy =
        RetryPolicy.builder()
            .listener(hearing)
            .baseDelay(1, TimeUnit.MILLISECONDS)
            .jitter(Jitter.NONE)
            .build();
    OkHttpClient client =
        RetryInterceptor.create(policy)
            .install(new OkHttpClient.Builder())
            .addInterceptor(new Http2FailuresBelow())
            .build();

    try (Response r = client.newCall(get(base + "/blocking")).execute()) {
      check("interceptor, 503 then 200", r.code() + " " + RetryOutcome.of(r).attempts(), "200 2");
    }
    try (Response r = client.newCall(get(base + "/h2")).execute()) {
      check(
          "interceptor, REFUSED_STREAM then GOAWAY below, then 200",
          r.code() + " " + RetryOutcome.of(r).attempts(),
          "200 3");
    } catch (IOException e) {
      check("interceptor, REFUSED_STREAM then GOAWAY below, then 200", e.toString(), "200 3");
    }
    try (RetryingCallFactory factory =
        RetryingCallFactory.create(new OkHttpClient.Builder().build(), policy)) {
      String outcome = enqueue(factory.newCall(get(base + "/async")));
      check("factory enqueue, 503 then 200", outcome, "200 2");
    }
    check(
        "network requests heard",
        String.valueOf(hearing.network),
        "[/blocking 1.1, /blocking 2.1, /h2 3.1, /async 1.1, /async 2.1]");

    // The reflective look okretry's Events makes (the same code), on the shrunk classes.
    Quiet quiet = new Quiet();
    check("the look finds an override", declarer(hearing), hearing.getClass().getName());
    check("the look finds the default", declarer(quiet), RetryListener.class.getName());

    server.stop(0);
    System.out.println(problems.isEmpty() ? "OK" : "FAILED: " + problems);
    System.exit(problems.isEmpty() ? 0 : 1); // OkHttp's idle threads would hold the JVM a minute
  }

  static Request get(String url) {
    return new Request.Builder().url(url).build();
  }

  /** What okretry's Events concludes (a synthetic forwarder from desugaring is no override). */
  static String declarer(RetryListener listener) {
    try {
      java.lang.reflect.Method m =
          listener.getClass().getMethod("onNetworkRequest", Request.class, int.class, int.class);
      return (m.isSynthetic() ? RetryListener.class : m.getDeclaringClass()).getName();
    } catch (NoSuchMethodException e) {
      return e.toString();
    }
  }

  static String enqueue(Call call) throws Exception {
    CompletableFuture<String> outcome = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response response) {
            try (Response r = response) {
              outcome.complete(r.code() + " " + RetryOutcome.of(r).attempts());
            }
          }

          @Override
          public void onFailure(Call c, IOException e) {
            outcome.complete(e.toString());
          }
        });
    return outcome.get(10, TimeUnit.SECONDS);
  }

  static void check(String what, String got, String expected) {
    boolean ok = got.equals(expected);
    System.out.println(what + ": " + got + (ok ? "" : "  (expected " + expected + ")"));
    if (!ok) problems.add(what);
  }
}
