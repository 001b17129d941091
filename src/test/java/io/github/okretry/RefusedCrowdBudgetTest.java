package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.github.okretry.internal.TimeSource;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicIntegerArray;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 30, defect 2: a 429 retry that the crowd pacer refuses at its ceiling ({@code
 * RETRY_AFTER_TOO_LONG}, a local 429, nothing sent) costs no token. A burst of 300 calls in 0.9 s
 * through one client against a limiter of 5 per second, then the same burst again a minute later,
 * on each driver on fake time (the interceptor on {@link TurnTakingTime}, the factory on {@link
 * FakeScheduler}; both drivers make the same timeline): the budget's balance falls by exactly half
 * a token per retry that reached the server. Before the fix the first burst kept the price of every
 * retry it decided, sent or refused, and emptied the budget, so the second burst got no retry at
 * all. {@code -Dokretry.printTables=true} prints the numbers.
 */
@Tag("unit")
@ExtendWith(LeakCheck.class)
@ParameterizedClass
@EnumSource(Driver.class)
class RefusedCrowdBudgetTest {

  static final int CALLS = 300;
  static final long EVERY_NANOS = 3_000_000L; // one call every 3 ms: 300 in 0.9 s
  static final long GAP_NANOS = 200_000_000L; // the limiter's: 5 per second

  private final Driver driver;

  RefusedCrowdBudgetTest(Driver driver) {
    this.driver = driver;
  }

  @Test
  void aRetryThePacerRefusesAtItsCeilingCostsNoToken() throws Exception {
    // The default budget, but first attempts deposit nothing and there is no reserve: every
    // change of the balance is then a retry's price or its refund.
    RetryBudget budget = RetryBudget.builder().percentCanRetry(0).minRetriesPerSecond(0).build();
    Crowd crowd = driver == Driver.BLOCKING ? new BlockingCrowd(budget) : new AsyncCrowd(budget);
    Burst first = crowd.burst();
    crowd.advance(Duration.ofMinutes(1)); // the pacer has forgotten the first burst
    Burst second = crowd.burst();
    Diagnostics.printf(
        "%s, 300 calls in 0.9 s against 5/s, twice:%n  first  %s%n  second %s%n  balance %.1f%n",
        driver, first, second, budget.availableTokens());
    for (Burst b : List.of(first, second)) {
      assertThat(b.refusedAtCeiling())
          .as("calls the pacer refused at their ceiling")
          .isGreaterThanOrEqualTo(100);
      assertThat(b.localRefusals()).as("local 429s").isEqualTo(b.refusedAtCeiling());
      assertThat(b.retriesStarted())
          .as("retries the listener saw start")
          .isEqualTo(b.retriesSent());
      // Each call the pacer refused had its retry paid for when it was decided, and never sent it.
      assertThat(b.retriesScheduled()).isEqualTo(b.retriesSent() + b.refusedAtCeiling());
      assertThat(b.tokensSpent())
          .as("tokens spent: half a token per retry sent")
          .isCloseTo(0.5 * b.retriesSent(), within(1e-9));
    }
    assertThat(second.retriesSent()).as("retries sent in the second burst").isPositive();
  }

  /**
   * One burst's numbers: calls that ended with the server's 200 or with a local 429 from the pacer,
   * retries that reached the server and that the listener saw start and scheduled, calls the pacer
   * refused at their ceiling ({@code onGaveUp} with {@code RETRY_AFTER_TOO_LONG}), tokens spent,
   * and every reason calls gave up for.
   */
  record Burst(
      int ok,
      int localRefusals,
      int retriesSent,
      int retriesStarted,
      int retriesScheduled,
      int refusedAtCeiling,
      double tokensSpent,
      Map<GiveUpReason, Integer> gaveUp) {}

  /**
   * nginx's {@code limit_req} without burst, on the fake clock: admits a request only if {@link
   * #GAP_NANOS} passed since the last one it admitted, and answers the rest {@code 429} with {@code
   * Retry-After: 1}. Counts the requests of each call (its {@code Integer} tag).
   */
  static final class Limiter implements Interceptor {
    private final TimeSource time;
    private long lastAdmittedNanos = Long.MIN_VALUE / 2;
    private final AtomicIntegerArray requests = new AtomicIntegerArray(CALLS);

    Limiter(TimeSource time) {
      this.time = time;
    }

    @Override
    public Response intercept(Chain chain) {
      Request request = chain.request();
      requests.incrementAndGet(request.tag(Integer.class));
      boolean admitted;
      synchronized (this) {
        long now = time.nanoTime();
        admitted = now - lastAdmittedNanos >= GAP_NANOS;
        if (admitted) lastAdmittedNanos = now;
      }
      Response.Builder b =
          new Response.Builder()
              .request(request)
              .protocol(Protocol.HTTP_1_1)
              .code(admitted ? 200 : 429)
              .message(admitted ? "OK" : "Too Many Requests")
              .body(ResponseBody.create("", null));
      if (!admitted) b.header("Retry-After", "1");
      return b.build();
    }

    /**
     * Requests beyond each call's first since the last call: the retries that reached the server.
     */
    int retriesSentThenReset() {
      int retries = 0;
      for (int i = 0; i < CALLS; i++) retries += Math.max(0, requests.getAndSet(i, 0) - 1);
      return retries;
    }
  }

  /** What the listener hears, counted. Calls run one at a time on either driver: no races. */
  static final class Counts implements RetryListener {
    int retriesStarted;
    int retriesScheduled;
    final Map<GiveUpReason, Integer> gaveUp = new TreeMap<>();

    @Override
    public synchronized void onAttemptStarted(Request request, int attempt) {
      if (attempt > 1) retriesStarted++;
    }

    @Override
    public synchronized void onRetryScheduled(
        Request request, int attempt, String reason, long delayNanos) {
      retriesScheduled++;
    }

    @Override
    public synchronized void onGaveUp(
        Request request, int attempts, GiveUpReason reason, String lastFailure) {
      gaveUp.merge(reason, 1, Integer::sum);
    }

    synchronized void reset() {
      retriesStarted = 0;
      retriesScheduled = 0;
      gaveUp.clear();
    }
  }

  /**
   * A client of issue 14's burst settings (as CrowdTest's) on one driver, with the limiter as its
   * server: {@link #burst} sends the 300 calls and counts what they cost.
   */
  abstract static class Crowd {
    final Counts counts = new Counts();
    final RetryBudget budget;
    final Limiter limiter;
    final Interceptor server;
    final RetryPolicy policy;

    /** Issue 14's burst settings, as CrowdTest's. */
    static RetryPolicy.Builder burstPolicy() {
      return RetryPolicy.builder()
          .maxRetries(20)
          .deadline(Duration.ofSeconds(20))
          .maxRetryAfter(Duration.ofSeconds(5));
    }

    /**
     * {@code policy} (its budget, time, randomness and listener set here) against {@code server},
     * else the {@link Limiter}.
     */
    Crowd(
        RetryBudget budget,
        TimeSource time,
        @org.jspecify.annotations.Nullable Interceptor server,
        RetryPolicy.Builder policy) {
      this.budget = budget;
      this.limiter = new Limiter(time);
      this.server = server != null ? server : limiter;
      this.policy =
          policy
              .retryBudget(budget)
              .timeSource(time)
              .random(new SplittableRandom(30)::nextLong)
              .listener(counts)
              .build();
    }

    /**
     * Sends request {@code i} {@code i × EVERY_NANOS} from now; returns each one's {@link
     * #outcome}.
     */
    List<String> run(List<Request> requests) throws Exception {
      return run(requests, EVERY_NANOS);
    }

    /**
     * Sends request {@code i} {@code i × everyNanos} from now; returns each one's {@link #outcome}.
     */
    abstract List<String> run(List<Request> requests, long everyNanos) throws Exception;

    abstract void advance(Duration d);

    Burst burst() throws Exception {
      counts.reset();
      double tokensBefore = budget.availableTokens();
      List<Request> requests = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        requests.add(
            new Request.Builder().url("http://api.test/items").tag(Integer.class, i).build());
      }
      List<String> outcomes = run(requests);
      synchronized (counts) {
        return new Burst(
            (int) outcomes.stream().filter("200"::equals).count(),
            (int) outcomes.stream().filter("429 local"::equals).count(),
            limiter.retriesSentThenReset(),
            counts.retriesStarted,
            counts.retriesScheduled,
            counts.gaveUp.getOrDefault(GiveUpReason.RETRY_AFTER_TOO_LONG, 0),
            tokensBefore - budget.availableTokens(),
            new TreeMap<>(counts.gaveUp));
      }
    }

    /** A call's status, with " local" for a response okretry made in the origin's stead. */
    static String outcome(Response r) {
      return r.code() + (r.message().startsWith("Throttled locally") ? " local" : "");
    }
  }

  /**
   * {@link RetryInterceptor}: each call's {@code execute()} on a thread of its own, taking turns on
   * {@link TurnTakingTime}.
   */
  static final class BlockingCrowd extends Crowd {
    private final TurnTakingTime time;
    private final OkHttpClient client;

    BlockingCrowd(RetryBudget budget) {
      this(budget, new TurnTakingTime(), null, null);
    }

    /** {@code server} made on the crowd's clock; {@code policy} as {@link Crowd}'s. */
    BlockingCrowd(
        RetryBudget budget,
        java.util.function.Function<TimeSource, Interceptor> server,
        RetryPolicy.Builder policy) {
      this(budget, new TurnTakingTime(), server, policy);
    }

    private BlockingCrowd(
        RetryBudget budget,
        TurnTakingTime time,
        java.util.function.@org.jspecify.annotations.Nullable Function<TimeSource, Interceptor>
            server,
        RetryPolicy.@org.jspecify.annotations.Nullable Builder policy) {
      super(
          budget,
          time,
          server != null ? server.apply(time) : null,
          policy != null ? policy : burstPolicy());
      this.time = time;
      this.client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .addInterceptor(RetryInterceptor.create(this.policy))
                  .addInterceptor(this.server)
                  .build());
    }

    @Override
    List<String> run(List<Request> requests, long everyNanos) throws Exception {
      String[] outcomes = new String[requests.size()];
      List<Callable<Void>> tasks = new ArrayList<>();
      for (int i = 0; i < requests.size(); i++) {
        int n = i;
        tasks.add(
            () -> {
              try (Response r = client.newCall(requests.get(n)).execute()) {
                outcomes[n] = outcome(r);
              }
              return null;
            });
      }
      time.runAll(tasks, everyNanos);
      return List.of(outcomes);
    }

    @Override
    void advance(Duration d) {
      time.advance(d);
    }
  }

  /**
   * {@link RetryingCallFactory#enqueue}: the client's dispatcher and the factory's waits on {@link
   * FakeScheduler}.
   */
  static final class AsyncCrowd extends Crowd {
    private final FakeTime time;
    private final FakeScheduler scheduler;
    private final RetryingCallFactory factory;

    AsyncCrowd(RetryBudget budget) {
      this(budget, new FakeTime(), null, null);
    }

    /** {@code server} made on the crowd's clock; {@code policy} as {@link Crowd}'s. */
    AsyncCrowd(
        RetryBudget budget,
        java.util.function.Function<TimeSource, Interceptor> server,
        RetryPolicy.Builder policy) {
      this(budget, new FakeTime(), server, policy);
    }

    private AsyncCrowd(
        RetryBudget budget,
        FakeTime time,
        java.util.function.@org.jspecify.annotations.Nullable Function<TimeSource, Interceptor>
            server,
        RetryPolicy.@org.jspecify.annotations.Nullable Builder policy) {
      super(
          budget,
          time,
          server != null ? server.apply(time) : null,
          policy != null ? policy : burstPolicy());
      this.time = time;
      this.scheduler = new FakeScheduler(time);
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .dispatcher(new Dispatcher(scheduler))
                  .addInterceptor(this.server)
                  .build());
      this.factory = RetryingCallFactory.create(client, this.policy, scheduler);
    }

    @Override
    List<String> run(List<Request> requests, long everyNanos) {
      String[] outcomes = new String[requests.size()];
      for (int i = 0; i < requests.size(); i++) {
        int n = i;
        Call call = factory.newCall(requests.get(i));
        scheduler.executeAfter(
            () ->
                call.enqueue(
                    new Callback() {
                      @Override
                      public void onResponse(Call c, Response response) {
                        outcomes[n] = outcome(response);
                        response.close();
                      }

                      @Override
                      public void onFailure(Call c, IOException e) {
                        outcomes[n] = "failed: " + e;
                      }
                    }),
            i * everyNanos);
      }
      scheduler.runUntilIdle();
      assertThat(outcomes).as("every call answered").doesNotContainNull();
      return List.of(outcomes);
    }

    @Override
    void advance(Duration d) {
      time.advance(d);
    }
  }
}
