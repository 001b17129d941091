package io.github.okretry.examples;

import io.github.okretry.HedgingPolicy;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryPolicy;
import io.github.okretry.RetryingCallFactory;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * {@link HttpClientSpans} with the OpenTelemetry SDK and an in-memory exporter: one HTTP client
 * span per request sent, {@code http.request.resend_count} on each resend. Two calls inside a
 * {@code checkout} span: one that okretry retries twice, and one that OkHttp repeats by itself (a
 * 503 with {@code Retry-After: 0}) before okretry retries it. Then one call through a {@link
 * RetryingCallFactory} that hedges: its first request gets no answer for a second, a hedge goes
 * after 50 ms and answers, and counts as a resend.
 */
public final class OpenTelemetryExample {
  public static void main(String[] args) throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (MockWebServer server = new MockWebServer();
        SdkTracerProvider tracing =
            SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                .build()) {
      // call 1: okretry retries twice
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().body("in stock").build());
      // call 2: OkHttp repeats the first 503 itself (Retry-After: 0); okretry retries the second
      server.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build());
      server.enqueue(new MockResponse.Builder().code(503).build());
      server.enqueue(new MockResponse.Builder().body("reserved").build());
      // call 3 (hedged), after one call that shows the origin answers (okretry hedges no origin
      // before that): the first request stalls for a second; the hedge is answered at once
      server.enqueue(new MockResponse.Builder().body("ok").build());
      server.enqueue(
          new MockResponse.Builder().headersDelay(1, TimeUnit.SECONDS).body("slow price").build());
      server.enqueue(new MockResponse.Builder().body("price").build());
      server.start();

      Tracer tracer = tracing.get("okretry-example");
      RetryInterceptor retry =
          RetryInterceptor.create(
              RetryPolicy.builder()
                  .maxRetries(3)
                  .baseDelay(Duration.ofMillis(50))
                  .listener(new HttpClientSpans(tracer))
                  .build());
      OkHttpClient client = retry.install(new OkHttpClient.Builder()).build();

      OkHttpClient plain = new OkHttpClient();
      RetryingCallFactory hedged =
          RetryingCallFactory.create(
              plain,
              RetryPolicy.builder().listener(new HttpClientSpans(tracer)).build(),
              HedgingPolicy.after(50, TimeUnit.MILLISECONDS));
      Span checkout = tracer.spanBuilder("checkout").startSpan();
      try (Scope ignored = checkout.makeCurrent()) {
        get(client, server, "/inventory/42");
        get(client, server, "/reservations/42");
        get(hedged, server, "/prices");
        get(hedged, server, "/prices/42");
      } finally {
        checkout.end();
        hedged.close();
        plain.dispatcher().executorService().shutdown();
        plain.connectionPool().evictAll();
      }

      List<SpanData> spans = exporter.getFinishedSpanItems();
      Map<String, String> names = new HashMap<>();
      for (SpanData span : spans) names.put(span.getSpanId(), span.getName());
      System.out.println("finished spans:");
      for (SpanData span : spans) {
        System.out.println("  " + describe(span, names.getOrDefault(span.getParentSpanId(), "-")));
      }
      System.out.println(
          "(a span without status_code ended when OkHttp sent its request again by itself, whose"
              + " response went to OkHttp, not to okretry, or when a hedge answered first and that"
              + " attempt was canceled: /prices/42)");
      System.out.println("server saw " + server.getRequestCount() + " requests");
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }

  private static void get(Call.Factory client, MockWebServer server, String path) throws Exception {
    try (Response response =
        client.newCall(new Request.Builder().url(server.url(path)).build()).execute()) {
      System.out.println(
          "GET " + path + " -> HTTP " + response.code() + " \"" + response.body().string() + "\"");
    }
  }

  /** One span on one line: name, kind, parent, path and the attributes this example is about. */
  static String describe(SpanData span, String parent) {
    Attributes a = span.getAttributes();
    String url = a.get(HttpClientSpans.URL_FULL);
    return String.format(
        "%-8s %-8s parent=%-8s %-18s resend_count=%-4s status_code=%-4s error.type=%-4s status=%s",
        span.getName(),
        span.getKind(),
        parent,
        url == null ? "" : url.substring(url.indexOf('/', url.indexOf("//") + 2)),
        orDash(a.get(HttpClientSpans.HTTP_REQUEST_RESEND_COUNT)),
        orDash(a.get(HttpClientSpans.HTTP_RESPONSE_STATUS_CODE)),
        orDash(a.get(HttpClientSpans.ERROR_TYPE)),
        span.getStatus().getStatusCode());
  }

  private static String orDash(Object value) {
    return value == null ? "-" : value.toString();
  }
}
