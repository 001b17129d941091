package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.okretry.RetryOutcome.Processing;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import okhttp3.Call;
import okhttp3.Headers;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 37: what happened to a call, read from the response or the exception in hand, on both
 * drivers, with no listener: attempts, requests, time waited, why it ended, the key, and whether
 * the server may have processed it. Each question answered in at most three lines. A keyless POST
 * that times out after its headers were written needs real sockets: {@link
 * RetryOutcomeIntegrationTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class RetryOutcomeTest extends ScriptedTest {

  RetryOutcomeTest(Driver driver) {
    this.driver = driver;
  }

  /** No listener, no jitter: waits of 1, 2, 4 s. */
  private Call.Factory quiet() {
    return client(quietRetry().jitter(Jitter.NONE).baseDelay(Duration.ofSeconds(1)));
  }

  @Test
  void aSuccessAfterTwo503s() throws IOException {
    script.status(503).status(503).status(201);
    try (Response response = quiet().newCall(post()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(response.code()).isEqualTo(201);
      assertThat(outcome.attempts()).isEqualTo(3);
      assertThat(outcome.requestsSent()).isEqualTo(3);
      assertThat(outcome.waitedNanos()).isEqualTo(Duration.ofSeconds(3).toNanos());
      assertThat(outcome.giveUpReason()).isNull();
      assertThat(outcome.idempotencyKey()).isEqualTo("k1");
      assertThat(outcome.processing()).isEqualTo(Processing.PROCESSED);
      assertThat(outcome)
          .hasToString(
              "RetryOutcome{after 3 attempts: SUCCEEDED (3 requests, waited 3 s: backoff 3 s,"
                  + " processed, keyed)}");
    }
  }

  @Test
  void fourTimes503() throws IOException {
    script.thenAlways(503);
    try (Response response = quiet().newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.attempts()).isEqualTo(4);
      assertThat(outcome.waitedNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
      assertThat(outcome.idempotencyKey()).isNull();
      assertThat(outcome.processing()).as("each refused: 503").isEqualTo(Processing.NOT_PROCESSED);
    }
  }

  @Test
  void aKeyedPostWhoseFourAttemptsTimeOut() {
    script.thenAlwaysFail(n -> new SocketTimeoutException("timeout " + n));
    Request pay =
        post().newBuilder().tag(IdempotencyKey.class, IdempotencyKey.of("order-42")).build();
    SocketTimeoutException e =
        catchThrowableOfType(SocketTimeoutException.class, () -> quiet().newCall(pay).execute());
    assertThat(e).hasMessage("timeout 4"); // its type and message as they came
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(outcome.attempts()).isEqualTo(4);
    assertThat(outcome.waitedNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    assertThat(outcome.idempotencyKey()).isEqualTo("order-42");
    assertThat(outcome.processing()).isEqualTo(Processing.MAYBE);
    Throwable[] suppressed = e.getSuppressed();
    assertThat(suppressed).hasSize(4); // timeouts 1 to 3, then okretry's summary
    assertThat(suppressed[3])
        .hasMessage(
            "okretry: after 4 attempts: RETRIES_EXHAUSTED (4 requests, waited 7 s: backoff 7 s,"
                + " may have been processed, keyed)");
    assertThat(suppressed[3].getStackTrace()).isEmpty();
  }

  @Test
  void aCallTheBudgetHeldEndsWithItsFailureAndSaysWhy() throws IOException {
    script.thenAlwaysFail(n -> new SocketTimeoutException("timeout " + n));
    Call.Factory client = quiet();
    // One call's retries
    catchThrowableOfType(SocketTimeoutException.class, () -> client.newCall(get()).execute());
    SocketTimeoutException e =
        catchThrowableOfType(SocketTimeoutException.class, () -> client.newCall(get()).execute());
    assertThat(e).hasMessage("timeout 5");
    RetryOutcome outcome = RetryOutcome.of(e);
    assertThat(outcome.attempts()).isEqualTo(1);
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
    assertThat(outcome.processing()).isEqualTo(Processing.MAYBE);
    assertThat(outcome.waitedNanos())
        .as("held through its backoff")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(7).toNanos());
    assertThat(e.getSuppressed()[e.getSuppressed().length - 1].getMessage())
        .startsWith("okretry: after 1 attempt: NO_RECENT_SUCCESS (1 request, waited ");
  }

  @Test
  void aResponseTheBudgetHeldSaysWhyToo() throws IOException {
    script.thenAlways(503);
    Call.Factory client = quiet();
    code(client, get());
    try (Response response = client.newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.attempts()).isEqualTo(1);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.NO_RECENT_SUCCESS);
      assertThat(outcome.processing()).isEqualTo(Processing.NOT_PROCESSED);
      assertThatThrownBy(() -> response.body().string()).hasMessageContaining("was not kept");
    }
  }

  @Test
  void aCallTheBudgetCouldNotPaySaysSo() throws IOException {
    script.thenAlways(503);
    RetryBudget budget = RetryBudget.builder().maxTokens(1).minRetriesPerSecond(0).build();
    try (Response response =
        client(quietRetry().jitter(Jitter.NONE).retryBudget(budget)).newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.BUDGET_EXHAUSTED);
      assertThat(outcome.attempts()).isEqualTo(2);
      assertThat(outcome.processing()).isEqualTo(Processing.NOT_PROCESSED);
    }
  }

  @Test
  void aFollowUpBuiltFromAMarkedResponseHasAnOutcomeOfItsOwn() throws IOException {
    script.status(503).status(201).status(200);
    Call.Factory client = quiet();
    Request followUp;
    try (Response first = client.newCall(get()).execute()) {
      assertThat(RetryOutcome.of(first).attempts()).isEqualTo(2);
      followUp = first.request().newBuilder().url("http://example.test/next").build();
    }
    try (Response next = client.newCall(followUp).execute()) {
      assertThat(RetryOutcome.of(next).attempts()).as("its own first attempt").isEqualTo(1);
    }
  }

  @Test
  void aFirstAttemptSuccessIsReadFromTheResponseAsItIs() throws IOException {
    script.status(200);
    try (Response response = quiet().newCall(get()).execute()) {
      assertThat(RetryOutcome.of(response))
          .isEqualTo(
              new RetryOutcome(
                  1,
                  1,
                  0,
                  0,
                  0,
                  0,
                  RetryOutcome.NO_COME_BACK,
                  RetryOutcome.NOT_ANSWERED,
                  null,
                  null,
                  Processing.PROCESSED,
                  200));
    }
  }

  @Test
  void aFirstAttemptThatGivesUpWithItsResponseIsMarked() throws IOException {
    script.status(503, "Retry-After", "3600");
    try (Response response = quiet().newCall(get()).execute()) {
      RetryOutcome outcome = RetryOutcome.of(response);
      assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.RETRY_AFTER_TOO_LONG);
      assertThat(outcome.attempts()).isEqualTo(1);
      assertThat(response.body().string()).as("the same body").isEqualTo("attempt 1");
    }
  }

  /** Issue 43, item 3: a status okretry does not retry is said as it is, not as a success. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(ints = {404, 500})
  void aStatusNotRetriedSaysWhatItWas(int code) throws IOException {
    script.status(503).status(code);
    try (Response response = quiet().newCall(get()).execute()) {
      assertThat(RetryOutcome.of(response))
          .hasToString(
              "RetryOutcome{after 2 attempts: returned HTTP "
                  + code
                  + ", not retryable (2 requests, waited 1 s: backoff 1 s, processed, no key)}");
    }
    script.status(code);
    try (Response response = quiet().newCall(get()).execute()) {
      assertThat(RetryOutcome.of(response))
          .as("at the first attempt, unmarked")
          .hasToString(
              "RetryOutcome{after 1 attempt: returned HTTP "
                  + code
                  + ", not retryable (1 request, waited 0 s, processed, no key)}");
    }
  }

  @Test
  void aSuccessSaysSucceeded() throws IOException {
    script.status(204);
    try (Response response = quiet().newCall(get()).execute()) {
      assertThat(RetryOutcome.of(response).toString()).contains("after 1 attempt: SUCCEEDED (");
    }
  }

  @Test
  void aRefusedConnectionProvesNothingWasProcessed() {
    script.thenAlwaysFail(n -> new ConnectException("refused"));
    IOException e = catchThrowableOfType(IOException.class, () -> quiet().newCall(get()).execute());
    assertThat(RetryOutcome.of(e).processing()).isEqualTo(Processing.NOT_PROCESSED);
  }

  /**
   * The caller's own tag, read back from every event of its call: how a listener matches a call
   * (RetryListener).
   */
  record OrderId(int value) {}

  @Test
  void everyEventCarriesTheCallersTags() throws IOException {
    script.status(503).status(201).status(201);
    java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    RetryListener listener =
        new RetryListener() {
          @Override
          public void onAttemptStarted(Request request, int attempt) {
            seen.add("start " + request.tag(OrderId.class));
          }

          @Override
          public void onRetryScheduled(
              Request request, int attempt, String reason, long delayNanos) {
            seen.add("retry " + request.tag(OrderId.class));
          }

          @Override
          public void onSucceeded(Request request, Response response, int attempts) {
            seen.add("succeeded " + request.tag(OrderId.class));
          }
        };
    Call.Factory client = client(quietRetry().listener(listener));
    for (int id :
        new int[] {42, 43}) { // a keyed POST (a copy with the key) and a GET (the caller's own)
      Request request =
          (id == 42 ? post() : get()).newBuilder().tag(OrderId.class, new OrderId(id)).build();
      client.newCall(request).execute().close();
    }
    assertThat(seen)
        .containsExactly(
            "start OrderId[value=42]",
            "retry OrderId[value=42]",
            "start OrderId[value=42]",
            "succeeded OrderId[value=42]",
            "start OrderId[value=43]",
            "succeeded OrderId[value=43]");
  }

  @Test
  void anExceptionOkretryDidNotEndACallWithHasNone() {
    assertThat(RetryOutcome.of(new IOException("elsewhere"))).isNull();
  }

  @Test
  void aResponseFromAClientWithoutOkretryReadsAsOneAttempt() {
    Response response =
        new Response.Builder()
            .request(get().newBuilder().header("Idempotency-Key", "x").build())
            .protocol(okhttp3.Protocol.HTTP_1_1)
            .code(429)
            .message("")
            .headers(Headers.of())
            .build();
    assertThat(RetryOutcome.of(response))
        .isEqualTo(
            new RetryOutcome(
                1,
                1,
                0,
                0,
                0,
                0,
                RetryOutcome.NO_COME_BACK,
                RetryOutcome.NOT_ANSWERED,
                null,
                "x",
                Processing.NOT_PROCESSED,
                429));
  }
}
