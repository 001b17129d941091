package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import okhttp3.Interceptor;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 35's open-loop blip on each driver, on fake time (the interceptor on {@link
 * TurnTakingTime}, the factory on {@link FakeScheduler}): 300 calls, one every 10 ms (100/s), to a
 * server that answers every request 503 from 1 s to 1 s + the blip, 200 before and after. The
 * default budget loses no more calls than {@code RetryBudget.unlimited()} in the same crowd, up to
 * 2 (before issue 35: all 100 calls of a 1 s blip). {@code -Dokretry.printTables=true} prints them.
 */
@Tag("unit")
@ExtendWith(LeakCheck.class)
@ParameterizedClass
@EnumSource(Driver.class)
class BlipCrowdTest {

  static final long MS = 1_000_000L;

  private final Driver driver;

  BlipCrowdTest(Driver driver) {
    this.driver = driver;
  }

  /** Calls of the crowd that did not end with a 200, with {@code budget}. */
  int failed(RetryBudget budget, long blipMillis) throws Exception {
    java.util.function.Function<io.github.okretry.internal.TimeSource, Interceptor> server =
        time ->
            chain -> {
              long t = time.nanoTime();
              boolean failing = t >= 1_000 * MS && t < (1_000 + blipMillis) * MS;
              return new Response.Builder()
                  .request(chain.request())
                  .protocol(Protocol.HTTP_1_1)
                  .code(failing ? 503 : 200)
                  .message(failing ? "Service Unavailable" : "OK")
                  .body(ResponseBody.create("", null))
                  .build();
            };
    RetryPolicy.Builder policy = RetryPolicy.builder();
    RefusedCrowdBudgetTest.Crowd crowd =
        driver == Driver.BLOCKING
            ? new RefusedCrowdBudgetTest.BlockingCrowd(budget, server, policy)
            : new RefusedCrowdBudgetTest.AsyncCrowd(budget, server, policy);
    List<Request> requests = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      requests.add(
          new Request.Builder().url("http://api.test/items").tag(Integer.class, i).build());
    }
    List<String> outcomes = crowd.run(requests, 10 * MS);
    return (int) outcomes.stream().filter(o -> !o.equals("200")).count();
  }

  @ParameterizedTest(name = "blip {0} ms")
  @ValueSource(longs = {500, 1_000})
  void anOpenLoopLosesNoMoreCallsToABlipThanWithoutABudget(long blipMillis) throws Exception {
    int okretry = failed(RetryBudget.builder().build(), blipMillis);
    int unlimited = failed(RetryBudget.unlimited(), blipMillis);
    Diagnostics.printf(
        "%s, 100 calls/s through %d ms of 503s: default %d failed, unlimited %d%n",
        driver, blipMillis, okretry, unlimited);
    assertThat(okretry).isLessThanOrEqualTo(unlimited + 2);
  }
}
