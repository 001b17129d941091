package io.github.okretry.internal;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One RFC 9651 item (or inner list) with its parameters, as {@link StructuredFields} parses it:
 * its type, and the one field that type fills. Immutable. A class apart from the parser because
 * its readers ({@link StructuredQuotas}, which checks the {@code RateLimit} members) need the
 * value, never the parser's cursor.
 */
final class StructuredItem {
  /** Bare item types. */
  static final int INTEGER = 1;
  static final int DECIMAL = 2;
  static final int STRING = 3;
  static final int TOKEN = 4;
  static final int BYTES = 5;
  static final int BOOLEAN = 6;
  static final int DATE = 7;
  static final int DISPLAY_STRING = 8;
  /** A list member or dictionary value that is an inner list. */
  static final int INNER_LIST = 9;

  /** Boolean true without parameters: the value of a parameter sent without one (§4.2.3.2). */
  static final StructuredItem TRUE = bare(BOOLEAN, 1, null);

  /** One of the type constants above. */
  final int type;
  /** The value of an Integer, Date or Boolean (1/0); 0 otherwise. */
  final long integer;
  /** The text of a String, Token, Byte Sequence (base64, unpadded as sent), Display String or Decimal. */
  @Nullable final String text;
  /** An inner list's items; empty otherwise. */
  final List<StructuredItem> inner;
  /** Parameters by key, the last of a repeated key winning (§4.2.3.2). */
  final Map<String, StructuredItem> params;

  StructuredItem(int type, long integer, @Nullable String text, List<StructuredItem> inner,
      Map<String, StructuredItem> params) {
    this.type = type;
    this.integer = integer;
    this.text = text;
    this.inner = inner;
    this.params = params;
  }

  /** A bare item: no inner list, no parameters. */
  static StructuredItem bare(int type, long integer, @Nullable String text) {
    return new StructuredItem(type, integer, text, Collections.<StructuredItem>emptyList(),
        Collections.<String, StructuredItem>emptyMap());
  }

  /** A parameter, or null. */
  @Nullable
  StructuredItem param(String key) {
    return params.get(key);
  }

  @Override
  public String toString() {
    return "Item{type=" + type + ", integer=" + integer + ", text=" + text + ", params=" + params + "}";
  }
}
