package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link LogText}: control, C1 and bidi characters in text a server controls are escaped, other
 * text passes unchanged (and uncopied), and long text is cut to the cap with a count. End to end:
 * {@code UntrustedTextTest}.
 */
@Tag("unit")
class LogTextTest {

  static Stream<Arguments> escapes() {
    return Stream.of(
        Arguments.of(
            "plain ASCII",
            "Unexpected status line: HTTP/1.1 2OO OK",
            "Unexpected status line: HTTP/1.1 2OO OK"),
        Arguments.of("CR and LF", "a\rb\nc", "a\\rb\\nc"),
        Arguments.of("tab", "a\tb", "a\\tb"),
        Arguments.of("ANSI escape (ESC)", "\u001b[31mred", "\\u001b[31mred"),
        Arguments.of("NUL and DEL", "a\u0000b\u007f", "a\\u0000b\\u007f"),
        Arguments.of("C1 controls (CSI, NEL)", "\u009b2J\u0085", "\\u009b2J\\u0085"),
        Arguments.of(
            "bidi override and isolates",
            "\u202Eexe.txt\u2066x\u2069",
            "\\u202eexe.txt\\u2066x\\u2069"),
        Arguments.of(
            "line separator, zero width, BOM", "a\u2028b\u200Bc\uFEFF", "a\\u2028b\\u200bc\\ufeff"),
        Arguments.of(
            "letters of other scripts", "Zürich Ελλάδα 東京 مرحبا", "Zürich Ελλάδα 東京 مرحبا"),
        Arguments.of("backslashes pass unchanged", "C:\\path\\u001b", "C:\\path\\u001b"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("escapes")
  void escapesControlCharactersOnly(String name, String in, String out) {
    assertThat(LogText.safe(in)).isEqualTo(out);
  }

  /** The first and last character of each escaped range, and its neighbours, which pass. */
  @ParameterizedTest(name = "U+{0}: escaped {1}")
  @CsvSource({
    "001f, true",
    "0020, false",
    "007e, false",
    "007f, true",
    "009f, true",
    "00a0, false",
    "061b, false",
    "061c, true",
    "061d, false",
    "200a, false",
    "200b, true",
    "200f, true",
    "2010, false",
    "2027, false",
    "2028, true",
    "202e, true",
    "202f, false",
    "205f, false",
    "2060, true",
    "206f, true",
    "2070, false",
    "fefe, false",
    "feff, true",
    "ff00, false",
    "fff8, false",
    "fff9, true",
    "fffb, true",
    "fffc, false",
  })
  void theEdgesOfEachEscapedRange(String hex, boolean escaped) {
    char c = (char) Integer.parseInt(hex, 16);
    String text = "a" + c + "b";
    assertThat(LogText.safe(text)).isEqualTo(escaped ? "a\\u" + hex + "b" : text);
  }

  @Test
  void nullStaysNullAndCleanTextIsNotCopied() {
    assertThat(LogText.safe(null)).isNull();
    String clean = "SocketTimeoutException: timeout";
    assertThat(LogText.safe(clean)).isSameAs(clean);
    String atTheCap = "x".repeat(LogText.MAX_CHARS);
    assertThat(LogText.safe(atTheCap)).isSameAs(atTheCap);
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
    assertThat(pairs)
        .startsWith("x\uD83D\uDE00")
        .endsWith("\uDE00... (202 more chars)"); // 99 pairs kept, 101 left
  }
}
