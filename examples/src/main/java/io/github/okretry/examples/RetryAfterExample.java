package io.github.okretry.examples;

import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryOutcome;
import io.github.okretry.RetryPolicy;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A rate limiter answers 429 with {@code Retry-After}, first in seconds, then as an HTTP-date: each
 * time the server's wait replaces the computed backoff and is honored exactly, not jittered. Then a
 * {@code Retry-After} longer than {@code maxRetryAfter} ends the call at once. Last, the server's
 * own word: {@code X-Should-Retry: false} on a 429 whose quota is a billing limit ends the call at
 * once; {@code true} on a 500 it knows is transient makes a GET retry it. Every attempt tells the
 * server its number ({@code attemptHeader}), so a server that sheds load can shed retries first.
 */
public final class RetryAfterExample {
  /** IMF-fixdate (RFC 9110 §5.6.7), the preferred HTTP-date format. */
  private static final DateTimeFormatter HTTP_DATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);

  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      AtomicInteger requests = new AtomicInteger();
      java.util.concurrent.atomic.AtomicBoolean warmed =
          new java.util.concurrent.atomic.AtomicBoolean();
      server.setDispatcher(
          new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
              String path = request.getUrl().encodedPath();
              if (!path.equals("/quota")) {
                System.out.println(
                    "           server: " + path + " " + request.getHeaders().get("Retry-Attempt"));
              }
              if (path.equals("/billing")) {
                return new MockResponse.Builder()
                    .code(429)
                    .addHeader("X-Should-Retry", "false")
                    .build();
              }
              if (path.equals("/warming")) {
                return warmed.getAndSet(true)
                    ? new MockResponse.Builder().body("warm").build()
                    : new MockResponse.Builder()
                        .code(500)
                        .addHeader("X-Should-Retry", "true")
                        .build();
              }
              if (path.equals("/busy")) {
                return new MockResponse.Builder().code(429).addHeader("Retry-After", "120").build();
              }
              switch (requests.incrementAndGet()) {
                case 1:
                  return new MockResponse.Builder().code(429).addHeader("Retry-After", "1").build();
                case 2:
                  // The date is measured against the response's own Date header, so neither clock
                  // skew nor the 1 s resolution of HTTP-dates changes the wait.
                  Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
                  return new MockResponse.Builder()
                      .code(429)
                      .addHeader("Date", HTTP_DATE.format(now))
                      .addHeader("Retry-After", HTTP_DATE.format(now.plusSeconds(1)))
                      .build();
                default:
                  return new MockResponse.Builder().body("quota restored").build();
              }
            }
          });
      server.start();

      Timeline timeline = new Timeline(Duration.ofSeconds(3));
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .baseDelay(Duration.ofSeconds(3)) // deliberately long: Retry-After replaces it
                  .maxRetryAfter(Duration.ofSeconds(10))
                  // Honor Retry-After to the millisecond to show it plainly; by default okretry
                  // adds a
                  // random extra of up to half of it, so many rejected callers do not return at
                  // once.
                  .retryAfterSpread(0)
                  .attemptHeader("Retry-Attempt") // "attempt=N; max=M" on every attempt
                  .listener(timeline)
                  .build());
      OkHttpClient client =
          new OkHttpClient.Builder()
              .addInterceptor(retry)
              .addInterceptor(timeline.attempts())
              .build();

      timeline.restart(
          "429 with Retry-After: 1, then with an HTTP-date 1 s after the server's Date");
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/quota")).build()).execute()) {
        timeline.print(
            "caller got HTTP " + response.code() + " \"" + response.body().string() + "\"");
      }

      timeline.restart("429 with Retry-After: 120, over maxRetryAfter (10 s)");
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/busy")).build()).execute()) {
        timeline.print(
            "caller got HTTP "
                + response.code()
                + " with Retry-After: "
                + response.header("Retry-After")
                + ", at once, to decide for itself");
        Long comeBack = RetryOutcome.of(response).comeBackAtMillis();
        timeline.print(
            "RetryOutcome: come back in "
                + (comeBack == null
                    ? "?"
                    : Math.round((comeBack - System.currentTimeMillis()) / 1e3))
                + " s, at "
                + (comeBack == null ? "?" : Instant.ofEpochMilli(comeBack)));
      }
      timeline.restart("the server's word: X-Should-Retry: false on a 429, true on a 500");
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/billing")).build()).execute()) {
        timeline.print("caller got HTTP " + response.code() + ", at once: the server said no");
      }
      try (Response response =
          client.newCall(new Request.Builder().url(server.url("/warming")).build()).execute()) {
        timeline.print(
            "caller got HTTP " + response.code() + " \"" + response.body().string() + "\"");
      }
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
