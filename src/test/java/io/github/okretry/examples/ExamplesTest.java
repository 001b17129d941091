package io.github.okretry.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs each example's {@code main} in-process and checks the key facts of what it prints, so an
 * example can never silently rot. These run in real time (about 10 s in all); margins are wide
 * because CI machines are slow and shared.
 */
@Tag("integration")
class ExamplesTest {

  @Test
  void everyExampleIsInTheDemo() {
    assertThat(RunExamples.ALL)
        .containsExactly(
            "FlakyGet",
            "RetryAfterExample",
            "PaymentExample",
            "StreamedUploadExample",
            "DeadlineExample",
            "PerRequestExample",
            "OutcomeExample",
            "JitterHistogramExample",
            "SickReplicaExample",
            "RetrofitExample",
            "MicrometerExample",
            "OpenTelemetryExample");
  }

  @Test
  void flakyGetRecoversOnTheThirdAttempt() throws Exception {
    String out = run(FlakyGet::main);
    assertThat(out)
        .contains("attempt 1 failed: HTTP 503 -> waiting")
        .contains("done after 3 attempt(s): HTTP 200")
        .contains("caller got HTTP 200 \"hello\"")
        .contains("server saw 3 requests");
  }

  @Test
  void retryAfterReplacesTheBackoffExactly() throws Exception {
    String out = run(RetryAfterExample::main);
    // Seconds and HTTP-date (measured against the response's Date) both mean exactly 1000 ms.
    assertThat(count(out, "HTTP 429 -> waiting 1000 ms: the server's Retry-After")).isEqualTo(2);
    assertThat(out)
        .contains("caller got HTTP 200 \"quota restored\"")
        .contains("gave up after 1 attempt(s): RETRY_AFTER_TOO_LONG (HTTP 429)")
        .contains("caller got HTTP 429 with Retry-After: 120")
        .containsPattern("RetryOutcome: come back in 1(19|20) s, at 20")
        .contains("gave up after 1 attempt(s): SERVER_SAID_NO_RETRY (HTTP 429)")
        .contains("caller got HTTP 429, at once: the server said no")
        .contains("server: /warming attempt=1; max=4")
        .contains("server: /warming attempt=2; max=4")
        .contains("caller got HTTP 200 \"warm\"");
  }

  @Test
  void paymentIsChargedExactlyOnce() throws Exception {
    String out = run(PaymentExample::main);
    assertThat(count(out, "server: CHARGED")).isEqualTo(1);
    assertThat(out).containsPattern("charges: 1\\R").contains("caller got HTTP 200");
    // Every copy of the POST that reached the server carried the same key.
    List<String> keys = all(out, "server: POST /charges \\S+ key=(\\S+)");
    assertThat(keys).hasSizeGreaterThanOrEqualTo(2).doesNotContain("none");
    assertThat(keys).containsOnly(keys.get(0));
  }

  @Test
  void aStreamedUploadIsSentAgainFromItsCopyAndOneTooLargeSaysWhyItIsNot() throws Exception {
    String out = run(StreamedUploadExample::main);
    // 512 KiB: stored, the answer lost, sent again with its key and the same bytes
    assertThat(count(out, "server: upload-512, 512 KiB")).isEqualTo(2);
    assertThat(all(out, "server: upload-512, 512 KiB, sha-256 (\\S+)"))
        .containsOnly(all(out, "server: upload-512, 512 KiB, sha-256 (\\S+)").get(0));
    assertThat(out)
        .contains("key seen before, the same bytes: stored once")
        .contains("client: HTTP 200 \"stored once, the same bytes\"")
        .contains("after 2 attempts: SUCCEEDED");
    // 2 MiB: more than the 1 MiB a call keeps, so sent once; the outcome says why
    assertThat(count(out, "server: upload-2048, 2048 KiB")).isEqualTo(1);
    assertThat(out).contains("after 1 attempt: BODY_NOT_KEPT").contains("server saw 3 requests");
  }

  @Test
  void deadlineEndsTheCallAtAboutTwoSeconds() throws Exception {
    String out = run(DeadlineExample::main);
    assertThat(out)
        .contains("DEADLINE_EXCEEDED")
        .contains("caller got java.net.SocketTimeoutException");
    assertThat(elapsedMillis(out))
        .singleElement()
        .satisfies(ms -> assertThat(ms).isBetween(1800L, 4000L));
  }

  @Test
  void perRequestTagsChangeOnlyTheirOwnCall() throws Exception {
    String out = run(PerRequestExample::main);
    assertThat(out).contains("gave up after 1 attempt(s): NOT_SAFE_TO_REPEAT");
    assertThat(count(out, "server: POST /orders/unkeyed")).isEqualTo(1);
    assertThat(count(out, "server: POST /orders/keyed key=order-42")).isEqualTo(2);
    assertThat(out).contains("done after 2 attempt(s): HTTP 201");
    List<Long> elapsed = elapsedMillis(out);
    assertThat(elapsed).hasSize(3);
    // The 800 ms override, not the client's 5 s deadline, ends the third call.
    assertThat(elapsed.get(2)).isBetween(700L, 3000L);
    assertThat(out.substring(out.indexOf("RetryOverrides deadline"))).contains("DEADLINE_EXCEEDED");
  }

  @Test
  void theOutcomeIsReadFromTheExceptionAndTheResponse() throws Exception {
    String out = run(OutcomeExample::main);
    assertThat(out)
        .contains(
            "policy: At worst: no bound. No deadline or call timeout bounds the call.",
            "Attempts: up to 3 (the first and 2 retries).",
            "0.1 + 0.2 = 0.3 s of waiting");
    String post = section(out, "a keyed POST");
    assertThat(post)
        .contains(
            "caller got java.net.SocketTimeoutException",
            "its last suppressed says: okretry: after 3 attempts: RETRIES_EXHAUSTED (3 requests,"
                + " waited ",
            "attempts: 3, requests sent: 3",
            "ended: RETRIES_EXHAUSTED, key: order-42, processed: MAYBE",
            "retry later with key order-42");
    String get = section(out, "a GET");
    assertThat(get)
        .contains(
            "caller got HTTP 200 \"hello\"",
            "attempts: 3, requests sent: 3",
            "ended: SUCCEEDED, key: null, processed: PROCESSED");
    assertThat(section(out, "a GET to an origin that fails everything"))
        .contains(
            "caller got HTTP 503",
            "attempts: 1, requests sent: 1, waited: 0 ms",
            "ended: NO_RECENT_SUCCESS, key: null, processed: NOT_PROCESSED");
  }

  @Test
  void everyCallerGetsThroughWithAndWithoutJitter() throws Exception {
    String out = run(JitterHistogramExample::main);
    assertThat(out).contains("Jitter.NONE:").contains("Jitter.FULL:");
    assertThat(count(out, "50 of 50 callers succeeded")).isEqualTo(2);
  }

  @Test
  void aSickReplicaBehindTheBalancerCostsEveryCallUnlessTheRetryAvoidsItsConnection()
      throws Exception {
    String out = run(SickReplicaExample::main);
    assertThat(out).contains("20 GETs one after another");
    // Before: the pooled connection reaches the sick replica, and every retry goes back over it;
    // the budget holds most of them (about 1 request a call), and no call gets through.
    assertThat(section(out, "before:"))
        .contains("through: 0 of 20 calls")
        .containsPattern("requests: 2\\d \\(sick 2\\d, healthy 0\\)")
        .contains("connections: sick 1, healthy 0");
    // After: the first call's retry closes the failed connection and opens one to the healthy
    // replica, which every call after it finds pooled.
    assertThat(section(out, "after:"))
        .contains("through: 20 of 20 calls")
        .contains("requests: 21 (sick 1, healthy 20): 1.05 per call")
        .contains("connections: sick 1, healthy 1");
  }

  @Test
  void retrofitCallsAreRetriedWithTheirTagsAndAnnotations() throws Exception {
    String out = run(RetrofitExample::main);
    // execute(): a 503, then the order.
    assertThat(section(out, "client: orders.get(\"42\")"))
        .contains("done after 2 attempt(s): HTTP 200")
        .contains("caller got HTTP 200 \"order 42\"");
    // enqueue() with @Tag IdempotencyKey: both copies of the POST carry the caller's key.
    String post = section(out, "client: orders.create");
    assertThat(all(post, "server: POST /orders key=(\\S+)"))
        .containsExactly("order-42", "order-42");
    assertThat(post).contains("caller got HTTP 201 \"created\"");
    // @Retry(maxRetries = 1) reaches okretry through the Invocation tag, on both paths.
    // Another day's report each time: a path that failed all its attempts gets no retry until it
    // answers (the budget's path streak).
    for (String[] t :
        List.of(
            new String[] {"client: orders.report(\"today\")", "/reports/today"},
            new String[] {"callFactory: orders.report(\"yesterday\")", "/reports/yesterday"})) {
      String title = t[0];
      String report = section(out, title);
      assertThat(count(report, "server: GET " + t[1])).as(title).isEqualTo(2);
      assertThat(report)
          .contains("gave up after 2 attempt(s): RETRIES_EXHAUSTED (HTTP 503)")
          .contains("caller got HTTP 503");
    }
    assertThat(section(out, "callFactory: orders.get(\"43\")"))
        .contains("done after 2 attempt(s): HTTP 200")
        .contains("caller got HTTP 200 \"order 43\"");
  }

  @Test
  void micrometerCountsAttemptsRetriesGiveUpsAndBudgetTokens() throws Exception {
    String out = run(MicrometerExample::main);
    assertThat(out)
        .contains("after 10 healthy calls: okretry.budget.tokens = 100.0")
        // 10 healthy + /flaky 3 + /slow 2 + /down 4 + /busy 1
        .contains("okretry.attempts{client=orders} 20")
        .contains("okretry.network.requests{client=orders} 20")
        .contains("okretry.retries{client=orders,reason=HTTP 503} 5")
        .contains("okretry.retries{client=orders,reason=SocketTimeoutException} 1")
        .contains("okretry.giveups{client=orders,reason=RETRIES_EXHAUSTED} 1")
        .contains("okretry.giveups{client=orders,reason=RETRY_AFTER_TOO_LONG} 1")
        .contains("okretry.successes{client=orders} 12")
        // six retries at one token each (failures are rare, so the one after the timeout costs as
        // any other); the two that succeeded, /flaky's second and /slow's, got theirs back
        .contains("okretry.budget.tokens{client=orders} 96.0");
  }

  @Test
  void openTelemetrySpansCarryTheResendCount() throws Exception {
    String out = run(OpenTelemetryExample::main);
    List<String> inventory = all(out, "(GET\\s+CLIENT\\s+parent=checkout /inventory/42 .*)");
    assertThat(inventory).hasSize(3);
    assertThat(inventory.get(0)).contains("resend_count=- ").contains("status_code=503");
    assertThat(inventory.get(1)).contains("resend_count=1 ").contains("status_code=503");
    assertThat(inventory.get(2))
        .contains("resend_count=2 ")
        .contains("status_code=200")
        .contains("status=UNSET");
    // OkHttp repeated the first request itself, so okretry's second attempt is the second resend.
    List<String> reservations = all(out, "(GET\\s+CLIENT\\s+parent=checkout /reservations/42 .*)");
    assertThat(reservations).hasSize(3);
    assertThat(reservations.get(0)).contains("resend_count=- ").contains("status_code=- ");
    assertThat(reservations.get(1)).contains("resend_count=1 ").contains("status_code=503");
    assertThat(reservations.get(2)).contains("resend_count=2 ").contains("status_code=200");
    // A hedge is a resend: its span opens beside the stalled request's, which ends without a
    // status.
    List<String> prices = all(out, "(GET\\s+CLIENT\\s+parent=checkout /prices/42 .*)");
    assertThat(prices).hasSize(2);
    assertThat(prices)
        .anySatisfy(p -> assertThat(p).contains("resend_count=- ").contains("status_code=- "));
    assertThat(prices)
        .anySatisfy(p -> assertThat(p).contains("resend_count=1 ").contains("status_code=200"));
    assertThat(out).contains("server saw 9 requests");
  }

  interface Main {
    void main(String[] args) throws Exception;
  }

  /** Runs {@code main} with System.out captured; the output is shown if an assertion fails. */
  private static String run(Main main) throws Exception {
    PrintStream original = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    try {
      main.main(new String[0]);
    } finally {
      System.setOut(original);
    }
    return buffer.toString(StandardCharsets.UTF_8);
  }

  /**
   * The part of {@code text} under the section header starting with {@code title}, up to the next
   * one.
   */
  private static String section(String text, String title) {
    int start = text.indexOf("--- " + title);
    assertThat(start).as("section " + title).isNotNegative();
    int end = text.indexOf("\n--- ", start + 1);
    return end < 0 ? text.substring(start) : text.substring(start, end);
  }

  private static int count(String text, String needle) {
    int n = 0;
    for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length())) n++;
    return n;
  }

  private static List<String> all(String text, String regex) {
    List<String> found = new ArrayList<>();
    Matcher m = Pattern.compile(regex).matcher(text);
    while (m.find()) found.add(m.group(1));
    return found;
  }

  private static List<Long> elapsedMillis(String text) {
    return all(text, "elapsed (\\d+) ms").stream().map(Long::valueOf).toList();
  }
}
