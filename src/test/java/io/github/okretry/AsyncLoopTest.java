package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.okretry.TestExecutors.Stoppable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code RetryingCall.enqueue()} and its {@link AsyncLoop} on fake time, where the driver's own
 * promises are the point rather than the retry rules (those run on both drivers elsewhere): the
 * call's contract as an OkHttp {@link Call} (once only, clone, timeout, cancel), on which thread
 * the callback runs, how a cancel, a close or user code that throws ends a call, and what happens
 * when the dispatcher is shut down. The client's dispatcher hands its tasks to the same {@link
 * FakeScheduler} as the factory's waits, through an executor that marks them, so a test can tell a
 * callback run on the dispatcher from one run on the scheduler or inside {@code enqueue()}.
 */
@Tag("unit")
class AsyncLoopTest extends ScriptedTest {

  final FakeScheduler scheduler = new FakeScheduler(time);
  final DispatcherThread dispatcher = new DispatcherThread();
  final Recorder callback = new Recorder();

  /** True while the client's dispatcher runs one of its tasks (all on the test's thread). */
  boolean onDispatcher;

  /** The client's dispatcher: its tasks run on the fake scheduler, marked as the dispatcher's. */
  final class DispatcherThread extends Stoppable {
    @Override
    public void execute(Runnable command) {
      if (isShutdown()) throw new RejectedExecutionException("dispatcher shut down");
      scheduler.execute(
          () -> {
            boolean was = onDispatcher;
            onDispatcher = true;
            try {
              command.run();
            } finally {
              onDispatcher = was;
            }
          });
    }
  }

  /** Every callback, and whether it ran on the dispatcher; a response is kept open for the test. */
  final class Recorder implements Callback {
    final List<Object> outcomes = new ArrayList<>();
    final List<Boolean> onTheDispatcher = new ArrayList<>();

    @Override
    public void onResponse(Call call, Response response) {
      outcomes.add(response);
      onTheDispatcher.add(onDispatcher);
    }

    @Override
    public void onFailure(Call call, IOException e) {
      outcomes.add(e);
      onTheDispatcher.add(onDispatcher);
    }

    /** The one outcome; a response is closed. */
    Object only() {
      assertThat(outcomes).as("exactly one callback").hasSize(1);
      Object o = outcomes.get(0);
      if (o instanceof Response r) r.close();
      return o;
    }

    IOException failure() {
      return (IOException) assertThat(only()).isInstanceOf(IOException.class).actual();
    }
  }

  OkHttpClient.Builder clientBuilder() {
    return new OkHttpClient.Builder().dispatcher(new Dispatcher(dispatcher)).addInterceptor(script);
  }

  RetryingCallFactory factory(RetryPolicy.Builder policy) {
    return factory(clientBuilder(), policy);
  }

  RetryingCallFactory factory(OkHttpClient.Builder client, RetryPolicy.Builder policy) {
    return RetryingCallFactory.create(LeakCheck.track(client.build()), policy.build(), scheduler);
  }

  /** Retries after a fixed 1 s, so a test can act while the call waits. */
  RetryPolicy.Builder oneSecondApart() {
    return retry().jitter(Jitter.NONE).baseDelay(1, TimeUnit.SECONDS);
  }

  /** Enqueues {@code call}, then runs its first attempt: it then waits 1 s for its retry. */
  void enqueueUntilItWaits(Call call) {
    call.enqueue(callback);
    scheduler.runFor(Duration.ofMillis(1));
    assertThat(events.lines("retry")).as("waiting to retry").hasSize(1);
    assertThat(callback.outcomes).isEmpty();
  }

  // ---- the call's contract, as OkHttp's Call states it ----

  @Test
  void enqueueRefusesANullCallbackBeforeAnythingIsSent() {
    Call call = factory(retry()).newCall(get());
    assertThatThrownBy(() -> call.enqueue(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("callback == null");
    scheduler.runUntilIdle();
    assertThat(script.attempts()).isZero();
    assertThat(call.isExecuted()).as("not started, so it may still be enqueued").isFalse();
    script.thenAlways(200);
    call.enqueue(callback);
    scheduler.runUntilIdle();
    assertThat(((Response) callback.only()).code()).isEqualTo(200);
  }

  @Test
  void aCallRunsOnceWhicheverWayItIsStarted() throws IOException {
    script.thenAlways(200);
    RetryingCallFactory calls = factory(retry());
    Call enqueued = calls.newCall(get());
    assertThat(enqueued.isExecuted()).isFalse();
    enqueued.enqueue(callback);
    assertThat(enqueued.isExecuted()).isTrue();
    assertThatThrownBy(() -> enqueued.enqueue(callback))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already Executed");
    assertThatThrownBy(enqueued::execute)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already Executed");
    scheduler.runUntilIdle();
    callback.only();

    Call executed = calls.newCall(get());
    executed.execute().close();
    assertThat(executed.isExecuted()).isTrue();
    assertThatThrownBy(() -> executed.enqueue(callback))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already Executed");
    assertThatThrownBy(executed::execute)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already Executed");
    assertThat(script.attempts()).isEqualTo(2);
  }

  @Test
  void aCloneIsANewCallForTheSameRequestEvenOfACanceledOne() {
    script.thenAlways(200);
    Request request = get();
    Call call = factory(retry()).newCall(request);
    call.cancel();
    call.enqueue(new Recorder());
    Call clone = call.clone();
    assertThat(clone).isNotSameAs(call);
    assertThat(clone.request()).isSameAs(request);
    assertThat(clone.isExecuted()).isFalse();
    assertThat(clone.isCanceled()).isFalse();
    clone.enqueue(callback);
    scheduler.runUntilIdle();
    assertThat(((Response) callback.only()).code()).isEqualTo(200);
    assertThat(script.attempts()).as("the canceled original sent nothing").isEqualTo(1);
  }

  @Test
  void theTimeoutStartsAsTheClientsCallTimeoutAndBoundsTheWholeCall() {
    Call bounded =
        factory(clientBuilder().callTimeout(Duration.ofSeconds(7)), retry()).newCall(get());
    assertThat(bounded.timeout().timeoutNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(7));
    assertThat(factory(retry()).newCall(get()).timeout().timeoutNanos())
        .as("no callTimeout: none")
        .isZero();

    // A 3 s timeout set on the call holds the 1 s wait before retry 1, not the 3 s one before retry
    // 2.
    script.status(503).status(503).thenAlways(200);
    Call call = factory(oneSecondApart().multiplier(3)).newCall(get());
    call.timeout().timeout(3, TimeUnit.SECONDS);
    call.enqueue(callback);
    scheduler.runUntilIdle();
    assertThat(((Response) callback.only()).code())
        .as("the second 503, given up on")
        .isEqualTo(503);
    assertThat(time.sleepMillis()).containsExactly(1000L);
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("DEADLINE_EXCEEDED");
  }

  @Test
  void eachAttemptsTimeoutsShrinkToTheTimeLeft() {
    script.status(503).thenAlways(200);
    Call call = factory(oneSecondApart().deadline(3, TimeUnit.SECONDS)).newCall(get());
    call.enqueue(callback);
    scheduler.runUntilIdle();
    assertThat(((Response) callback.only()).code()).isEqualTo(200);
    assertThat(script.seen())
        .extracting(
            Script.Seen::connectTimeoutMillis,
            Script.Seen::readTimeoutMillis,
            Script.Seen::writeTimeoutMillis)
        .as("the client's 10 s, shrunk to the 3 s left, then to the 2 s left after the wait")
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(3000, 3000, 3000),
            org.assertj.core.groups.Tuple.tuple(2000, 2000, 2000));
  }

  @Test
  void anEventListenerIsAddedToEveryAttempt() {
    script.status(503).thenAlways(200);
    Call call = factory(oneSecondApart()).newCall(get());
    List<String> seen = new ArrayList<>();
    call.addEventListener(
        new EventListener() {
          @Override
          public void callStart(Call attempt) {
            seen.add("callStart " + Attempt.ofCall(attempt).number);
          }
        });
    assertThatThrownBy(() -> call.addEventListener(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("eventListener == null");
    call.enqueue(callback);
    scheduler.runUntilIdle();
    callback.only();
    assertThat(seen).containsExactly("callStart 1", "callStart 2");
  }

  @Test
  void aTagIsComputedOnceAndThenReadBack() {
    Call call = factory(retry()).newCall(get());
    assertThat(call.tag(String.class)).isNull();
    assertThat(call.tag(String.class, () -> "first")).isEqualTo("first");
    assertThat(call.tag(String.class, () -> "second")).isEqualTo("first");
    assertThat(call.tag(String.class)).isEqualTo("first");
    assertThat(call.tag(kotlin.jvm.JvmClassMappingKt.getKotlinClass(String.class)))
        .isEqualTo("first");
  }

  // ---- on which thread the callback runs ----

  @Test
  void theCallbackNeverRunsOnTheEnqueuingThread() {
    Call call = factory(retry()).newCall(get());
    call.cancel();
    call.enqueue(callback); // decided at once: canceled before it started
    assertThat(callback.outcomes).as("not inside enqueue()").isEmpty();
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("Canceled");
    assertThat(callback.onTheDispatcher).containsExactly(true);
    assertThat(script.attempts()).isZero();
    assertThat(events.lines()).containsExactly("gaveUp 0 CANCELED IOException: Canceled");
  }

  @Test
  void aCallbackDecidedOnTheSchedulerRunsOnTheDispatcher() {
    // The wait is over (on the scheduler) and the origin is closed for longer than the call has
    // left: the call ends there with a local response, delivered on the dispatcher.
    script.status(503).thenAlways(200);
    RetryPolicy policy =
        oneSecondApart().originWideRetryAfter(true).deadline(5, TimeUnit.SECONDS).build();
    Call call =
        RetryingCallFactory.create(LeakCheck.track(clientBuilder().build()), policy, scheduler)
            .newCall(get());
    enqueueUntilItWaits(call);
    policy.originGate.close(
        get().url(), time.nanoTime(), time.nanoTime() + TimeUnit.SECONDS.toNanos(30), 503);
    scheduler.runUntilIdle();
    assertThat(callback.outcomes)
        .singleElement()
        .isInstanceOfSatisfying(
            Response.class,
            r -> {
              assertThat(r.code()).isEqualTo(503);
              assertThat(r.message())
                  .isEqualTo("Throttled locally by okretry: origin asked to wait");
              r.close();
            });
    assertThat(callback.onTheDispatcher).containsExactly(true);
    assertThat(time.sleepMillis()).containsExactly(1000L);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("ORIGIN_THROTTLED");
  }

  @Test
  void aCancelDuringAWaitDropsTheRetryAndCallsBackOnTheDispatcher() {
    script.status(503).thenAlways(200);
    Call call = factory(oneSecondApart()).newCall(get());
    long start = time.nanoTime();
    enqueueUntilItWaits(call);
    assertThat(script.closed(1)).as("the retried 503, closed before the wait").isTrue();
    call.cancel();
    assertThat(callback.outcomes).as("no callback on the canceling thread").isEmpty();
    assertThat(call.isCanceled()).isTrue();
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("Canceled");
    assertThat(callback.onTheDispatcher).containsExactly(true);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.nanoTime() - start)
        .as("the wait ended at once")
        .isLessThan(TimeUnit.SECONDS.toNanos(1));
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void aCancelWhileTheAttemptIsInFlightCancelsIt() {
    script.thenAlways(200);
    Call call = factory(retry()).newCall(get());
    call.enqueue(callback);
    call.cancel(); // the attempt is enqueued on the dispatcher, not yet run
    assertThat(call.isCanceled()).isTrue();
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessageContaining("Canceled");
    assertThat(events.lines("start")).hasSize(1);
    assertThat(events.lines("retry")).isEmpty();
    assertThat(events.lines("gaveUp")).singleElement().asString().contains("CANCELED");
  }

  @Test
  void closeEndsAWaitAndTheCallFailsAsClosed() {
    script.status(503).thenAlways(200);
    RetryingCallFactory calls = factory(oneSecondApart());
    Call call = calls.newCall(get());
    long start = time.nanoTime();
    enqueueUntilItWaits(call);
    calls.close();
    assertThat(callback.outcomes).as("no callback on the closing thread").isEmpty();
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("RetryingCallFactory is closed");
    assertThat(callback.onTheDispatcher).containsExactly(true);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(1));
    assertThat(scheduler.isShutdown()).as("a scheduler the caller passed keeps running").isFalse();
  }

  @Test
  void anAttemptInFlightWhenTheFactoryClosesIsNotRetried() {
    script.status(503).thenAlways(200);
    RetryingCallFactory calls = factory(oneSecondApart());
    calls.newCall(get()).enqueue(callback);
    calls.close(); // attempt 1 is in flight
    long start = time.nanoTime();
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("RetryingCallFactory is closed");
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(time.nanoTime() - start).as("no 1 s wait").isLessThan(TimeUnit.SECONDS.toNanos(1));
  }

  @Test
  void aCallThatRanOutOfTimeReportsCanceledAndOneThatGaveUpOtherwiseDoesNot() {
    // Each attempt takes 2 s of the call's 3 s: after the first, the 1 s wait does not fit.
    script.thenAlways(
        (chain, n) -> {
          time.advance(Duration.ofSeconds(2));
          throw new java.net.ConnectException("refused " + n);
        });
    RetryingCallFactory calls = factory(oneSecondApart().maxRetries(1));
    Call timedOut = calls.newCall(get());
    timedOut.timeout().timeout(3, TimeUnit.SECONDS);
    timedOut.enqueue(callback);
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("refused 1");
    assertThat(timedOut.isCanceled()).as("as a plain OkHttp call whose timeout fired").isTrue();

    Call exhausted = calls.newCall(get());
    Recorder second = new Recorder();
    exhausted.enqueue(second);
    scheduler.runUntilIdle();
    assertThat(second.failure()).hasMessage("refused 3");
    assertThat(exhausted.isCanceled()).as("retries exhausted: no timeout fired").isFalse();
    assertThat(events.lines("gaveUp"))
        .hasSize(2)
        .satisfiesExactly(
            l -> assertThat(l).contains("DEADLINE_EXCEEDED"),
            l -> assertThat(l).contains("RETRIES_EXHAUSTED"));
  }

  @Test
  void aCallbackThatThrowsAnIOExceptionIsLoggedAndItsResponseClosed() {
    script.thenAlways(200);
    IOException thrown = new IOException("callback bug");
    factory(retry())
        .newCall(get())
        .enqueue(
            new Callback() {
              @Override
              public void onResponse(Call call, Response response) throws IOException {
                throw thrown;
              }

              @Override
              public void onFailure(Call call, IOException e) {
                callback.onFailure(call, e);
              }
            });
    scheduler.runUntilIdle();
    assertThat(callback.outcomes).as("no second callback").isEmpty();
    assertThat(script.closed(1)).isTrue();
    assertThat(log.warnings())
        .singleElement()
        .satisfies(
            w -> {
              assertThat(w.message()).startsWith("Callback.onResponse threw");
              assertThat(w.thrown()).isSameAs(thrown);
            });
  }

  // ---- user code that throws ----

  /** A listener whose {@code onAttemptStarted} throws {@code t} for attempt {@code n}. */
  RetryPolicy.Builder throwingOnAttempt(int n, Error t) {
    return oneSecondApart()
        .listener(
            new RetryListener() {
              @Override
              public void onAttemptStarted(Request request, int attempt) {
                if (attempt == n) throw t;
              }
            });
  }

  @Test
  void anErrorFromTheFirstAttemptsListenerIsThrownFromEnqueueAndTheCallbackGetsOneFailure() {
    AssertionError bug = new AssertionError("listener bug");
    Call call = factory(throwingOnAttempt(1, bug)).newCall(get());
    assertThat(catchThrowable(() -> call.enqueue(callback))).isSameAs(bug);
    assertThat(callback.outcomes).isEmpty();
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("canceled due to " + bug).hasCause(bug);
    assertThat(callback.onTheDispatcher).containsExactly(true);
    assertThat(call.isCanceled()).isTrue();
    assertThat(script.attempts()).isZero();
    assertThat(log.warnings())
        .singleElement()
        .satisfies(w -> assertThat(w.message()).contains("the call is canceled"));
  }

  @Test
  void anErrorFromAListenerOnTheDispatcherEndsTheCallAndIsRethrownThere() {
    script.thenAlways(200);
    AssertionError bug = new AssertionError("listener bug");
    Call call =
        factory(
                retry()
                    .listener(
                        new RetryListener() {
                          @Override
                          public void onSucceeded(
                              Request request, Response response, int attempts) {
                            throw bug;
                          }
                        }))
            .newCall(get());
    call.enqueue(callback);
    assertThat(catchThrowable(scheduler::runUntilIdle))
        .as("rethrown on the dispatcher's thread")
        .isSameAs(bug);
    scheduler.runUntilIdle();
    assertThat(callback.failure()).hasMessage("canceled due to " + bug).hasCause(bug);
    assertThat(call.isCanceled()).isTrue();
    assertThat(script.closed(1)).as("the response nobody will read").isTrue();
  }

  @Test
  void anErrorFromAListenerAfterAWaitGoesToTheSchedulerThreadsHandler() {
    script.status(503).thenAlways(200);
    AssertionError bug = new AssertionError("listener bug");
    Call call = factory(throwingOnAttempt(2, bug)).newCall(get());
    List<Throwable> uncaught = new ArrayList<>();
    Thread thread = Thread.currentThread();
    Thread.UncaughtExceptionHandler before = thread.getUncaughtExceptionHandler();
    thread.setUncaughtExceptionHandler((t, e) -> uncaught.add(e));
    try {
      call.enqueue(callback);
      scheduler.runUntilIdle();
    } finally {
      thread.setUncaughtExceptionHandler(before);
    }
    assertThat(uncaught).containsExactly(bug);
    assertThat(callback.failure()).hasMessage("canceled due to " + bug).hasCause(bug);
    assertThat(callback.onTheDispatcher).containsExactly(true);
    assertThat(script.attempts()).isEqualTo(1);
    assertThat(scheduler.pending()).isZero();
  }

  // ---- a dispatcher that was shut down ----

  @Test
  void aDispatcherShutDownDuringAWaitStillGetsExactlyOneCallback() {
    script.status(503).thenAlways(200);
    Call call = factory(oneSecondApart()).newCall(get());
    enqueueUntilItWaits(call);
    dispatcher.shutdown();
    scheduler.runUntilIdle();
    assertThat(callback.failure())
        .isInstanceOf(InterruptedIOException.class)
        .hasMessage("executor rejected");
    assertThat(callback.onTheDispatcher)
        .as("called back here, as OkHttp does")
        .containsExactly(false);
    assertThat(script.attempts()).isEqualTo(1);
  }

  @Test
  void aCancelAfterTheDispatcherWasShutDownNeverThrowsWhatTheCallbackThrows() {
    script.status(503).thenAlways(200);
    Call call = factory(oneSecondApart()).newCall(get());
    List<IOException> failures = new ArrayList<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onResponse(Call c, Response response) {
            response.close();
          }

          @Override
          public void onFailure(Call c, IOException e) {
            failures.add(e);
            throw new IllegalStateException("callback bug");
          }
        });
    scheduler.runFor(Duration.ofMillis(1));
    dispatcher.shutdown();
    call.cancel(); // must not throw the callback's exception
    scheduler.runUntilIdle();
    assertThat(failures).singleElement().asString().contains("Canceled");
    assertThat(log.warnings())
        .last()
        .satisfies(w -> assertThat(w.thrown()).hasMessage("callback bug"));
  }
}
