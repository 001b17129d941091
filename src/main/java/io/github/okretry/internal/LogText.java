package io.github.okretry.internal;

import org.jspecify.annotations.Nullable;

/**
 * Makes text that a server controls safe to put in a log line or a listener string: an exception
 * message can carry a malformed status line, and with it ANSI escape sequences, a bare CR that
 * forges a second log line, or 256 KiB of anything.
 *
 * <p>Escaped: C0 controls and DEL ({@code \r}, {@code \n}, {@code \t} as such, the others as {@code
 * \u001b}), C1 controls, Unicode line and paragraph separators, the bidirectional and invisible
 * format controls (U+061C, U+200B–U+200F, U+202A–U+202E, U+2060–U+206F, U+FEFF, U+FFF9–U+FFFB) and
 * unpaired surrogates. Everything else passes unchanged, backslashes included. The result is at
 * most {@link #MAX_CHARS} characters plus a short "... (N more chars)" suffix.
 */
public final class LogText {

  /** The most characters kept from one piece of untrusted text, counted after escaping. */
  public static final int MAX_CHARS = 200;

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private LogText() {}

  /**
   * {@code text} with control characters escaped and cut to {@link #MAX_CHARS}; null stays null.
   */
  public static @Nullable String safe(@Nullable String text) {
    if (text == null) return null;
    int n = text.length();
    int i = 0;
    while (i < n && !needsEscape(text, i)) i++;
    if (i == n && n <= MAX_CHARS) return text; // the common case: nothing to do, no copy

    StringBuilder out = new StringBuilder(Math.min(n, MAX_CHARS) + 32);
    i = Math.min(i, MAX_CHARS);
    out.append(text, 0, i);
    for (; i < n && out.length() < MAX_CHARS; i++) {
      char c = text.charAt(i);
      if (!needsEscape(text, i)) {
        out.append(c);
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c == '\r') {
        out.append("\\r");
      } else if (c == '\t') {
        out.append("\\t");
      } else {
        out.append("\\u")
            .append(HEX[c >> 12])
            .append(HEX[(c >> 8) & 0xf])
            .append(HEX[(c >> 4) & 0xf])
            .append(HEX[c & 0xf]);
      }
    }
    // An escape may overshoot the cap by a few characters; what matters is that the total is
    // bounded.
    if (i < n) {
      int last = out.length() - 1;
      if (last >= 0 && Character.isHighSurrogate(out.charAt(last))) { // never end on half a pair
        out.setLength(last);
        i--;
      }
      out.append("... (").append(n - i).append(" more chars)");
    }
    return out.toString();
  }

  static boolean needsEscape(String text, int index) {
    char c = text.charAt(index);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true; // C0, DEL, C1
    if (c < 0x061c) return false; // fast path for Latin and most scripts
    if (c == 0x061c || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e)) return true;
    if ((c >= 0x2060 && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb)) return true;
    if (Character.isHighSurrogate(c)) {
      return index + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(index + 1));
    }
    if (Character.isLowSurrogate(c)) {
      return index == 0 || !Character.isHighSurrogate(text.charAt(index - 1));
    }
    return false;
  }
}
