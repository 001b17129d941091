package io.github.okretry.internal;

import static io.github.okretry.internal.StructuredItem.TRUE;
import static io.github.okretry.internal.StructuredItem.bare;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A strict parser for the two RFC 9651 (Structured Field Values) top-level types the {@code
 * RateLimit} fields use: List and Dictionary, with every bare item type (Integer, Decimal,
 * String, Token, Byte Sequence, Boolean, Date, Display String) and inner lists, so a valid field
 * using a type okretry ignores still parses. Follows the RFC's parsing algorithms (§4.2) exactly;
 * any deviation returns null, which callers treat as "ignore the whole field" (§4.2: "if parsing
 * fails … the entire field is ignored"). Never throws. Byte Sequences are checked against the
 * base64 alphabet but kept as their text (Android API 21 has no {@code java.util.Base64}; a key
 * needs equality, not the bytes). Each member, parameter and inner-list item comes out as a
 * {@link StructuredItem}.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
final class StructuredFields {
  private static final Charset UTF_8 = Charset.forName("UTF-8");

  private final String in;
  private int pos;

  private StructuredFields(String value) {
    // §4.2: discard leading and trailing SP (only SP) before parsing.
    int start = 0;
    int end = value.length();
    while (start < end && value.charAt(start) == ' ') start++;
    while (end > start && value.charAt(end - 1) == ' ') end--;
    this.in = value.substring(start, end);
  }

  /** Parses a List (§4.2.1), or returns null if {@code value} is not one. Empty input is an empty list. */
  @Nullable
  static List<StructuredItem> parseList(@Nullable String value) {
    if (value == null) return null;
    StructuredFields p = new StructuredFields(value);
    List<StructuredItem> members = new ArrayList<>();
    while (!p.atEnd()) {
      StructuredItem member = p.itemOrInnerList();
      if (member == null) return null;
      members.add(member);
      if (!p.endOfMember()) return null;
    }
    return Collections.unmodifiableList(members);
  }

  /** Parses a Dictionary (§4.2.2), or returns null if {@code value} is not one. */
  @Nullable
  static Map<String, StructuredItem> parseDictionary(@Nullable String value) {
    if (value == null) return null;
    StructuredFields p = new StructuredFields(value);
    Map<String, StructuredItem> members = new LinkedHashMap<>();
    while (!p.atEnd()) {
      String key = p.key();
      if (key == null) return null;
      StructuredItem member;
      if (p.peek() == '=') {
        p.pos++;
        member = p.itemOrInnerList();
      } else {
        Map<String, StructuredItem> params = p.parameters();
        member = params == null ? null
            : new StructuredItem(StructuredItem.BOOLEAN, 1, null, Collections.<StructuredItem>emptyList(), params);
      }
      if (member == null) return null;
      members.put(key, member);
      if (!p.endOfMember()) return null;
    }
    return Collections.unmodifiableMap(members);
  }

  /** Joins field lines as RFC 9110 §5.3 and RFC 9651 §4.2 say: with a comma. Null if none. */
  @Nullable
  static String combine(List<String> lines) {
    if (lines.isEmpty()) return null;
    if (lines.size() == 1) return lines.get(0);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < lines.size(); i++) {
      if (i > 0) b.append(", ");
      b.append(lines.get(i));
    }
    return b.toString();
  }

  // After a member: optional whitespace, then the end or a comma followed by another member.
  private boolean endOfMember() {
    skipOws();
    if (atEnd()) return true;
    if (in.charAt(pos) != ',') return false;
    pos++;
    skipOws();
    return !atEnd(); // a trailing comma is an error
  }

  @Nullable
  private StructuredItem itemOrInnerList() {
    return peek() == '(' ? innerList() : item();
  }

  @Nullable
  private StructuredItem innerList() {
    pos++; // '('
    List<StructuredItem> items = new ArrayList<>();
    while (!atEnd()) {
      skipSpaces();
      if (peek() == ')') {
        pos++;
        Map<String, StructuredItem> params = parameters();
        return params == null ? null
            : new StructuredItem(StructuredItem.INNER_LIST, 0, null, Collections.unmodifiableList(items), params);
      }
      StructuredItem item = item();
      if (item == null) return null;
      items.add(item);
      char c = peek();
      if (c != ' ' && c != ')') return null;
    }
    return null; // no closing parenthesis
  }

  @Nullable
  private StructuredItem item() {
    StructuredItem bare = bareItem();
    if (bare == null) return null;
    Map<String, StructuredItem> params = parameters();
    return params == null ? null : new StructuredItem(bare.type, bare.integer, bare.text, bare.inner, params);
  }

  @Nullable
  private Map<String, StructuredItem> parameters() {
    Map<String, StructuredItem> params = null;
    while (peek() == ';') {
      pos++;
      skipSpaces();
      String key = key();
      if (key == null) return null;
      StructuredItem value = TRUE;
      if (peek() == '=') {
        pos++;
        value = bareItem();
        if (value == null) return null;
      }
      if (params == null) params = new LinkedHashMap<>();
      params.put(key, value);
    }
    return params == null ? Collections.<String, StructuredItem>emptyMap() : Collections.unmodifiableMap(params);
  }

  @Nullable
  private String key() {
    char c = peek();
    if (!(isLcAlpha(c) || c == '*')) return null;
    int start = pos++;
    while (!atEnd()) {
      c = in.charAt(pos);
      if (!(isLcAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*')) break;
      pos++;
    }
    return in.substring(start, pos);
  }

  @Nullable
  private StructuredItem bareItem() {
    char c = peek();
    if (c == '-' || isDigit(c)) return number();
    if (c == '"') return string();
    if (c == '*' || isAlpha(c)) return token();
    if (c == ':') return byteSequence();
    if (c == '?') return bool();
    if (c == '@') {
      pos++;
      StructuredItem n = number();
      return n == null || n.type != StructuredItem.INTEGER ? null : bare(StructuredItem.DATE, n.integer, null);
    }
    if (c == '%') return displayString();
    return null;
  }

  // §4.2.4: at most 15 integer digits, or 12 + '.' + 1..3 for a decimal.
  @Nullable
  private StructuredItem number() {
    int start = pos;
    boolean negative = false;
    if (peek() == '-') {
      negative = true;
      pos++;
    }
    if (!isDigit(peek())) return null;
    boolean decimal = false;
    int digits = 0; // characters of input_number, '.' included
    int dot = -1;
    long value = 0;
    while (!atEnd()) {
      char c = in.charAt(pos);
      if (isDigit(c)) {
        digits++;
        if (!decimal) value = value * 10 + (c - '0'); // ≤ 15 digits: no overflow
      } else if (!decimal && c == '.') {
        if (digits > 12) return null;
        decimal = true;
        dot = digits;
        digits++;
      } else {
        break;
      }
      pos++;
      if (!decimal && digits > 15) return null;
      if (decimal && digits > 16) return null;
    }
    if (!decimal) return bare(StructuredItem.INTEGER, negative ? -value : value, null);
    int fraction = digits - dot - 1;
    if (fraction < 1 || fraction > 3) return null;
    return bare(StructuredItem.DECIMAL, 0, in.substring(start, pos));
  }

  @Nullable
  private StructuredItem string() {
    pos++; // '"'
    StringBuilder b = new StringBuilder();
    while (!atEnd()) {
      char c = in.charAt(pos++);
      if (c == '\\') {
        if (atEnd()) return null;
        char next = in.charAt(pos++);
        if (next != '"' && next != '\\') return null;
        b.append(next);
      } else if (c == '"') {
        return bare(StructuredItem.STRING, 0, b.toString());
      } else if (c < 0x20 || c > 0x7e) {
        return null;
      } else {
        b.append(c);
      }
    }
    return null; // no closing quote
  }

  private StructuredItem token() {
    int start = pos++;
    while (!atEnd()) {
      char c = in.charAt(pos);
      if (!(isTchar(c) || c == ':' || c == '/')) break;
      pos++;
    }
    return bare(StructuredItem.TOKEN, 0, in.substring(start, pos));
  }

  @Nullable
  private StructuredItem byteSequence() {
    pos++; // ':'
    int start = pos;
    while (!atEnd()) {
      char c = in.charAt(pos);
      if (c == ':') {
        String text = in.substring(start, pos++);
        return isBase64(text) ? bare(StructuredItem.BYTES, 0, text) : null;
      }
      if (!(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=')) return null;
      pos++;
    }
    return null; // no closing colon
  }

  // The alphabet is checked while scanning; here: '=' only as trailing padding, and no length that
  // cannot be base64 (one character left over). Omitted padding is accepted (§4.2.7 "SHOULD").
  private static boolean isBase64(String text) {
    int end = text.length();
    while (end > 0 && text.charAt(end - 1) == '=') end--;
    if (text.length() - end > 2 || text.indexOf('=') != (end == text.length() ? -1 : end)) return false;
    return end % 4 != 1;
  }

  @Nullable
  private StructuredItem bool() {
    pos++; // '?'
    char c = peek();
    if (c != '0' && c != '1') return null;
    pos++;
    return bare(StructuredItem.BOOLEAN, c - '0', null);
  }

  // RFC 9651 §4.2.10: %"…" with %xx (lowercase hex) escapes that must decode as UTF-8.
  @Nullable
  private StructuredItem displayString() {
    pos++; // '%'
    if (peek() != '"') return null;
    pos++;
    ByteBuffer bytes = ByteBuffer.allocate(in.length());
    while (!atEnd()) {
      char c = in.charAt(pos++);
      if (c < 0x20 || c > 0x7e) return null;
      if (c == '%') {
        if (pos + 2 > in.length()) return null;
        int hi = lowerHex(in.charAt(pos));
        int lo = lowerHex(in.charAt(pos + 1));
        if (hi < 0 || lo < 0) return null;
        bytes.put((byte) (hi * 16 + lo));
        pos += 2;
      } else if (c == '"') {
        bytes.flip();
        try {
          String text = UTF_8.newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(bytes).toString();
          return bare(StructuredItem.DISPLAY_STRING, 0, text);
        } catch (CharacterCodingException e) {
          return null;
        }
      } else {
        bytes.put((byte) c);
      }
    }
    return null;
  }

  private static int lowerHex(char c) {
    if (isDigit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  }

  private boolean atEnd() {
    return pos >= in.length();
  }

  private char peek() {
    return atEnd() ? '\0' : in.charAt(pos);
  }

  private void skipSpaces() {
    while (!atEnd() && in.charAt(pos) == ' ') pos++;
  }

  private void skipOws() {
    while (!atEnd() && (in.charAt(pos) == ' ' || in.charAt(pos) == '\t')) pos++;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isLcAlpha(char c) {
    return c >= 'a' && c <= 'z';
  }

  private static boolean isAlpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  // RFC 9110 tchar.
  private static boolean isTchar(char c) {
    return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }
}
