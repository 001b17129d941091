package io.github.okretry.examples;

import io.github.okretry.IdempotencyKey;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryOutcome;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * What happened to my call? {@link RetryOutcome} read from what the caller holds, with no listener:
 * a GET that succeeds after two 503s, a keyed POST whose every attempt times out (the exception
 * says it, and may the card have been charged?), and a GET whose retry the budget stops and never
 * sends. First, what the policy promises at worst.
 */
public final class OutcomeExample {
  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().body("hello").build());
      for (int i = 0; i < 3; i++) {
        server.enqueue(new MockResponse.Builder().headersDelay(2, TimeUnit.SECONDS).build());
      }
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.start();

      RetryPolicy policy =
          RetryPolicy.builder().maxRetries(2).baseDelay(Duration.ofMillis(100)).build();
      OkHttpClient client =
          RetryInterceptor.create(policy)
              .install(new OkHttpClient.Builder().readTimeout(Duration.ofMillis(300)))
              .build();
      System.out.println("policy: " + policy.explain(client));

      System.out.println("--- a GET that meets two 503s");
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/flaky")).build()).execute()) {
        System.out.println(
            "caller got HTTP " + response.code() + " \"" + response.body().string() + "\"");
        print(RetryOutcome.of(response));
      }

      System.out.println("--- a keyed POST whose 3 attempts time out");
      Request pay =
          new Request.Builder()
              .url(server.url("/charges"))
              .post(RequestBody.create("{\"amount\":42}", MediaType.get("application/json")))
              .tag(IdempotencyKey.class, IdempotencyKey.of("order-42"))
              .build();
      try (Response response = client.newCall(pay).execute()) {
        System.out.println("unexpected: HTTP " + response.code());
      } catch (IOException e) {
        RetryOutcome outcome = RetryOutcome.of(e);
        System.out.println("caller got " + e);
        System.out.println(
            "  its last suppressed says: "
                + e.getSuppressed()[e.getSuppressed().length - 1].getMessage());
        print(outcome);
        if (outcome.processing() != RetryOutcome.Processing.NOT_PROCESSED) {
          System.out.println(
              "  -> the charge may have gone through: retry later with key "
                  + outcome.idempotencyKey());
        }
      }

      // The POST spent this origin's retries since its last success, and the origin has failed
      // everything for longer than two of the policy's retry schedules (2 × 0.3 s): the budget ends
      // the next failing call at once, with its response, instead of letting it wait for nothing.
      System.out.println("--- a GET to an origin that fails everything: ended at once");
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/flaky")).build()).execute()) {
        System.out.println("caller got HTTP " + response.code());
        print(RetryOutcome.of(response));
      }
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  private static void print(RetryOutcome outcome) {
    System.out.println(
        "  attempts: "
            + outcome.attempts()
            + ", requests sent: "
            + outcome.requestsSent()
            + ", waited: "
            + TimeUnit.NANOSECONDS.toMillis(outcome.waitedNanos())
            + " ms");
    System.out.println(
        "  ended: "
            + (outcome.giveUpReason() == null ? "SUCCEEDED" : outcome.giveUpReason())
            + ", key: "
            + outcome.idempotencyKey()
            + ", processed: "
            + outcome.processing());
  }
}
