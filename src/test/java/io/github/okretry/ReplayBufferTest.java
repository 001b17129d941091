package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.Buffer;
import okio.BufferedSink;
import okio.ByteString;
import okio.ForwardingSink;
import okio.Okio;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 44, part 4: a one-shot body is kept as its first attempt writes it (gRPC A6's retry buffer)
 * and a retry writes the same bytes; past a limit, or if its first write did not end, the call is
 * not retried ({@link GiveUpReason#BODY_NOT_KEPT}). On both drivers, the scripted server reading
 * the body as a socket would. On real sockets: {@link ReplayBufferIntegrationTest}; the buffer's
 * accounting alone: {@code internal.ReplayBodyTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class ReplayBufferTest extends ScriptedTest {

  static final int KIB = 1024;

  final List<ByteString> bodiesRead = new ArrayList<>();
  final List<String> gaveUp = new ArrayList<>();
  final List<Boolean> oneShotWhenRead = new ArrayList<>();

  ReplayBufferTest(Driver driver) {
    this.driver = driver;
  }

  RetryPolicy.Builder policy() {
    return quietRetry()
        .listener(
            new RetryListener() {
              @Override
              public void onGaveUp(
                  Request request, int attempts, GiveUpReason reason, String lastFailure) {
                gaveUp.add(reason + ": " + lastFailure);
              }
            });
  }

  /** The attempt reads the whole body, as a server does, then answers {@code code}. */
  void reads(int code) {
    script.then(
        (chain, attempt) -> {
          Buffer b = new Buffer();
          chain.request().body().writeTo(b);
          synchronized (bodiesRead) {
            bodiesRead.add(b.readByteString());
            oneShotWhenRead.add(chain.request().body().isOneShot());
          }
          return Script.response(code, Headers.of()).play(chain, attempt);
        });
  }

  static Request upload(RequestBody body, @Nullable IdempotencyKey key) {
    Request.Builder b = new Request.Builder().url("http://example.test/upload").post(body);
    if (key != null) b.tag(IdempotencyKey.class, key);
    return b.build();
  }

  @Test
  void aKeptBodyIsWrittenAgainByTheRetryWithTheSameKey() throws IOException {
    StreamedBody body = new StreamedBody(512 * KIB);
    reads(503);
    reads(200);
    RetryPolicy policy = policy().build();
    try (Response r =
        driver
            .calls(policy, script, time)
            .newCall(upload(body, IdempotencyKey.of("upload-1")))
            .execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(bodiesRead).hasSize(2).containsOnly(body.expected());
    assertThat(body.writes).as("the stream is read once; the retry writes what was kept").isOne();
    assertThat(script.requests())
        .extracting(q -> q.header("Idempotency-Key"))
        .containsExactly("upload-1", "upload-1");
    assertThat(oneShotWhenRead)
        .as("no longer one-shot once kept whole")
        .containsExactly(false, false);
    assertThat(policy.replay.usedBytes()).as("given back when the call ended").isZero();
  }

  @Test
  void aKeylessOneShotPostRefusedBy503IsRepeatedWithTheSameBytes() throws IOException {
    StreamedBody body = new StreamedBody(100 * KIB);
    reads(503);
    reads(200);
    RetryPolicy policy = policy().build();
    try (Response r =
        driver.calls(policy, script, time).newCall(upload(body, IdempotencyKey.none())).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(bodiesRead).hasSize(2).containsOnly(body.expected());
    assertThat(script.requests().get(1).header("Idempotency-Key")).isNull();
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void aBodyOverThePerCallLimitIsNotRetriedAndSaysWhy() throws IOException {
    StreamedBody body = new StreamedBody(2 * 1024 * KIB);
    reads(503);
    RetryPolicy policy = policy().build();
    RetryOutcome outcome;
    try (Response r = driver.calls(policy, script, time).newCall(upload(body, null)).execute()) {
      assertThat(r.code()).isEqualTo(503);
      outcome = RetryOutcome.of(r);
    }
    assertThat(script.attempts()).isOne();
    assertThat(outcome).isNotNull();
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.BODY_NOT_KEPT);
    assertThat(gaveUp)
        .containsExactly(
            "BODY_NOT_KEPT: HTTP 503; a one-shot body of more than 1 MiB was not kept");
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void aBodyOfUnknownLengthOverTheLimitStopsBeingKeptAsItPassesIt() throws IOException {
    StreamedBody body = new StreamedBody(300 * KIB, -1);
    reads(503);
    RetryPolicy policy = policy().replayBuffer(256 * KIB, 1024 * KIB).build();
    try (Response r = driver.calls(policy, script, time).newCall(upload(body, null)).execute()) {
      assertThat(r.code()).isEqualTo(503);
    }
    assertThat(bodiesRead).containsExactly(body.expected()); // the attempt itself is whole
    assertThat(gaveUp)
        .containsExactly(
            "BODY_NOT_KEPT: HTTP 503; a one-shot body of more than 256 KiB was not kept");
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void aBodyWhoseFirstWriteFailedIsNotRetried() {
    StreamedBody body = new StreamedBody(64 * KIB);
    script.then(
        (chain, attempt) -> {
          BufferedSink breaking = Okio.buffer(new BreaksAfter(new Buffer(), 20 * KIB));
          chain.request().body().writeTo(breaking);
          throw new AssertionError("the write should have failed");
        });
    RetryPolicy policy = policy().build();
    RetryOutcome outcome = null;
    try (Response r = driver.calls(policy, script, time).newCall(upload(body, null)).execute()) {
      throw new AssertionError("no response expected: " + r);
    } catch (IOException e) {
      outcome = RetryOutcome.of(e);
    }
    assertThat(script.attempts()).isOne();
    assertThat(outcome.giveUpReason()).isEqualTo(GiveUpReason.BODY_NOT_KEPT);
    assertThat(gaveUp)
        .singleElement()
        .asString()
        .endsWith("a one-shot body was not kept: its first attempt did not write it whole");
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void aBodyTheFirstAttemptNeverReadIsSentFromItsStream() throws IOException {
    StreamedBody body = new StreamedBody(32 * KIB);
    script.status(503); // answered before the body was read: nothing was taken from the stream
    reads(200);
    RetryPolicy policy = policy().build();
    try (Response r = driver.calls(policy, script, time).newCall(upload(body, null)).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(bodiesRead).containsExactly(body.expected());
    assertThat(body.writes).isOne();
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void keptBytesAreGivenBackWhenTheCallFailsForGood() {
    StreamedBody body = new StreamedBody(128 * KIB);
    script.then(
        (chain, attempt) -> {
          chain.request().body().writeTo(new Buffer());
          throw new SocketTimeoutException("read timed out");
        });
    script.thenAlways(
        (chain, attempt) -> {
          chain.request().body().writeTo(new Buffer());
          throw new SocketTimeoutException("read timed out");
        });
    RetryPolicy policy = policy().maxRetries(2).build();
    try (Response r =
        driver
            .calls(policy, script, time)
            .newCall(upload(body, IdempotencyKey.of("k")))
            .execute()) {
      throw new AssertionError("no response expected: " + r);
    } catch (IOException e) {
      assertThat(RetryOutcome.of(e).giveUpReason()).isEqualTo(GiveUpReason.RETRIES_EXHAUSTED);
    }
    assertThat(script.attempts()).isEqualTo(3);
    assertThat(body.writes).isOne();
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void keptBytesAreGivenBackWhenTheCallIsCanceled() {
    StreamedBody body = new StreamedBody(128 * KIB);
    reads(503);
    script.cancelingTheCall();
    reads(503);
    RetryPolicy policy = policy().build();
    try (Response r =
        driver
            .calls(policy, script, time)
            .newCall(upload(body, IdempotencyKey.of("k")))
            .execute()) {
      throw new AssertionError("no response expected: " + r);
    } catch (IOException e) {
      assertThat(RetryOutcome.of(e).giveUpReason()).isEqualTo(GiveUpReason.CANCELED);
    }
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void keptBytesAreGivenBackWhenSomethingBelowThrows() {
    StreamedBody body = new StreamedBody(128 * KIB);
    reads(503);
    script.raise(new IllegalStateException("a bug below okretry"));
    RetryPolicy policy = policy().build();
    try (Response r =
        driver
            .calls(policy, script, time)
            .newCall(upload(body, IdempotencyKey.of("k")))
            .execute()) {
      throw new AssertionError("no response expected: " + r);
    } catch (IOException | RuntimeException e) {
      // the driver's report of a throw from below; the accounting is what is checked
    }
    assertThat(policy.replay.usedBytes()).isZero();
  }

  @Test
  void noneKeptMeansNeverRepeated() throws IOException {
    StreamedBody body = new StreamedBody(1024);
    reads(503);
    RetryPolicy policy = policy().replayBuffer(0, 0).build();
    try (Response r = driver.calls(policy, script, time).newCall(upload(body, null)).execute()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(RetryOutcome.of(r).giveUpReason()).isEqualTo(GiveUpReason.NOT_SAFE_TO_REPEAT);
    }
  }

  static Stream<Arguments> badSettings() {
    return Stream.of(
        bad(
            "negative per call",
            () -> RetryPolicy.builder().replayBuffer(-1, 16),
            "perCallBytes",
            "-1"),
        bad(
            "total below per call",
            () -> RetryPolicy.builder().replayBuffer(1024, 1023),
            "perClientBytes",
            "1023"),
        bad(
            "negative total",
            () -> RetryPolicy.builder().replayBuffer(0, -5),
            "perClientBytes",
            "-5"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badSettings")
  void badSettingsAreRejectedNamingTheSettingAndValue(
      Executable setting, String field, String value) {
    assertRejectedNaming(setting, "replayBuffer " + field, value);
  }

  @Test
  void zeroPerCallIsAllowed() {
    assertThat(RetryPolicy.builder().replayBuffer(0, 0).build().replay.perCallBytes).isZero();
  }

  /**
   * A one-shot body streamed from a seeded generator in 8 KiB writes, as an upload from an {@code
   * InputStream} is: each write of it makes the stream anew, so a second write would still carry
   * the same bytes, but {@link #writes} counts them.
   */
  static final class StreamedBody extends RequestBody {
    final int size;
    final long contentLength;
    int writes;

    StreamedBody(int size) {
      this(size, size);
    }

    StreamedBody(int size, long contentLength) {
      this.size = size;
      this.contentLength = contentLength;
    }

    ByteString expected() {
      Buffer b = new Buffer();
      fill(b);
      return b.readByteString();
    }

    private void fill(BufferedSink sink) {
      try {
        SplittableRandom random = new SplittableRandom(size);
        byte[] chunk = new byte[8 * KIB];
        for (int left = size; left > 0; left -= chunk.length) {
          for (int i = 0; i < chunk.length; i++) chunk[i] = (byte) random.nextInt();
          sink.write(chunk, 0, Math.min(left, chunk.length));
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Override
    public MediaType contentType() {
      return MediaType.get("application/octet-stream");
    }

    @Override
    public long contentLength() {
      return contentLength;
    }

    @Override
    public boolean isOneShot() {
      return true;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      writes++;
      SplittableRandom random = new SplittableRandom(size);
      byte[] chunk = new byte[8 * KIB];
      for (int left = size; left > 0; left -= chunk.length) {
        for (int i = 0; i < chunk.length; i++) chunk[i] = (byte) random.nextInt();
        sink.write(chunk, 0, Math.min(left, chunk.length));
      }
    }
  }

  /** A sink whose connection breaks after {@code limit} bytes, as a socket reset mid-upload. */
  static final class BreaksAfter extends ForwardingSink {
    private long left;

    BreaksAfter(Buffer delegate, long limit) {
      super(delegate);
      this.left = limit;
    }

    @Override
    public void write(Buffer source, long byteCount) throws IOException {
      if (byteCount > left) throw new SocketTimeoutException("write timed out");
      left -= byteCount;
      super.write(source, byteCount);
    }
  }
}
