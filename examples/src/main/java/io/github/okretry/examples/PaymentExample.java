package io.github.okretry.examples;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A payment whose response is lost: the server charges the card, then the connection drops before
 * the answer arrives. The retry carries the same Idempotency-Key, so the server recognizes it and
 * returns the stored receipt instead of charging again: exactly one charge.
 *
 * <p>However many times the POST reaches the server (okretry's retry, or OkHttp silently retrying
 * on a fresh connection underneath it), the key makes every copy after the first a harmless replay.
 */
public final class PaymentExample {

  /** A payment API that de-duplicates by key, as Stripe-style APIs do. */
  static final class PaymentServer extends Dispatcher {
    private final Map<String, String> receiptsByKey = new HashMap<>();
    private int charges;
    private boolean responseLost;

    @Override
    public synchronized MockResponse dispatch(RecordedRequest request) {
      String key = request.getHeaders().get("Idempotency-Key");
      String body = request.getBody() == null ? "" : request.getBody().utf8();
      System.out.println(
          "           server: "
              + request.getMethod()
              + " "
              + request.getUrl().encodedPath()
              + " "
              + body
              + " key="
              + (key == null ? "none" : Timeline.abbreviate(key)));
      if (key == null) {
        return new MockResponse.Builder().code(400).body("Idempotency-Key required").build();
      }
      String stored = receiptsByKey.get(key);
      if (stored != null) {
        System.out.println(
            "           server: key seen before: replaying the stored receipt, no new charge");
        return new MockResponse.Builder()
            .addHeader("Idempotent-Replayed", "true")
            .body(stored)
            .build();
      }
      charges++;
      String receipt = "{\"charge\":\"ch_" + charges + "\",\"amount\":4200,\"currency\":\"eur\"}";
      receiptsByKey.put(key, receipt);
      System.out.println("           server: CHARGED the card: ch_" + charges + ", 42.00 EUR");
      if (!responseLost) {
        responseLost = true;
        System.out.println(
            "           server: ... and the connection drops before the response is sent");
        return new MockResponse.Builder()
            .body(receipt)
            .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)
            .build();
      }
      return new MockResponse.Builder().body(receipt).build();
    }

    synchronized int charges() {
      return charges;
    }
  }

  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      PaymentServer payments = new PaymentServer();
      server.setDispatcher(payments);
      server.start();

      Timeline timeline = new Timeline();
      RetryInterceptor retry =
          RetryInterceptor.create(RetryPolicy.builder().listener(timeline).build());
      OkHttpClient client =
          new OkHttpClient.Builder()
              .addInterceptor(retry)
              .addInterceptor(timeline.attempts())
              .build();

      // No IdempotencyKey tag: a POST gets a generated key, the same on every attempt.
      Request pay =
          new Request.Builder()
              .url(server.url("/charges"))
              .post(RequestBody.create("{\"amount\":4200}", MediaType.get("application/json")))
              .build();
      try (Response response = client.newCall(pay).execute()) {
        timeline.print(
            "caller got HTTP "
                + response.code()
                + " "
                + response.body().string()
                + (response.header("Idempotent-Replayed") != null
                    ? " (replayed by the server)"
                    : ""));
      } catch (IOException e) {
        timeline.print("caller got " + e);
      }
      timeline.print("server received the POST " + server.getRequestCount() + " times");
      timeline.print("charges: " + payments.charges());
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
