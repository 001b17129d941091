package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 43, item 2: nothing of okretry stays on a thread after a call returns, so a web
 * application's class loader is collected on redeploy. okretry is loaded in a class loader of its
 * own (as a web application's {@code WEB-INF/lib} is; OkHttp, okio and Kotlin from the parent, as a
 * container's shared libraries), its calls run on pooled threads of an executor made outside it,
 * which outlive it; the loader, dropped, must be collected. Both drivers: the interceptor's {@code
 * execute()} on a pooled thread, and the factory's {@code execute()} and {@code enqueue()}, whose
 * OkHttp dispatcher runs on the same pool.
 */
@Tag("integration")
@Tag("slow")
class ClassLoaderLeakTest {

  @Test
  void okretrysClassLoaderIsCollectedOnceDroppedThoughThePoolThatRanItsCallsLives()
      throws Exception {
    // Made outside the loader, its threads started here: they outlive it, as a container's do. (A
    // thread started under the application's code inherits an access control context that holds
    // the application's loader until the thread ends.)
    ThreadPoolExecutor pool = (ThreadPoolExecutor) Executors.newFixedThreadPool(2);
    pool.prestartAllCoreThreads();
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(
          new Dispatcher() {
            int n;

            @Override
            public synchronized MockResponse dispatch(RecordedRequest request) {
              if (request.getUrl().encodedPath().equals("/warm-up")) {
                return new MockResponse.Builder().build();
              }
              // Every other request is refused, so each call retries once
              return n++ % 2 == 0
                  ? new MockResponse.Builder().code(503).build()
                  : new MockResponse.Builder().body("ok").build();
            }
          });
      server.start();
      warmUp(server.url("/warm-up").toString());
      WeakReference<ClassLoader> loader =
          runCallsInALoaderOfTheirOwn(pool, server.url("/").toString());
      assertThat(server.getRequestCount()).as("each of 4 calls retried once").isEqualTo(8 + 8);
      assertThat(collected(loader))
          .as(
              () ->
                  "okretry's class loader is collected: nothing of it stays on the pool's threads;"
                      + " threads alive: "
                      + Thread.getAllStackTraces().keySet().stream()
                          .map(Thread::getName)
                          .sorted()
                          .toList())
          .isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Loads okretry and {@link App} in a loader of their own, runs {@link App} on {@code pool}, and
   * returns the dropped loader, weakly held; nothing of it is left in this frame.
   */
  private static WeakReference<ClassLoader> runCallsInALoaderOfTheirOwn(
      ExecutorService pool, String url) throws Exception {
    OkretryFirst loader =
        new OkretryFirst(
            new URL[] {
              RetryInterceptor.class.getProtectionDomain().getCodeSource().getLocation(),
              App.class.getProtectionDomain().getCodeSource().getLocation()
            },
            ClassLoaderLeakTest.class.getClassLoader());
    Class<?> app = loader.loadClass(App.class.getName());
    assertThat(app.getClassLoader()).isSameAs(loader);
    assertThat(loader.loadClass(RetryInterceptor.class.getName()).getClassLoader())
        .isSameAs(loader);
    @SuppressWarnings("unchecked")
    Callable<String> calls =
        (Callable<String>)
            app.getConstructor(String.class, ExecutorService.class).newInstance(url, pool);
    assertThat(pool.submit(calls).get(20, TimeUnit.SECONDS)).isEqualTo("ok ok ok ok");
    loader.close();
    return new WeakReference<>(loader);
  }

  /**
   * Starts the threads OkHttp and okio keep for a while (OkHttp's task runner, okio's watchdog)
   * from here: a thread started under okretry's code inherits an access control context that holds
   * okretry's loader until the thread ends, a minute after its last task, whoever started it.
   */
  private static void warmUp(String url) throws Exception {
    // Several connections at once: each connect is a task of OkHttp's task runner (fast fallback),
    // beside its pool's cleanup, so it keeps several threads, started from here; a retry's new
    // connection (ConnectionCheck) then finds one idle rather than starting one under okretry.
    OkHttpClient plain =
        new OkHttpClient.Builder()
            .callTimeout(Duration.ofSeconds(10))
            .connectionPool(new okhttp3.ConnectionPool(0, 1, TimeUnit.SECONDS)) // none reused
            .build();
    ExecutorService warmers = Executors.newFixedThreadPool(4);
    try {
      java.util.List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
      for (int i = 0; i < 8; i++) {
        done.add(
            warmers.submit(
                () -> {
                  try (Response r =
                      plain.newCall(new Request.Builder().url(url).build()).execute()) {
                    return r.body().string();
                  }
                }));
      }
      for (java.util.concurrent.Future<?> f : done) f.get(20, TimeUnit.SECONDS);
    } finally {
      warmers.shutdownNow();
    }
    plain.connectionPool().evictAll();
  }

  /** True once {@code ref} is cleared, after a bounded number of collections. */
  private static boolean collected(WeakReference<?> ref) throws InterruptedException {
    for (int i = 0; i < 100 && ref.get() != null; i++) {
      System.gc();
      if (ref.get() == null) break;
      Thread.sleep(100); // a thread that ran okretry's code (the factory's scheduler) may be ending
    }
    return ref.get() == null;
  }

  /**
   * Loads okretry's classes (the library's and this test's) itself, everything else from its
   * parent: a web application's loader with OkHttp shared by the container.
   */
  static final class OkretryFirst extends URLClassLoader {
    OkretryFirst(URL[] urls, ClassLoader parent) {
      super(urls, parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.startsWith("io.github.okretry.")) return super.loadClass(name, resolve);
      synchronized (getClassLoadingLock(name)) {
        Class<?> c = findLoadedClass(name);
        if (c == null) c = findClass(name);
        if (resolve) resolveClass(c);
        return c;
      }
    }
  }

  /**
   * The application: made and run inside the loader. Four calls, each retried once: through the
   * interceptor on the pooled thread that runs it; through the factory by {@code execute()}, and by
   * {@code enqueue()} on an OkHttp dispatcher that runs on the same pool; a keyless POST through
   * the interceptor. Then it releases what it made, as an application stopping would.
   */
  public static final class App implements Callable<String> {
    private final String url;
    private final ExecutorService pool;

    public App(String url, ExecutorService pool) {
      this.url = url;
      this.pool = pool;
    }

    @Override
    public String call() throws Exception {
      RetryPolicy policy =
          RetryPolicy.builder().baseDelay(Duration.ofMillis(1)).jitter(Jitter.NONE).build();
      OkHttpClient plain =
          new OkHttpClient.Builder().dispatcher(new okhttp3.Dispatcher(pool)).build();
      OkHttpClient client = RetryInterceptor.create(policy).install(plain.newBuilder()).build();
      RetryingCallFactory calls = RetryingCallFactory.create(plain, policy);
      try {
        Request get = new Request.Builder().url(url).build();
        StringBuilder bodies = new StringBuilder();
        try (Response r = client.newCall(get).execute()) {
          bodies.append(r.body().string());
        }
        try (Response r = calls.newCall(get).execute()) {
          bodies.append(' ').append(r.body().string());
        }
        CompletableFuture<String> enqueued = new CompletableFuture<>();
        calls
            .newCall(get)
            .enqueue(
                new Callback() {
                  @Override
                  public void onResponse(Call call, Response response) throws IOException {
                    try (Response r = response) {
                      enqueued.complete(r.body().string());
                    }
                  }

                  @Override
                  public void onFailure(Call call, IOException e) {
                    enqueued.completeExceptionally(e);
                  }
                });
        bodies.append(' ').append(enqueued.get(10, TimeUnit.SECONDS));
        Request post =
            new Request.Builder()
                .url(url)
                .tag(IdempotencyKey.class, IdempotencyKey.none())
                .post(RequestBody.create("order", MediaType.get("text/plain")))
                .build();
        try (Response r = client.newCall(post).execute()) {
          bodies.append(' ').append(r.body().string());
        }
        return bodies.toString();
      } finally {
        calls.close();
        plain.connectionPool().evictAll();
      }
    }
  }
}
