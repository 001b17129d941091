package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 15.5: {@code enqueue()} on a client whose dispatcher was shut down returns normally and
 * calls back exactly once with an {@link IOException}, as plain OkHttp does ({@code
 * InterruptedIOException("executor rejected")}, on the enqueuing thread): also for a call canceled
 * before {@code enqueue()}. No server is needed: nothing can be sent.
 */
class DeadDispatcherTest {

  static final Request REQUEST = new Request.Builder().url("http://127.0.0.1:9/never").build();

  OkHttpClient client;
  RetryingCallFactory calls;

  @BeforeEach
  void setUp() {
    client = new OkHttpClient.Builder().build();
    client.dispatcher().executorService().shutdown();
    calls = RetryingCallFactory.create(client, RetryInterceptor.create());
  }

  @AfterEach
  void tearDown() {
    calls.close();
  }

  /** Records every callback, with the thread it ran on. */
  static final class Recorder implements Callback {
    final List<Object> outcomes = new CopyOnWriteArrayList<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();

    @Override
    public void onFailure(Call call, IOException e) {
      outcomes.add(e);
      threads.add(Thread.currentThread());
    }

    @Override
    public void onResponse(Call call, Response response) {
      response.close();
      outcomes.add(response);
      threads.add(Thread.currentThread());
    }
  }

  @Test
  void plainOkHttpCallsBackOnceWithExecutorRejected() {
    Recorder plain = new Recorder();
    client.newCall(REQUEST).enqueue(plain); // the behaviour okretry must match
    assertThat(plain.outcomes).singleElement().isInstanceOf(InterruptedIOException.class)
        .hasFieldOrPropertyWithValue("message", "executor rejected");
    assertThat(plain.threads).containsExactly(Thread.currentThread());
  }

  @Test
  void enqueueReturnsNormallyAndCallsBackOnceWithAnIOException() throws Exception {
    Recorder recorder = new Recorder();
    calls.newCall(REQUEST).enqueue(recorder); // must not throw
    Thread.sleep(100); // a second callback, if any, would come now
    assertThat(recorder.outcomes).singleElement().isInstanceOf(InterruptedIOException.class)
        .hasFieldOrPropertyWithValue("message", "executor rejected");
    assertThat(recorder.threads).containsExactly(Thread.currentThread());
  }

  @Test
  void aCallCanceledBeforeEnqueueAlsoCallsBackOnce() throws Exception {
    Recorder recorder = new Recorder();
    Call call = calls.newCall(REQUEST);
    call.cancel();
    call.enqueue(recorder); // must not throw
    Thread.sleep(100);
    assertThat(recorder.outcomes).singleElement().isInstanceOf(IOException.class)
        .hasFieldOrPropertyWithValue("message", "Canceled");
  }
}
