package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 30 item 4 in real time, on both paths ({@code execute()} through the interceptor, {@code
 * enqueue()} through the factory): six GETs to a fresh origin under {@code QuotaPacing.PROBE}, the
 * first answered after 3 s, no quota published. The five others are held while the first is
 * pending, but no longer than {@code maxRetryAfter} or half the time they had left; then they go
 * and are answered at once. Before, they were held until the first answer or their deadline: with a
 * 1 s deadline all five failed unsent at 1 000–1 004 ms. The rule on fake time: {@link
 * ProbeHoldTest}. Bands are wide for a slow, noisy 2-core machine.
 */
@Tag("integration")
@Tag("slow") // real time, about 1 s and 3 s per path
@ExtendWith(LeakCheck.class)
class ProbeHoldIntegrationTest {

  static final int OTHERS = 5;

  /**
   * Answers 200 without a quota: the first request after {@link #firstAnswerMillis}, the rest at
   * once.
   */
  static final class SlowFirstAnswer extends Dispatcher {
    final CountDownLatch done = new CountDownLatch(1);
    final AtomicInteger requests = new AtomicInteger();
    final long firstAnswerMillis;

    SlowFirstAnswer(long firstAnswerMillis) {
      this.firstAnswerMillis = firstAnswerMillis;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
      if (requests.incrementAndGet() == 1) done.await(firstAnswerMillis, TimeUnit.MILLISECONDS);
      return new MockResponse.Builder().body("ok").build();
    }
  }

  /** What one call got ("200 ok" or an exception) and when, in ms from its start. */
  record Outcome(Object result, long elapsedMs) {}

  /**
   * Runs the first call, then, once the server has it, the others at once; returns the others'
   * outcomes.
   */
  static List<Outcome> crowd(
      String path, RetryPolicy policy, SlowFirstAnswer server, MockWebServer mws) throws Exception {
    OkHttpClient client = LeakCheck.track(new OkHttpClient.Builder().build());
    RetryingCallFactory factory = RetryingCallFactory.create(client, policy);
    OkHttpClient retrying =
        LeakCheck.track(RetryInterceptor.create(policy).install(client.newBuilder()).build());
    try {
      CompletableFuture<Outcome> first = start(path, retrying, factory, mws.url("/first"));
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (server.requests.get() < 1) {
        assertThat(System.nanoTime()).as("the first request reached the server").isLessThan(until);
        Thread.sleep(1);
      }
      List<CompletableFuture<Outcome>> others = new ArrayList<>();
      for (int i = 0; i < OTHERS; i++) {
        others.add(start(path, retrying, factory, mws.url("/other" + i)));
      }
      List<Outcome> outcomes = new ArrayList<>();
      for (CompletableFuture<Outcome> o : others) outcomes.add(o.get(10, TimeUnit.SECONDS));
      server.done.countDown(); // the first is answered now, if its deadline has not ended it
      first.get(10, TimeUnit.SECONDS);
      return outcomes;
    } finally {
      server.done.countDown();
      factory.close();
    }
  }

  static CompletableFuture<Outcome> start(
      String path, OkHttpClient retrying, RetryingCallFactory factory, okhttp3.HttpUrl url) {
    Request request = new Request.Builder().url(url).build();
    CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    long start = System.nanoTime();
    Callback done =
        new Callback() {
          @Override
          public void onResponse(Call call, Response response) throws IOException {
            try (response) {
              complete(response.code() + " " + response.body().string());
            }
          }

          @Override
          public void onFailure(Call call, IOException e) {
            complete(e);
          }

          void complete(Object result) {
            outcome.complete(new Outcome(result, (System.nanoTime() - start) / 1_000_000));
          }
        };
    if (path.equals("enqueue")) {
      factory.newCall(request).enqueue(done);
      return outcome;
    }
    // A thread per call, as callers of execute() have (OkHttp's dispatcher would queue the sixth).
    Thread caller =
        new Thread(
            () -> {
              Call call = retrying.newCall(request);
              try {
                done.onResponse(call, call.execute());
              } catch (IOException e) {
                done.onFailure(call, e);
              }
            },
            "probe-hold-caller");
    caller.start();
    return outcome;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "enqueue"})
  void aCrowdBehindASlowFirstAnswerIsSentAtHalfItsDeadlineNotFailedAtIt(String path)
      throws Exception {
    SlowFirstAnswer server = new SlowFirstAnswer(3_000);
    try (MockWebServer mws = new MockWebServer()) {
      mws.setDispatcher(server);
      mws.start();
      RetryPolicy policy =
          RetryPolicy.builder()
              .quotaPacing(QuotaPacing.PROBE)
              .deadline(Duration.ofSeconds(1))
              .build();
      List<Outcome> others = crowd(path, policy, server, mws);
      Diagnostics.println(path + ", PROBE, first answer 3 s, deadline 1 s: the others " + others);
      // Held about 500 ms (half of 1 s), then sent and answered; before: DEADLINE_EXCEEDED at ~1
      // 000 ms.
      assertThat(others)
          .allSatisfy(
              o -> {
                assertThat(o.result()).isEqualTo("200 ok");
                assertThat(o.elapsedMs()).isBetween(450L, 999L);
              });
      assertThat(server.requests.get()).isEqualTo(1 + OTHERS);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"execute", "enqueue"})
  void withoutADeadlineACrowdIsHeldNoLongerThanMaxRetryAfter(String path) throws Exception {
    SlowFirstAnswer server = new SlowFirstAnswer(3_000);
    try (MockWebServer mws = new MockWebServer()) {
      mws.setDispatcher(server);
      mws.start();
      RetryPolicy policy =
          RetryPolicy.builder()
              .quotaPacing(QuotaPacing.PROBE)
              .maxRetryAfter(Duration.ofSeconds(1))
              .build();
      List<Outcome> others = crowd(path, policy, server, mws);
      Diagnostics.println(
          path + ", PROBE, first answer 3 s, maxRetryAfter 1 s: the others " + others);
      // About 1 s; before: until the first answer, ~3 s.
      assertThat(others)
          .allSatisfy(
              o -> {
                assertThat(o.result()).isEqualTo("200 ok");
                assertThat(o.elapsedMs()).isBetween(950L, 2_200L);
              });
      assertThat(server.requests.get()).isEqualTo(1 + OTHERS);
    }
  }
}
