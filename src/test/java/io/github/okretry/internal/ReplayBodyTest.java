package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.RequestBody;
import okio.Buffer;
import okio.BufferedSink;
import okio.ByteString;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplayBody} and its {@link ReplayBuffer}: the bytes kept per call and in all, taken and
 * given back; what is wrapped and what is not.
 */
@Tag("unit")
class ReplayBodyTest {

  static final int KIB = 1024;

  /** A one-shot body of {@code size} bytes, each {@code (byte) i}, in writes of 1 000 bytes. */
  static RequestBody oneShot(int size, boolean duplex) {
    return new RequestBody() {
      boolean written;

      @Override
      public MediaType contentType() {
        return MediaType.get("application/octet-stream");
      }

      @Override
      public long contentLength() {
        return -1; // as a stream of unknown length: only the writes tell
      }

      @Override
      public boolean isOneShot() {
        return true;
      }

      @Override
      public boolean isDuplex() {
        return duplex;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        if (written) throw new IllegalStateException("written twice");
        written = true;
        for (int i = 0; i < size; i++) {
          sink.writeByte(i);
          if (i % 1000 == 999) sink.flush(); // small writes, as a stream read in pieces makes
        }
      }
    };
  }

  static ByteString expected(int size) {
    Buffer b = new Buffer();
    for (int i = 0; i < size; i++) b.writeByte(i);
    return b.readByteString();
  }

  static ByteString write(RequestBody body) throws IOException {
    Buffer b = new Buffer();
    body.writeTo(b);
    return b.readByteString();
  }

  @Test
  void onlyOneShotBodiesThatAreNotDuplexAreWrapped() {
    ReplayBuffer buffer = new ReplayBuffer(KIB, 4 * KIB);
    assertThat(buffer.wrap(null)).isNull();
    assertThat(buffer.wrap(RequestBody.create(new byte[10]))).as("repeatable already").isNull();
    assertThat(buffer.wrap(oneShot(10, true))).as("duplex").isNull();
    assertThat(buffer.wrap(oneShot(10, false))).isNotNull();
    assertThat(new ReplayBuffer(0, 0).wrap(oneShot(10, false))).as("none kept").isNull();
  }

  @Test
  void aKeptBodyIsWrittenAgainAndItsBytesGoBackWhenReleased() throws IOException {
    ReplayBuffer buffer = new ReplayBuffer(4 * KIB, 8 * KIB);
    ReplayBody body = buffer.wrap(oneShot(3000, false));
    assertThat(body.isOneShot()).isTrue();
    assertThat(body.replayable()).as("never read: the stream is still there").isTrue();
    assertThat(write(body)).isEqualTo(expected(3000));
    assertThat(buffer.usedBytes()).isEqualTo(3000);
    assertThat(body.isOneShot()).isFalse();
    assertThat(body.replayable()).isTrue();
    assertThat(write(body)).isEqualTo(expected(3000));
    assertThat(write(body)).isEqualTo(expected(3000));
    body.release();
    body.release();
    assertThat(buffer.usedBytes()).isZero();
    assertThatThrownBy(() -> write(body)).hasMessageContaining("its call ended");
  }

  @Test
  void oneByteOverThePerCallLimitKeepsNothing() throws IOException {
    ReplayBuffer buffer = new ReplayBuffer(2 * KIB, 8 * KIB);
    ReplayBody body = buffer.wrap(oneShot(2 * KIB + 1, false));
    assertThat(write(body)).as("the attempt is sent whole").isEqualTo(expected(2 * KIB + 1));
    assertThat(buffer.usedBytes()).isZero();
    assertThat(body.replayable()).isFalse();
    assertThat(body.whyNotKept()).isEqualTo("a one-shot body of more than 2 KiB was not kept");
    assertThatThrownBy(() -> write(body))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("more than 2 KiB");
    ReplayBody exact = buffer.wrap(oneShot(2 * KIB, false));
    write(exact);
    assertThat(exact.replayable()).as("exactly the limit fits").isTrue();
    exact.release();
  }

  @Test
  void aBodyThatFindsTheTotalInUseKeepsNothingAndTheOthersKeepTheirs() throws IOException {
    ReplayBuffer buffer = new ReplayBuffer(3000, 5000);
    ReplayBody first = buffer.wrap(oneShot(3000, false));
    ReplayBody second = buffer.wrap(oneShot(3000, false));
    write(first);
    write(second);
    assertThat(first.replayable()).isTrue();
    assertThat(second.replayable()).isFalse();
    assertThat(second.whyNotKept())
        .isEqualTo("a one-shot body was not kept: its calls' 5000 bytes for replay was in use");
    assertThat(buffer.usedBytes()).isEqualTo(3000);
    first.release();
    second.release();
    assertThat(buffer.usedBytes()).isZero();
    ReplayBody third = buffer.wrap(oneShot(3000, false));
    write(third);
    assertThat(third.replayable()).as("room again").isTrue();
    third.release();
  }

  @Test
  void releasedWhileWritingItKeepsNothingMore() throws IOException {
    ReplayBuffer buffer = new ReplayBuffer(8 * KIB, 8 * KIB);
    ReplayBody[] self = new ReplayBody[1];
    RequestBody stream =
        new RequestBody() {
          @Override
          public MediaType contentType() {
            return null;
          }

          @Override
          public boolean isOneShot() {
            return true;
          }

          @Override
          public void writeTo(BufferedSink sink) throws IOException {
            sink.write(new byte[1000]);
            sink.emit();
            self[0].release(); // the call ends on another thread, as a cancel does
            sink.write(new byte[1000]);
          }
        };
    self[0] = buffer.wrap(stream);
    write(self[0]);
    assertThat(buffer.usedBytes()).isZero();
    assertThat(self[0].replayable()).isFalse();
  }

  /**
   * The heap that 32 kept bodies of 512 KiB (16 MiB, the default total) take, written in 8 KiB
   * pieces as an upload is: about their size, okio's segments shared with the sink, not copied. A
   * measure, printed; asserted only loosely.
   */
  @Test
  void keptBytesCostAboutTheirSizeInHeap() throws IOException {
    ReplayBuffer buffer = new ReplayBuffer(512 * KIB, 16 * 1024 * KIB);
    List<ReplayBody> kept = new ArrayList<>();
    long before = usedHeapAfterGc();
    for (int i = 0; i < 32; i++) {
      ReplayBody body = buffer.wrap(oneShot(512 * KIB, false));
      Buffer sink = new Buffer();
      body.writeTo(sink);
      sink.clear(); // the socket took it
      kept.add(body);
    }
    long held = usedHeapAfterGc() - before;
    assertThat(buffer.usedBytes()).isEqualTo(16L * 1024 * KIB);
    for (ReplayBody body : kept) body.release();
    long after = usedHeapAfterGc() - before;
    System.out.printf(
        "ReplayBodyTest: 32 bodies of 512 KiB kept: %.1f MiB of heap; released: %.1f MiB%n",
        held / 1048576.0, after / 1048576.0);
    assertThat(buffer.usedBytes()).isZero();
    assertThat(held).as("kept: about 16 MiB").isBetween(12L << 20, 24L << 20);
    assertThat(after).as("released").isLessThan(4L << 20);
  }

  static long usedHeapAfterGc() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) System.gc();
    return rt.totalMemory() - rt.freeMemory();
  }
}
