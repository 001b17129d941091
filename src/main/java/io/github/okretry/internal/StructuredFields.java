package io.github.okretry.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import okhttp3.Headers;
import org.jspecify.annotations.Nullable;

/**
 * A strict parser for the part of RFC 9651 (Structured Field Values) that rate-limit fields use: a
 * List, or a Dictionary, of Items with Parameters, each value an Integer, String, Token or Byte
 * Sequence (a key sent without a value is Boolean true). The rest (Decimal, Boolean values, Date,
 * Display String, inner lists) no rate-limit field uses, so it is a syntax error like any other:
 * null, and callers ignore the whole field (the draft's MUST for a malformed one). Otherwise §4.2
 * exactly; never throws. A Byte Sequence is checked against the base64 alphabet but kept as its
 * text (API 21 has no {@code java.util.Base64}; a key needs equality, not the bytes).
 *
 * <p>Linear in the field and bounded: one pass without backtracking, each allocation sized by the
 * item it holds, and a field longer than {@link #MAX_FIELD_CHARS} is not read at all.
 */
final class StructuredFields {
  /**
   * The longest field read, all its lines joined; a longer one is ignored like a malformed one. A
   * real one is under 100 characters, and nginx, in front of most APIs, refuses by default a header
   * over one 4 or 8 KB buffer ({@code proxy_buffer_size}).
   */
  static final int MAX_FIELD_CHARS = 4096;

  private static final List<Item> NO_PARAMS = Collections.emptyList();

  /** One member, or one parameter, with the key it was sent under (null for a List member). */
  static final class Item {
    enum Type {
      INTEGER,
      STRING,
      TOKEN,
      BYTES,
      BOOLEAN
    }

    @Nullable final String key;
    final Type type;

    /** An Integer's value, 1 for Boolean true; 0 otherwise. */
    final long integer;

    /**
     * A String's (unescaped), Token's or Byte Sequence's (base64, as sent) text; null otherwise.
     */
    @Nullable final String text;

    /** Parameters in the order sent; empty for a parameter. */
    final List<Item> params;

    Item(@Nullable String key, Type type, long integer, @Nullable String text, List<Item> params) {
      this.key = key;
      this.type = type;
      this.integer = integer;
      this.text = text;
      this.params = params;
    }

    /** The parameter {@code key}, the last one sent winning (§4.2.3.2), or null. */
    @Nullable Item param(String key) {
      return find(params, key);
    }

    @Override
    public String toString() {
      return (key == null ? "" : key + "=")
          + type
          + (text != null ? " " + text : " " + integer)
          + params;
    }
  }

  private final String in;
  private int pos;
  private final int end;

  private StructuredFields(String value) {
    // §4.2: discard leading and trailing SP (only SP) before parsing.
    int start = 0;
    int stop = value.length();
    while (start < stop && value.charAt(start) == ' ') start++;
    while (stop > start && value.charAt(stop - 1) == ' ') stop--;
    this.in = value;
    this.pos = start;
    this.end = stop;
  }

  /**
   * Field {@code name}: its lines joined with a comma (RFC 9110 §5.3, RFC 9651 §4.2); null if it is
   * absent or longer than {@link #MAX_FIELD_CHARS}. Stops counting at the bound, so a field of many
   * lines costs no more than one.
   */
  @Nullable
  static String field(Headers headers, String name) {
    String value = null;
    StringBuilder joined = null;
    int chars = 0;
    for (int i = 0, n = headers.size(); i < n; i++) {
      if (!name.equalsIgnoreCase(headers.name(i))) continue;
      String line = headers.value(i);
      chars += (value == null ? 0 : 2) + line.length();
      if (chars > MAX_FIELD_CHARS) return null;
      if (value == null) {
        value = line;
      } else {
        if (joined == null) joined = new StringBuilder(value);
        joined.append(", ").append(line);
      }
    }
    return joined != null ? joined.toString() : value;
  }

  /**
   * The members of a List (§4.2.1), or of a Dictionary (§4.2.2) each under its key; null if {@code
   * value} is null or not one. Empty input is empty.
   */
  @Nullable
  static List<Item> parse(@Nullable String value, boolean dictionary) {
    if (value == null) return null;
    StructuredFields p = new StructuredFields(value);
    List<Item> members = new ArrayList<>();
    while (p.pos < p.end) {
      Item member = p.member(dictionary);
      if (member == null) return null;
      members.add(member);
      // After a member: optional whitespace, then the end, or a comma and another member.
      p.skipOws();
      if (p.pos == p.end) break;
      if (!p.take(',')) return null;
      p.skipOws();
      if (p.pos == p.end) return null; // a trailing comma
    }
    return members;
  }

  /**
   * The last of {@code items} sent under {@code key} (a later value replaces an earlier one), or
   * null.
   */
  @Nullable
  static Item find(List<Item> items, String key) {
    for (int i = items.size() - 1; i >= 0; i--) {
      if (key.equals(items.get(i).key)) return items.get(i);
    }
    return null;
  }

  // A List member is an Item; a Dictionary member a key, then "=" and an Item, or true with
  // parameters.
  @Nullable
  private Item member(boolean dictionary) {
    String key = dictionary ? key() : null;
    if (dictionary && key == null) return null;
    Item bare =
        dictionary && !take('=')
            ? new Item(key, Item.Type.BOOLEAN, 1, null, NO_PARAMS)
            : bareItem(key);
    if (bare == null || peek() != ';') return bare;
    List<Item> params = new ArrayList<>(4);
    while (take(';')) {
      while (peek() == ' ') pos++;
      String k = key();
      if (k == null) return null;
      Item value = take('=') ? bareItem(k) : new Item(k, Item.Type.BOOLEAN, 1, null, NO_PARAMS);
      if (value == null) return null;
      params.add(value);
    }
    return new Item(key, bare.type, bare.integer, bare.text, params);
  }

  @Nullable
  private String key() {
    char c = peek();
    if (!(isLcAlpha(c) || c == '*')) return null;
    int start = pos++;
    while (pos < end) {
      c = in.charAt(pos);
      if (!(isLcAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*')) break;
      pos++;
    }
    return in.substring(start, pos);
  }

  @Nullable
  private Item bareItem(@Nullable String key) {
    char c = peek();
    if (c == '-' || isDigit(c)) return integer(key);
    if (c == '"') return string(key);
    if (c == '*' || isAlpha(c)) return token(key);
    if (c == ':') return byteSequence(key);
    return null;
  }

  // §4.2.4: at most 15 digits. A '.' after them (a Decimal) is left unread, so the field is
  // malformed.
  @Nullable
  private Item integer(@Nullable String key) {
    boolean negative = take('-');
    int start = pos;
    long value = 0;
    while (pos < end && isDigit(in.charAt(pos))) {
      if (pos - start == 15) return null;
      value = value * 10 + (in.charAt(pos++) - '0');
    }
    if (pos == start) return null;
    return new Item(key, Item.Type.INTEGER, negative ? -value : value, null, NO_PARAMS);
  }

  @Nullable
  private Item string(@Nullable String key) {
    pos++; // '"'
    StringBuilder b = new StringBuilder();
    while (pos < end) {
      char c = in.charAt(pos++);
      if (c == '"') return new Item(key, Item.Type.STRING, 0, b.toString(), NO_PARAMS);
      if (c == '\\') {
        c = peek();
        pos++;
        if (c != '"' && c != '\\') return null;
      } else if (c < 0x20 || c > 0x7e) {
        return null;
      }
      b.append(c);
    }
    return null; // no closing quote
  }

  private Item token(@Nullable String key) {
    int start = pos++;
    while (pos < end
        && (isTchar(in.charAt(pos)) || in.charAt(pos) == ':' || in.charAt(pos) == '/')) {
      pos++;
    }
    return new Item(key, Item.Type.TOKEN, 0, in.substring(start, pos), NO_PARAMS);
  }

  @Nullable
  private Item byteSequence(@Nullable String key) {
    int start = ++pos; // after ':'
    while (pos < end) {
      char c = in.charAt(pos++);
      if (c == ':') {
        String text = in.substring(start, pos - 1);
        return isBase64(text) ? new Item(key, Item.Type.BYTES, 0, text, NO_PARAMS) : null;
      }
      if (!(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=')) return null;
    }
    return null; // no closing colon
  }

  // The alphabet is checked while scanning; here: '=' only as trailing padding, and no length that
  // cannot be base64 (one character left over). Omitted padding is accepted (§4.2.7 "SHOULD").
  private static boolean isBase64(String text) {
    int end = text.length();
    while (end > 0 && text.charAt(end - 1) == '=') end--;
    if (text.length() - end > 2 || text.indexOf('=') != (end == text.length() ? -1 : end)) {
      return false;
    }
    return end % 4 != 1;
  }

  private boolean take(char c) {
    if (peek() != c) return false;
    pos++;
    return true;
  }

  private char peek() {
    return pos < end ? in.charAt(pos) : '\0';
  }

  private void skipOws() {
    while (pos < end && (in.charAt(pos) == ' ' || in.charAt(pos) == '\t')) pos++;
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
