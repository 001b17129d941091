package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.StructuredFields.Item;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StructuredFields}: what each bare item rate-limit fields use parses to (type and value, as
 * {@link Item} documents them), the exact edges of each character class and length bound of §4.2,
 * and Dictionary members without a value (Boolean true with their parameters).
 */
@Tag("unit")
class StructuredFieldsValuesTest {

  /** The one member of a List holding exactly one item. */
  static Item only(String value) {
    List<Item> list = StructuredFields.parse(value, false);
    assertThat(list).as(value).hasSize(1);
    return list.get(0);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          0                ¦ 0
          7                ¦ 7
          42               ¦ 42
          -5               ¦ -5
          999999999999999  ¦ 999999999999999
          -999999999999999 ¦ -999999999999999
          0009             ¦ 9
          """)
  void integersKeepTheirValueAndSign(String value, long expected) {
    Item item = only(value);
    assertThat(item.type).isEqualTo(Item.Type.INTEGER);
    assertThat(item.integer).isEqualTo(expected);
    assertThat(item.text).isNull();
    assertThat(item.params).isEmpty();
  }

  @ParameterizedTest(name = "invalid number: {0}")
  @ValueSource(
      strings = {
        "1000000000000000",
        "-1000000000000000", // 16 digits
        "1.5",
        "-0.1",
        "1.50",
        "0.0",
        "1;a=1.5", // Decimals: no rate-limit field uses them
        "1.",
        "-1.",
        "-.1",
        ".1",
        "1..2",
        "-a",
        "- 1",
        "-"
      })
  void numbersPastTheirBoundsAreInvalid(String value) {
    assertThat(parseList(value)).isNull();
  }

  @ParameterizedTest(name = "{0} -> [{1}]")
  @CsvSource(
      delimiter = '¦',
      quoteCharacter = '\'',
      textBlock =
          """
          '""'                  ¦ ''
          '"a"'                 ¦ 'a'
          '" ~"'                ¦ ' ~'
          '"a\\"b"'             ¦ 'a"b'
          '"a\\\\b"'            ¦ 'a\\b'
          '"x;y=1, (z)"'        ¦ 'x;y=1, (z)'
          """)
  void stringsAreUnescaped(String value, String text) {
    Item item = only(value);
    assertThat(item.type).isEqualTo(Item.Type.STRING);
    assertThat(item.text).isEqualTo(text);
  }

  @Test
  void stringsAcceptExactlyTheVisibleAsciiRangeAndSpace() {
    assertThat(parseList("\"\u0020\u007e\"")).isNotNull();
    assertThat(parseList("\"\u001f\"")).as("below SP").isNull();
    assertThat(parseList("\"\u007f\"")).as("DEL").isNull();
    assertThat(parseList("\"a\\")).as("an escape at the end").isNull();
    assertThat(parseList("\"a\\n\"")).as("only \\\" and \\\\ escape").isNull();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "a",
        "Z",
        "z",
        "A",
        "zZ",
        "Az",
        "*",
        "foo",
        "Foo123",
        "a:b/c",
        "text/html",
        "t!#$%&'*+-.^_`|~0"
      })
  void tokensKeepTheirText(String value) {
    Item item = only(value);
    assertThat(item.type).isEqualTo(Item.Type.TOKEN);
    assertThat(item.text).isEqualTo(value);
  }

  @Test
  void aTokenEndsAtTheFirstCharacterThatIsNotATokenCharacter() {
    Item item = only("abc;p=1");
    assertThat(item.text).isEqualTo("abc");
    assertThat(item.param("p").integer).isEqualTo(1);
    assertThat(parseList("a\"b")).as("a quote cannot follow a token").isNull();
    assertThat(parseList("a(b)")).isNull();
    assertThat(parseList("@a")).as("a token starts with ALPHA or *").isNull();
    assertThat(parseList("[a")).isNull();
    assertThat(parseList("{a")).isNull();
    assertThat(parseList("`a")).isNull();
  }

  @ParameterizedTest(name = ":{0}:")
  @ValueSource(
      strings = {"", "YQ", "YQ=", "YQ==", "YWI", "YWI=", "YWJj", "YWJjZA==", "a+/9", "AZaz09+/"})
  void byteSequencesInTheBase64AlphabetKeepTheirText(String base64) {
    Item item = only(":" + base64 + ":");
    assertThat(item.type).isEqualTo(Item.Type.BYTES);
    assertThat(item.text).isEqualTo(base64);
  }

  @ParameterizedTest(name = "invalid :{0}:")
  @ValueSource(
      strings = {
        "Y", "YWJjZ", // one character left over: no base64 has that length
        "Y===", "YQ===", // more than two padding characters
        "=YQ", "Y=Q=", "YQ=a", // padding only at the end
        "YQ-_", "YQ.a", "Y Q"
      })
  void byteSequencesThatCannotBeBase64AreInvalid(String base64) {
    assertThat(parseList(":" + base64 + ":")).isNull();
  }

  @ParameterizedTest(name = "unread type: {0}")
  @ValueSource(
      strings = {
        "?1",
        "?0",
        "1;a=?1", // Boolean values (a key without one is true, below)
        "@1659578233",
        "@-1", // Dates
        "%\"\"",
        "%\"plain\"",
        "%\"f%c3%bc\"", // Display Strings
        "(1 2)",
        "()",
        "(a;x=1 \"b\");z=1",
        "1;a=(1)"
      }) // inner lists
  void typesNoRateLimitFieldUsesAreInvalid(String value) {
    assertThat(parseList(value)).isNull();
    assertThat(parseDictionary("a=" + value)).isNull();
  }

  @Test
  void keysAreLowercaseLettersDigitsAndTheFourPunctuationMarks() {
    Item item = only("1;*a0_-.*z9=2;b");
    assertThat(item.params).extracting(p -> p.key).containsExactly("*a0_-.*z9", "b");
    assertThat(item.param("*a0_-.*z9").integer).isEqualTo(2);
    assertThat(item.param("b").type).as("no value: Boolean true").isEqualTo(Item.Type.BOOLEAN);
    assertThat(item.param("b").integer).isEqualTo(1);
    assertThat(parseList("1;0a=1")).as("a key starts with lcalpha or *").isNull();
    assertThat(parseList("1;_a=1")).isNull();
    assertThat(parseList("1;aB=1")).as("uppercase ends the key; B is not =, ; or ,").isNull();
    assertThat(parseList("1;a\t=1")).isNull();
    assertThat(parseList("1;\ta=1")).as("only SP after ;").isNull();
    assertThat(parseList("1;a=(1)")).as("a parameter's value is a bare item").isNull();
    assertThat(parseList("1;,2")).as("a ; without a key").isNull();
    assertThat(parseList("1; ,2")).isNull();
    assertThat(parseDictionary("a;,b")).isNull();
  }

  @Test
  void parametersInOrder() {
    Item item = only("a;x=1;y;z=\"s\"");
    assertThat(item.params).extracting(p -> p.key).containsExactly("x", "y", "z");
    assertThat(item.param("z").text).isEqualTo("s");
    assertThat(item.param("absent")).isNull();
    assertThat(only("1;b=1;a=2").params).extracting(p -> p.key).containsExactly("b", "a");
  }

  @Test
  void membersAreSeparatedByACommaWithOptionalSpacesAndTabs() {
    assertThat(parseList("1,2")).extracting(i -> i.integer).containsExactly(1L, 2L);
    assertThat(parseList("1 \t, \t2\t")).extracting(i -> i.integer).containsExactly(1L, 2L);
    assertThat(parseList("   ")).as("only SP: an empty list").isEmpty();
    assertThat(parseList("1, ")).as("a trailing comma").isNull();
    assertThat(parseList("1;a=1 2")).isNull();
    assertThat(parseList("1 ;a=1")).isNull();
  }

  @Test
  void aDictionaryMemberWithoutAValueIsTrueWithItsParameters() {
    List<Item> dict = parseDictionary("a, b;x=1;y, *d=tok, e=3;q=4");
    assertThat(dict).extracting(m -> m.key).containsExactly("a", "b", "*d", "e");
    assertThat(dict.get(0).type).isEqualTo(Item.Type.BOOLEAN);
    assertThat(dict.get(0).integer).isEqualTo(1);
    assertThat(dict.get(0).params).isEmpty();
    assertThat(dict.get(1).type).isEqualTo(Item.Type.BOOLEAN);
    assertThat(dict.get(1).param("x").integer).isEqualTo(1);
    assertThat(dict.get(1).param("y").type).isEqualTo(Item.Type.BOOLEAN);
    assertThat(dict.get(2).text).isEqualTo("tok");
    assertThat(dict.get(3).param("q").integer).isEqualTo(4);
    assertThat(parseDictionary("a;X")).as("a bad parameter of a member without value").isNull();
    assertThat(parseDictionary("a=\"x")).isNull();
    assertThat(parseDictionary("")).isEmpty();
    assertThat(parseDictionary("a=1,\tb=2")).extracting(m -> m.key).containsExactly("a", "b");
  }

  @Test
  void aRepeatedKeyIsFoundAtItsLastValue() {
    assertThat(StructuredFields.find(parseDictionary("a=1, b=2, a=3"), "a").integer).isEqualTo(3);
    assertThat(StructuredFields.find(parseDictionary("a=1"), "b")).isNull();
    assertThat(only("1;r=1;r=2").param("r").integer).isEqualTo(2);
  }

  static List<Item> parseList(String value) {
    return StructuredFields.parse(value, false);
  }

  static List<Item> parseDictionary(String value) {
    return StructuredFields.parse(value, true);
  }
}
