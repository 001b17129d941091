package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * No duplicated side effects: 1000 payments from 8 threads against a payment server that
 * de-duplicates by Idempotency-Key and, at seeded random, drops the connection after charging,
 * answers 503 without charging, or charges and then stalls past the read timeout.
 *
 * <p>The server charges per key, so a client that let the key drift between attempts would charge
 * one payment twice; the test counts charges per <em>payment</em> (its id is in the body) to catch
 * exactly that. Half the payments carry the caller's key, half a key okretry generates.
 */
@Tag("integration")
@Tag("slow") // real sockets and real time: in mvn test, but left out of mutation testing
@ExtendWith(LeakCheck.class)
class PaymentsTest {

  static final long SEED = 20_261_202L;

  enum Fate {
    CHARGE_AND_ANSWER,
    CHARGE_THEN_DROP, // the worst case for a client: it cannot tell whether it was charged
    ANSWER_503, // refused before any work
    CHARGE_THEN_STALL // charged, but the answer never comes: the client times out
  }

  /**
   * A de-duplicating payment server whose faults are a pure function of (seed, payment, arrival).
   */
  static final class PaymentServer extends Dispatcher {
    final long seed;
    final Map<String, String> resultsByKey = new ConcurrentHashMap<>();
    final AtomicIntegerArray chargesByPayment;
    final AtomicIntegerArray arrivalsByPayment;
    final AtomicInteger charges = new AtomicInteger();
    final Map<Fate, LongAdder> fates = new ConcurrentHashMap<>();
    final AtomicInteger keyless = new AtomicInteger();

    PaymentServer(int payments, long seed) {
      this.seed = seed;
      this.chargesByPayment = new AtomicIntegerArray(payments);
      this.arrivalsByPayment = new AtomicIntegerArray(payments);
    }

    Fate fate(int payment, int arrival) {
      int roll = new SplittableRandom(seed * 31 + payment * 1_000L + arrival).nextInt(100);
      if (roll < 12) return Fate.CHARGE_THEN_DROP;
      if (roll < 24) return Fate.ANSWER_503;
      if (roll < 27) return Fate.CHARGE_THEN_STALL;
      return Fate.CHARGE_AND_ANSWER;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String key = request.getHeaders().get("Idempotency-Key");
      if (key == null) {
        keyless.incrementAndGet();
        return new MockResponse.Builder().code(400).body("no key").build();
      }
      String body = request.getBody().utf8();
      int payment = Integer.parseInt(body.replaceAll("\\D", ""));
      int arrival = arrivalsByPayment.incrementAndGet(payment);
      Fate fate = fate(payment, arrival);
      fates.computeIfAbsent(fate, f -> new LongAdder()).increment();
      if (fate == Fate.ANSWER_503) {
        return new MockResponse.Builder().code(503).body("busy").build();
      }
      String result =
          resultsByKey.computeIfAbsent(
              key,
              k -> {
                chargesByPayment.incrementAndGet(payment);
                return "charge-" + charges.incrementAndGet() + "-payment-" + payment;
              });
      MockResponse.Builder response = new MockResponse.Builder().body(result);
      return switch (fate) {
        case CHARGE_THEN_DROP ->
            response.onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build();
        case CHARGE_THEN_STALL -> response.onResponseStart(SocketEffect.Stall.INSTANCE).build();
        default -> response.build();
      };
    }
  }

  @Test
  void everyPaymentChargedAtMostOnceAndEveryCallerGetsItsResult() throws Exception {
    run(1000, 8, SEED);
  }

  static void run(int count, int threads, long seed) throws Exception {
    PaymentServer payments = new PaymentServer(count, seed);
    Map<String, Integer> attemptsByKey = new ConcurrentHashMap<>();
    RetryListener recordAttempts =
        new RetryListener() {
          @Override
          public void onSucceeded(Request request, Response response, int attempts) {
            attemptsByKey.put(request.header("Idempotency-Key"), attempts);
          }

          @Override
          public void onGaveUp(
              Request request, int attempts, GiveUpReason reason, String lastFailure) {
            attemptsByKey.put(request.header("Idempotency-Key"), attempts);
          }
        };
    RetryInterceptor retry =
        RetryInterceptor.create(
            RetryPolicy.builder()
                .maxRetries(6)
                // About keys, not the budget: a server stalling this often would spend the default
                // budget's tokens on retries after timeouts (ten each; docs/semantics.md).
                .retryBudget(RetryBudget.unlimited())
                .baseDelay(Duration.ofMillis(2))
                .maxDelay(Duration.ofMillis(10))
                // Jitter from the default ThreadLocalRandom: the server's fates are what is seeded.
                .listener(recordAttempts)
                .build());
    long started = System.nanoTime();
    try (MockWebServer server = new MockWebServer()) {
      server.setDispatcher(payments);
      server.start();
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .addInterceptor(retry)
                  .readTimeout(Duration.ofMillis(200))
                  .build());
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<String>> outcomes = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int payment = i;
        outcomes.add(
            pool.submit(
                () -> {
                  Request.Builder rb =
                      new Request.Builder()
                          .url(server.url("/pay"))
                          .post(
                              RequestBody.create(
                                  "{\"payment\":" + payment + "}",
                                  MediaType.get("application/json")));
                  // Even payments: the caller's own key; odd: okretry generates one.
                  if (payment % 2 == 0) {
                    rb.tag(IdempotencyKey.class, IdempotencyKey.of("pay-" + payment));
                  }
                  try (Response response = client.newCall(rb.build()).execute()) {
                    return response.code() + " " + response.body().string();
                  } catch (IOException e) {
                    return "EXCEPTION " + e;
                  }
                }));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.MINUTES)).isTrue();

      int succeeded = 0;
      int failed = 0;
      int otherStatus = 0;
      for (int i = 0; i < count; i++) {
        String outcome = outcomes.get(i).get();
        if (outcome.startsWith("200 ")) {
          succeeded++;
          // The stored result of this very payment, whichever attempt produced it.
          assertThat(outcome).as("payment %d", i).endsWith("-payment-" + i);
          assertThat(payments.chargesByPayment.get(i)).as("payment %d", i).isEqualTo(1);
        } else if (outcome.startsWith("EXCEPTION java.io.")
            || outcome.startsWith("EXCEPTION java.net.")) {
          failed++; // a clear IOException: may or may not have been charged, but at most once
        } else {
          otherStatus++; // 503 after the last retry: the server refused, so nothing was charged
          assertThat(outcome).as("payment %d", i).startsWith("503 ");
        }
      }
      int charged = 0;
      for (int i = 0; i < count; i++) {
        assertThat(payments.chargesByPayment.get(i))
            .as("charges of payment %d", i)
            .isLessThanOrEqualTo(1);
        charged += payments.chargesByPayment.get(i);
      }
      long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

      Map<Integer, Integer> attemptsHistogram = new TreeMap<>();
      attemptsByKey.values().forEach(a -> attemptsHistogram.merge(a, 1, Integer::sum));
      Map<Integer, Integer> arrivalsHistogram = new TreeMap<>();
      for (int i = 0; i < count; i++) {
        arrivalsHistogram.merge(payments.arrivalsByPayment.get(i), 1, Integer::sum);
      }
      Diagnostics.printf(
          "Payments: %d payments from %d threads in %d ms: succeeded=%d, ended in IOException=%d,"
              + " ended in 503=%d; charges=%d (distinct keys charged=%d), payments charged twice=0,"
              + " keyless requests=%d%n",
          count,
          threads,
          elapsedMs,
          succeeded,
          failed,
          otherStatus,
          charged,
          payments.resultsByKey.size(),
          payments.keyless.get());
      Diagnostics.println("Payments: server fates " + new TreeMap<>(payments.fates));
      Diagnostics.println(
          "Payments: okretry attempts per payment (attempts -> payments) " + attemptsHistogram);
      Diagnostics.println(
          "Payments: server arrivals per payment (arrivals -> payments) " + arrivalsHistogram);

      assertThat(payments.keyless.get()).isZero();
      assertThat(succeeded + failed + otherStatus).isEqualTo(count);
      assertThat(attemptsByKey)
          .hasSize(count); // one key per payment, never a fresh one per attempt
      assertThat(charged).isEqualTo(payments.resultsByKey.size()).isEqualTo(payments.charges.get());
      assertThat(charged).isGreaterThanOrEqualTo(succeeded);
      // With 7 attempts and a 27% fault rate per arrival, all but a handful succeed.
      assertThat(succeeded).isGreaterThanOrEqualTo(count - count / 200);
      // Each fault kind really happened, or the test proves less than it says.
      assertThat(payments.fates.keySet()).containsExactlyInAnyOrder(Fate.values());
    }
  }
}
