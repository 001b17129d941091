package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import okhttp3.internal.http2.ErrorCode;
import okhttp3.internal.http2.StreamResetException;
import okio.Timeout;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Issue 15: the small helpers behind log escaping, bounded suppressed history and call timeouts. */
class HardeningInternalUnitsTest {

  @Nested
  class LogTextCases {

    static Stream<Arguments> escapes() {
      return Stream.of(
          Arguments.of("plain ASCII", "Unexpected status line: HTTP/1.1 2OO OK", "Unexpected status line: HTTP/1.1 2OO OK"),
          Arguments.of("CR and LF", "a\rb\nc", "a\\rb\\nc"),
          Arguments.of("tab", "a\tb", "a\\tb"),
          Arguments.of("ANSI escape (ESC)", "\u001b[31mred", "\\u001b[31mred"),
          Arguments.of("NUL and DEL", "a\u0000b\u007f", "a\\u0000b\\u007f"),
          Arguments.of("C1 controls (CSI, NEL)", "\u009b2J\u0085", "\\u009b2J\\u0085"),
          Arguments.of("bidi override and isolates", "\u202Eexe.txt\u2066x\u2069", "\\u202eexe.txt\\u2066x\\u2069"),
          Arguments.of("line separator, zero width, BOM", "a\u2028b\u200Bc\uFEFF", "a\\u2028b\\u200bc\\ufeff"),
          Arguments.of("letters of other scripts", "Zürich Ελλάδα 東京 مرحبا", "Zürich Ελλάδα 東京 مرحبا"),
          Arguments.of("backslashes pass unchanged", "C:\\path\\u001b", "C:\\path\\u001b"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("escapes")
    void escapesControlCharactersOnly(String name, String in, String out) {
      assertThat(LogText.safe(in)).isEqualTo(out);
    }

    @Test
    void nullStaysNullAndCleanTextIsNotCopied() {
      assertThat(LogText.safe(null)).isNull();
      String clean = "SocketTimeoutException: timeout";
      assertThat(LogText.safe(clean)).isSameAs(clean);
    }

    @Test
    void surrogatePairsPassButHalvesAreEscaped() {
      assertThat(LogText.safe("ok \uD83D\uDE00")).isEqualTo("ok \uD83D\uDE00");
      assertThat(LogText.safe("a\uD83Db")).isEqualTo("a\\ud83db");
      assertThat(LogText.safe("a\uDE00b")).isEqualTo("a\\ude00b");
      assertThat(LogText.safe("\uD83D")).isEqualTo("\\ud83d");
    }

    @Test
    void longTextIsCutToTheCapWithACount() {
      String cut = LogText.safe("x".repeat(100_000));
      assertThat(cut).isEqualTo("x".repeat(LogText.MAX_CHARS) + "... (99800 more chars)");
      String escapes = LogText.safe("\r".repeat(100_000));
      assertThat(escapes).startsWith("\\r\\r").endsWith("more chars)");
      assertThat(escapes.length()).isLessThanOrEqualTo(LogText.MAX_CHARS + 30);
      assertThat(LogText.safe("x".repeat(LogText.MAX_CHARS))).hasSize(LogText.MAX_CHARS);
      // a cut never leaves half a surrogate pair behind
      String pairs = LogText.safe("x" + "\uD83D\uDE00".repeat(200));
      assertThat(pairs.codePoints().filter(c -> Character.isSurrogate((char) c))).isEmpty();
      assertThat(pairs).startsWith("x\uD83D\uDE00").endsWith("\uDE00... (202 more chars)"); // 99 pairs kept, 101 left
    }
  }

  @Nested
  class FailureHistoryCases {

    static List<String> attach(int failures) {
      FailureHistory history = new FailureHistory();
      for (int i = 1; i <= failures; i++) history.add(new IOException("f" + i));
      assertThat(history.count()).isEqualTo(failures);
      IOException last = new IOException("last");
      assertThat(history.attachTo(last)).isSameAs(last);
      List<String> out = new ArrayList<>();
      for (Throwable t : last.getSuppressed()) {
        out.add(t instanceof FailureHistory.Omitted o ? "omitted " + o.omitted() : t.getMessage());
      }
      return out;
    }

    @Test
    void keepsAllUpToEight() {
      assertThat(attach(0)).isEmpty();
      assertThat(attach(1)).containsExactly("f1");
      assertThat(attach(3)).containsExactly("f1", "f2", "f3");
      assertThat(attach(4)).containsExactly("f1", "f2", "f3", "f4");
      assertThat(attach(8)).containsExactly("f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8");
    }

    @Test
    void keepsTheFirstThreeAndTheLastFiveBeyond() {
      assertThat(attach(9)).containsExactly("f1", "f2", "f3", "omitted 1", "f5", "f6", "f7", "f8", "f9");
      assertThat(attach(13)).containsExactly("f1", "f2", "f3", "omitted 5", "f9", "f10", "f11", "f12", "f13");
      assertThat(attach(100_000)).hasSize(FailureHistory.KEEP_FIRST + 1 + FailureHistory.KEEP_LAST)
          .contains("omitted 99992").endsWith("f99996", "f99997", "f99998", "f99999", "f100000");
    }

    @Test
    void theFinalFailureIsNeverItsOwnSuppressed() {
      FailureHistory history = new FailureHistory();
      IOException e = new IOException("same");
      history.add(e);
      assertThat(history.attachTo(e).getSuppressed()).isEmpty();
    }

    @Test
    void theMarkerSaysWhatWasLeftOutAndHasNoStackTrace() {
      FailureHistory history = new FailureHistory();
      for (int i = 0; i < 20; i++) history.add(new IOException());
      Throwable marker = history.attachTo(new IOException()).getSuppressed()[3];
      assertThat(marker).isInstanceOf(FailureHistory.Omitted.class)
          .hasMessage("okretry: 12 earlier failures omitted (failures 4 to 15); the first 3 and the last 5 are kept");
      assertThat(marker.getStackTrace()).isEmpty();
    }
  }

  @Nested
  class RefusedStreamCases {

    static IOException closedWith(Throwable suppressed) {
      IOException closed = new IOException("closed");
      closed.addSuppressed(suppressed);
      return closed;
    }

    @Test
    void aRefusalAttachedAsSuppressedProvesNotProcessedAndIsRetryable() {
      Classifier plain = new Classifier(java.util.Set.of(429, 503), null, null);
      IOException refused = closedWith(new StreamResetException(ErrorCode.REFUSED_STREAM));
      assertThat(Classifier.provesNotProcessed(refused)).isTrue();
      assertThat(plain.isRetryable(refused)).isTrue();

      IOException canceled = closedWith(new StreamResetException(ErrorCode.CANCEL));
      assertThat(Classifier.provesNotProcessed(canceled)).isFalse();
      assertThat(plain.isRetryable(canceled)).as("a bare IOException stays not retryable").isFalse();
      assertThat(Classifier.provesNotProcessed(new IOException("closed"))).isFalse();
      // a permanent failure stays permanent even if an earlier OkHttp retry met a refusal
      IOException tls = new javax.net.ssl.SSLHandshakeException("bad certificate");
      tls.addSuppressed(new StreamResetException(ErrorCode.REFUSED_STREAM));
      assertThat(plain.isRetryable(tls)).isFalse();
      // a refusal deeper down (the suppressed of a suppressed) is not this exchange's: not read
      assertThat(Classifier.provesNotProcessed(closedWith(closedWith(new StreamResetException(ErrorCode.REFUSED_STREAM))))).isFalse();
    }
  }

  @Nested
  class CallTimeoutsCases {

    @Test
    void timeoutDeadlineBothOrNeither() {
      assertThat(CallTimeouts.nanosAllowed(new Timeout())).isZero();
      assertThat(CallTimeouts.nanosAllowed(new Timeout().timeout(2, TimeUnit.SECONDS))).isEqualTo(2_000_000_000L);

      long deadline = CallTimeouts.nanosAllowed(new Timeout().deadline(2, TimeUnit.SECONDS));
      assertThat(deadline).isBetween(1_000_000_000L, 2_000_000_000L);

      Timeout both = new Timeout().timeout(5, TimeUnit.SECONDS).deadline(2, TimeUnit.SECONDS);
      assertThat(CallTimeouts.nanosAllowed(both)).isBetween(1_000_000_000L, 2_000_000_000L);
      Timeout shorterTimeout = new Timeout().timeout(1, TimeUnit.SECONDS).deadline(1, TimeUnit.HOURS);
      assertThat(CallTimeouts.nanosAllowed(shorterTimeout)).isEqualTo(1_000_000_000L);
    }

    @Test
    void aDeadlineAlreadyPassedAllowsOneNanosecond() {
      Timeout passed = new Timeout().deadlineNanoTime(System.nanoTime() - 1_000_000);
      assertThat(CallTimeouts.nanosAllowed(passed)).isEqualTo(1);
    }
  }
}
