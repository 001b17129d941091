package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.logging.LogRecord;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The leak checker itself ({@link LeakCheck}): silent on a clean call, and it does catch each kind
 * of leak.
 */
@Tag("integration")
class LeakCheckTest {

  static final Duration SHORT_GRACE = Duration.ofMillis(300);

  @Test
  void cleanCallPasses() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    OkHttpClient client = client(new FakeTime());
    try (MockWebServer server = new MockWebServer()) {
      // The 503 has a body, so its connection stays allocated until okretry closes it.
      server.enqueue(new MockResponse.Builder().code(503).body("busy").build());
      server.enqueue(new MockResponse.Builder().body("ok").build());
      server.start();
      try (Response r =
          client.newCall(new Request.Builder().url(server.url("/")).build()).execute()) {
        assertThat(r.body().string()).isEqualTo("ok");
      }
    }
    List<String> problems =
        LeakCheck.check(List.of(client), before, new ArrayList<>(), SHORT_GRACE);
    Diagnostics.println("LeakCheck: clean call -> " + problems);
    assertThat(problems).isEmpty();
  }

  @Test
  void unclosedResponseIsCaught() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    OkHttpClient client = client(new FakeTime());
    Response leaked;
    try (MockWebServer server = new MockWebServer()) {
      server.enqueue(new MockResponse.Builder().body("never read").build());
      server.start();
      leaked = client.newCall(new Request.Builder().url(server.url("/")).build()).execute();
    }
    List<String> problems =
        LeakCheck.check(List.of(client), before, new ArrayList<>(), SHORT_GRACE);
    Diagnostics.println("LeakCheck: unclosed response -> " + problems);
    leaked.close();
    assertThat(problems).anyMatch(p -> p.contains("1 connection(s) still allocated"));
  }

  @Test
  void leftoverThreadIsCaught() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    CountDownLatch release = new CountDownLatch(1);
    Thread straggler =
        new Thread(
            () -> {
              try {
                release.await();
              } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
              }
            },
            "straggler");
    straggler.start();
    List<String> problems = LeakCheck.check(List.of(), before, new ArrayList<>(), SHORT_GRACE);
    Diagnostics.println("LeakCheck: leftover thread -> " + problems);
    release.countDown();
    straggler.join();
    assertThat(problems).anyMatch(p -> p.contains("straggler"));
  }

  @Test
  void okhttpLeakWarningIsCaught() throws Exception {
    List<LogRecord> warnings = new ArrayList<>();
    warnings.add(
        new LogRecord(
            java.util.logging.Level.WARNING,
            "A connection to http://localhost/ was leaked. Did you forget to close a response"
                + " body?"));
    List<String> problems =
        LeakCheck.check(
            List.of(), new HashSet<>(Thread.getAllStackTraces().keySet()), warnings, SHORT_GRACE);
    Diagnostics.println("LeakCheck: OkHttp warning -> " + problems);
    assertThat(problems).anyMatch(p -> p.contains("was leaked"));
  }

  static OkHttpClient client(FakeTime time) {
    return new OkHttpClient.Builder()
        .addInterceptor(RetryInterceptor.create(RetryPolicy.builder().timeSource(time).build()))
        .build();
  }
}
