package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.Buffer;
import okio.BufferedSink;
import okio.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 44, part 4, on real sockets and both drivers: a streaming upload whose response is lost is
 * sent again with its key and exactly its bytes (the server compares them); one past the per-call
 * limit is not; a keyless one is not either (it may have been processed); and 100 uploads at once
 * keep at most the policy's total, all of it given back. The rules on fake time: {@link
 * ReplayBufferTest}.
 */
@Tag("integration")
@ExtendWith(LeakCheck.class)
class ReplayBufferIntegrationTest {

  static final int KIB = 1024;

  /** The two drivers over a real client: the interceptor, and the factory's {@code enqueue()}. */
  enum RealDriver {
    BLOCKING {
      @Override
      Sender calls(OkHttpClient client, RetryPolicy policy, List<AutoCloseable> closing) {
        OkHttpClient retrying =
            RetryInterceptor.create(policy).install(client.newBuilder()).build();
        return request -> retrying.newCall(request).execute();
      }
    },
    ASYNC {
      @Override
      Sender calls(OkHttpClient client, RetryPolicy policy, List<AutoCloseable> closing) {
        RetryingCallFactory factory = RetryingCallFactory.create(client, policy);
        closing.add(factory);
        return request -> enqueued(factory.newCall(request));
      }
    };

    abstract Sender calls(OkHttpClient client, RetryPolicy policy, List<AutoCloseable> closing);
  }

  /** Runs a request to its end on one driver. */
  interface Sender {
    Response execute(Request request) throws IOException;
  }

  MockWebServer server;
  final List<AutoCloseable> closing = new ArrayList<>();
  final List<String> gaveUp = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closing) c.close();
    server.close();
  }

  RetryPolicy.Builder policy() {
    return RetryPolicy.builder()
        .baseDelay(Duration.ofMillis(5))
        .listener(
            new RetryListener() {
              @Override
              public void onGaveUp(
                  Request request, int attempts, GiveUpReason reason, String lastFailure) {
                gaveUp.add(reason + ": " + lastFailure);
              }
            });
  }

  OkHttpClient client() {
    OkHttpClient c = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10)).build();
    c.dispatcher().setMaxRequests(128);
    c.dispatcher().setMaxRequestsPerHost(128);
    return LeakCheck.track(c);
  }

  Request upload(StreamedBody body, IdempotencyKey key) {
    return new Request.Builder()
        .url(server.url("/upload"))
        .post(body)
        .tag(IdempotencyKey.class, key)
        .build();
  }

  static MockResponse lost() { // read whole, then the connection drops before the answer
    return new MockResponse.Builder()
        .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE)
        .build();
  }

  @ParameterizedTest
  @EnumSource(RealDriver.class)
  void aKeyedUploadWhoseResponseIsLostIsSentAgainWithItsKeyAndTheSameBytes(RealDriver driver)
      throws Exception {
    server.enqueue(lost());
    server.enqueue(new MockResponse.Builder().body("stored").build());
    StreamedBody body = new StreamedBody(512 * KIB, 1);
    RetryPolicy policy = policy().build();
    try (Response r =
        driver
            .calls(client(), policy, closing)
            .execute(upload(body, IdempotencyKey.of("upload-42")))) {
      assertThat(r.body().string()).isEqualTo("stored");
    }
    RecordedRequest first = server.takeRequest();
    RecordedRequest second = server.takeRequest();
    assertThat(first.getHeaders().get("Idempotency-Key")).isEqualTo("upload-42");
    assertThat(second.getHeaders().get("Idempotency-Key")).isEqualTo("upload-42");
    assertThat(first.getBody()).isEqualTo(body.expected());
    assertThat(second.getBody()).as("the same bytes again").isEqualTo(body.expected());
    assertThat(body.writes).as("the stream was read once").isOne();
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @ParameterizedTest
  @EnumSource(RealDriver.class)
  void anUploadOverThePerCallLimitIsNotSentAgainAndSaysWhy(RealDriver driver) throws Exception {
    server.enqueue(lost());
    server.enqueue(new MockResponse.Builder().body("stored").build());
    StreamedBody body = new StreamedBody(2 * 1024 * KIB, 2);
    RetryPolicy policy = policy().build();
    Sender calls = driver.calls(client(), policy, closing);
    IOException thrown = null;
    try (Response r = calls.execute(upload(body, IdempotencyKey.of("big")))) {
      throw new AssertionError("no response expected: " + r);
    } catch (IOException e) {
      thrown = e;
    }
    assertThat(RetryOutcome.of(thrown).giveUpReason()).isEqualTo(GiveUpReason.BODY_NOT_KEPT);
    assertThat(gaveUp)
        .singleElement()
        .asString()
        .startsWith("BODY_NOT_KEPT: ")
        .endsWith("; a one-shot body of more than 1 MiB was not kept");
    assertThat(server.getRequestCount()).isOne();
    assertThat(server.takeRequest().getBody()).isEqualTo(body.expected());
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @ParameterizedTest
  @EnumSource(RealDriver.class)
  void aKeylessUploadWhoseResponseIsLostIsNotSentAgain(RealDriver driver) throws Exception {
    server.enqueue(lost());
    server.enqueue(new MockResponse.Builder().body("stored twice").build());
    StreamedBody body = new StreamedBody(512 * KIB, 3);
    RetryPolicy policy = policy().build();
    Sender calls = driver.calls(client(), policy, closing);
    assertThatThrownBy(() -> calls.execute(upload(body, IdempotencyKey.none())))
        .isInstanceOf(IOException.class)
        .satisfies(
            e ->
                assertThat(RetryOutcome.of((IOException) e).giveUpReason())
                    .isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT));
    assertThat(server.getRequestCount()).as("kept, but it may have been processed").isOne();
    assertThat(policy.replay.usedBytes()).isZero();
  }

  /**
   * 100 uploads of 512 KiB at once, each first response lost: the policy's calls keep at most 16
   * MiB at any moment (sampled), those that found it in use end with BODY_NOT_KEPT, every other is
   * answered after a retry with the same bytes, and all of it is given back. Heap measured roughly
   * and printed.
   */
  @ParameterizedTest
  @EnumSource(RealDriver.class)
  void aHundredUploadsAtOnceKeepAtMostThePolicysTotal(RealDriver driver) throws Exception {
    UploadServer uploads = new UploadServer();
    server.setDispatcher(uploads);
    // No budget: it would rightly skip retries to an origin failing every call (NO_RECENT_SUCCESS)
    RetryPolicy policy =
        policy().baseDelay(Duration.ofMillis(50)).retryBudget(RetryBudget.unlimited()).build();
    Sender calls = driver.calls(client(), policy, closing);
    long heapBefore = usedHeapAfterGc();
    AtomicLong peakKept = new AtomicLong();
    AtomicLong peakHeap = new AtomicLong();
    Thread sampler =
        new Thread(
            () -> {
              Runtime rt = Runtime.getRuntime();
              while (!Thread.currentThread().isInterrupted()) {
                peakKept.accumulateAndGet(policy.replay.usedBytes(), Math::max);
                peakHeap.accumulateAndGet(rt.totalMemory() - rt.freeMemory(), Math::max);
                try {
                  Thread.sleep(1);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    sampler.setDaemon(true);
    sampler.start();
    Map<String, LongAdder> endings = new ConcurrentHashMap<>();
    ExecutorService callers = Executors.newFixedThreadPool(100);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        int n = i;
        done.add(
            callers.submit(
                () -> {
                  StreamedBody body = new StreamedBody(512 * KIB, 100 + n);
                  String ending;
                  try (Response r = calls.execute(upload(body, IdempotencyKey.of("u" + n)))) {
                    ending = r.code() + " " + r.body().string();
                  } catch (IOException e) {
                    RetryOutcome outcome = RetryOutcome.of(e);
                    ending =
                        outcome != null ? String.valueOf(outcome.giveUpReason()) : e.toString();
                  }
                  endings.computeIfAbsent(ending, k -> new LongAdder()).increment();
                  return null;
                }));
      }
      for (Future<?> f : done) f.get(60, TimeUnit.SECONDS);
    } finally {
      callers.shutdownNow();
      sampler.interrupt();
      sampler.join();
    }
    while (server.takeRequest(1, TimeUnit.MILLISECONDS) != null) {
      // the server's own record of each request and its body, not the client's heap
    }
    long heapAfter = usedHeapAfterGc();
    System.out.printf(
        "ReplayBufferIntegrationTest %s: endings %s; peak kept %.1f MiB; heap before %.1f MiB,"
            + " peak (sampled, no GC) %.1f MiB, after GC %.1f MiB%n",
        driver,
        endings,
        peakKept.get() / 1048576.0,
        heapBefore / 1048576.0,
        peakHeap.get() / 1048576.0,
        heapAfter / 1048576.0);
    assertThat(peakKept.get()).as("never above the total").isLessThanOrEqualTo(16L << 20);
    assertThat(policy.replay.usedBytes()).as("all given back").isZero();
    assertThat(endings.keySet()).isSubsetOf("200 same bytes", "BODY_NOT_KEPT");
    assertThat(uploads.differentBytes.sum()).isZero();
    assertThat(endings.get("200 same bytes")).as("some were kept and retried").isNotNull();
    assertThat(heapAfter - heapBefore).as("nothing kept after the calls").isLessThan(8L << 20);
  }

  /**
   * Loses the first response to each key (after reading the whole body), answers the next after
   * comparing its bytes with the first's.
   */
  static final class UploadServer extends Dispatcher {
    final Map<String, ByteString> firstBodies = new ConcurrentHashMap<>();
    final LongAdder differentBytes = new LongAdder();

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String key = request.getHeaders().get("Idempotency-Key");
      ByteString body = request.getBody();
      ByteString first = firstBodies.putIfAbsent(key, body.md5());
      if (first == null) return lost();
      boolean same = first.equals(body.md5());
      if (!same) differentBytes.increment();
      return new MockResponse.Builder().body(same ? "same bytes" : "different bytes").build();
    }
  }

  static long usedHeapAfterGc() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) System.gc();
    return rt.totalMemory() - rt.freeMemory();
  }

  /** A one-shot upload streamed from a seeded generator in 8 KiB writes. */
  static final class StreamedBody extends RequestBody {
    final int size;
    final long seed;
    volatile int writes;

    StreamedBody(int size, long seed) {
      this.size = size;
      this.seed = seed;
    }

    ByteString expected() throws IOException {
      Buffer b = new Buffer();
      fill(b);
      return b.readByteString();
    }

    private void fill(BufferedSink sink) throws IOException {
      SplittableRandom random = new SplittableRandom(seed);
      byte[] chunk = new byte[8 * KIB];
      for (int left = size; left > 0; left -= chunk.length) {
        for (int i = 0; i < chunk.length; i++) chunk[i] = (byte) random.nextInt();
        sink.write(chunk, 0, Math.min(left, chunk.length));
      }
    }

    @Override
    public MediaType contentType() {
      return MediaType.get("application/octet-stream");
    }

    @Override
    public long contentLength() {
      return size;
    }

    @Override
    public boolean isOneShot() {
      return true;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      writes++;
      fill(sink);
    }
  }

  /** Enqueues {@code call} and waits for its callback: the factory's non-blocking path. */
  static Response enqueued(Call call) throws IOException {
    return new RetryOutcomeIntegrationTest.EnqueuedCall(call).execute();
  }
}
