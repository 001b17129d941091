package io.github.okretry.examples;

import io.github.okretry.IdempotencyKey;
import io.github.okretry.RetryInterceptor;
import io.github.okretry.RetryOutcome;
import io.github.okretry.RetryPolicy;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
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
import okio.BufferedSink;
import okio.ByteString;
import okio.Okio;
import okio.Source;

/**
 * Uploads streamed from an {@code InputStream}: a one-shot body, which OkHttp can write once. The
 * server stores each upload, then the connection drops before its answer. okretry keeps what the
 * body wrote (up to 1 MiB a call, 16 MiB for all calls of a policy, by default) and sends the same
 * bytes again with the same key; the server sees the key, compares the bytes and answers. An upload
 * of 2 MiB is not kept, so it is not sent again: its outcome says why.
 */
public final class StreamedUploadExample {

  /** Stores uploads by key; the first answer of each is lost. */
  static final class UploadServer extends Dispatcher {
    private final Map<String, ByteString> stored = new HashMap<>();

    @Override
    public synchronized MockResponse dispatch(RecordedRequest request) {
      String key = request.getHeaders().get("Idempotency-Key");
      ByteString body = request.getBody();
      if (key == null || body == null) return new MockResponse.Builder().code(400).build();
      ByteString before = stored.get(key);
      System.out.printf(
          "           server: %s, %d KiB, sha-256 %s…%n",
          key, body.size() / 1024, body.sha256().hex().substring(0, 12));
      if (before == null) {
        stored.put(key, body);
        System.out.println("           server: stored; the connection drops before the answer");
        return new MockResponse.Builder()
            .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)
            .build();
      }
      String same = before.equals(body) ? "the same bytes" : "OTHER bytes";
      System.out.println("           server: key seen before, " + same + ": stored once");
      return new MockResponse.Builder().body("stored once, " + same).build();
    }
  }

  /** A body read from {@code in} as it is sent: OkHttp can send it once. */
  static RequestBody streamed(InputStream in, long length) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return MediaType.get("application/octet-stream");
      }

      @Override
      public long contentLength() {
        return length;
      }

      @Override
      public boolean isOneShot() {
        return true;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        try (Source source = Okio.source(in)) {
          sink.writeAll(source);
        }
      }
    };
  }

  public static void main(String[] args) throws Exception {
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(new UploadServer());
      server.start();
      OkHttpClient client =
          RetryInterceptor.create(RetryPolicy.builder().baseDelay(Duration.ofMillis(20)).build())
              .install(new OkHttpClient.Builder())
              .build();
      Random random = new Random(44);
      for (int kib : new int[] {512, 2048}) {
        byte[] bytes = new byte[kib * 1024];
        random.nextBytes(bytes);
        String key = "upload-" + kib;
        System.out.printf("client: POST %d KiB streamed from an InputStream, key %s%n", kib, key);
        Request request =
            new Request.Builder()
                .url(server.url("/uploads"))
                .tag(IdempotencyKey.class, IdempotencyKey.of(key))
                .post(streamed(new ByteArrayInputStream(bytes), bytes.length))
                .build();
        try (Response response = client.newCall(request).execute()) {
          System.out.printf(
              "client: HTTP %d \"%s\"; %s%n",
              response.code(), response.body().string(), RetryOutcome.of(response));
        } catch (IOException e) {
          System.out.printf("client: %s%n        %s%n", e, RetryOutcome.of(e));
        }
      }
      System.out.printf("server saw %d requests%n", server.getRequestCount());
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
