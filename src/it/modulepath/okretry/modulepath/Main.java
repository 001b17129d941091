package okretry.modulepath;

import io.github.okretry.RetryBudget;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Run by ModulePathIT on the module path: {@code Main REFUSED_PORT URL}. Sends one GET to a port
 * nobody listens on and one to URL, where the test's server answers 503 and then 200, and prints
 * what each ended with and how many attempts it took.
 */
public final class Main {
  public static void main(String[] args) throws IOException {
    AtomicInteger attempts = new AtomicInteger();
    OkHttpClient client =
        new OkHttpClient.Builder()
            // unlimited(): the second call's retry comes after the first call's, with no success
            // between them, which the default budget would refuse (one call's retries since the
            // last success); the RetryBudget class on the module path is checked too.
            .addInterceptor(
                RetryInterceptor.create(
                    RetryPolicy.builder()
                        .maxRetries(1)
                        .retryBudget(RetryBudget.unlimited())
                        .build()))
            .addInterceptor(
                chain -> { // inside the retry loop: sees every attempt
                  attempts.incrementAndGet();
                  return chain.proceed(chain.request());
                })
            .build();

    Request refused = new Request.Builder().url("http://127.0.0.1:" + args[0] + "/").build();
    try (Response response = client.newCall(refused).execute()) {
      System.out.println("refused: unexpected " + response.code());
    } catch (IOException e) {
      System.out.println(
          "refused: " + e.getClass().getName() + " after " + attempts.getAndSet(0) + " attempts");
    }

    try (Response response = client.newCall(new Request.Builder().url(args[1]).build()).execute()) {
      System.out.println(
          "server: "
              + response.code()
              + " "
              + response.body().string()
              + " after "
              + attempts.get()
              + " attempts");
    }
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }
}
