package io.github.okretry;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okio.Timeout;

/**
 * The two drivers of a policy, as a scripted test runs them on fake time: {@link #BLOCKING}, the
 * {@link RetryInterceptor} in front of the {@link Script}, waiting through {@link FakeTime#sleep};
 * {@link #ASYNC}, a {@link RetryingCallFactory} over a client whose last interceptor is the script,
 * its waits and dispatcher on a {@link FakeScheduler}. Both hand back a {@link Call.Factory} whose
 * calls' {@code execute()} returns what the driver delivered: for {@code ASYNC}, it enqueues the
 * call, runs the fake scheduler until nothing is left, and returns the response or throws the
 * exception the callback got, exactly once. A test body written against {@code execute()} then runs
 * on both drivers unchanged ({@code @ParameterizedClass @EnumSource(Driver.class)} on the test
 * class).
 */
enum Driver {
  BLOCKING {
    @Override
    Call.Factory calls(RetryPolicy policy, Script script, FakeTime time) {
      return script.client(policy);
    }
  },
  ASYNC {
    @Override
    Call.Factory calls(RetryPolicy policy, Script script, FakeTime time) {
      FakeScheduler scheduler = new FakeScheduler(time);
      OkHttpClient client =
          LeakCheck.track(
              new OkHttpClient.Builder()
                  .dispatcher(new Dispatcher(scheduler))
                  .addInterceptor(script)
                  .build());
      RetryingCallFactory factory = RetryingCallFactory.create(client, policy, scheduler);
      return request -> new RunToEnd(factory.newCall(request), scheduler);
    }
  };

  /** Calls that send {@code policy}'s attempts to {@code script} through this driver. */
  abstract Call.Factory calls(RetryPolicy policy, Script script, FakeTime time);

  /** An enqueued call whose {@code execute()} runs its whole timeline on the fake scheduler. */
  private static final class RunToEnd implements Call {
    private final Call call;
    private final FakeScheduler scheduler;

    RunToEnd(Call call, FakeScheduler scheduler) {
      this.call = call;
      this.scheduler = scheduler;
    }

    @Override
    public Response execute() throws IOException {
      AtomicReference<Object> outcome = new AtomicReference<>();
      int[] callbacks = new int[1];
      call.enqueue(
          new Callback() {
            @Override
            public void onResponse(Call c, Response response) {
              callbacks[0]++;
              outcome.set(response);
            }

            @Override
            public void onFailure(Call c, IOException e) {
              callbacks[0]++;
              outcome.set(e);
            }
          });
      scheduler.runUntilIdle();
      if (callbacks[0] != 1) throw new AssertionError(callbacks[0] + " callbacks for " + call);
      Object result = outcome.get();
      if (result instanceof Response response) return response;
      throw (IOException) result;
    }

    @Override
    public Request request() {
      return call.request();
    }

    @Override
    public void enqueue(Callback responseCallback) {
      call.enqueue(responseCallback);
    }

    @Override
    public void cancel() {
      call.cancel();
    }

    @Override
    public boolean isExecuted() {
      return call.isExecuted();
    }

    @Override
    public boolean isCanceled() {
      return call.isCanceled();
    }

    @Override
    public Timeout timeout() {
      return call.timeout();
    }

    @Override
    public void addEventListener(EventListener eventListener) {
      call.addEventListener(eventListener);
    }

    @Override
    public <T> T tag(KClass<T> type) {
      return call.tag(type);
    }

    @Override
    public <T> T tag(Class<? extends T> type) {
      return call.tag(type);
    }

    @Override
    public <T> T tag(KClass<T> type, Function0<? extends T> computeIfAbsent) {
      return call.tag(type, computeIfAbsent);
    }

    @Override
    public <T> T tag(Class<T> type, Function0<? extends T> computeIfAbsent) {
      return call.tag(type, computeIfAbsent);
    }

    @Override
    public Call clone() {
      return new RunToEnd(call.clone(), scheduler);
    }
  }
}
