package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StructuredFields}: what each RFC 9651 bare item parses to (type and value, as {@link
 * StructuredItem} documents them), the exact edges of each character class and length bound of
 * §4.2, and Dictionary members without a value (Boolean true with their parameters).
 */
@Tag("unit")
class StructuredFieldsValuesTest {

  /** The one member of a List holding exactly one item. */
  static StructuredItem only(String value) {
    List<StructuredItem> list = StructuredFields.parseList(value);
    assertThat(list).as(value).hasSize(1);
    return list.get(0);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(delimiter = '¦', textBlock = """
    0                ¦ 0
    7                ¦ 7
    42               ¦ 42
    -5               ¦ -5
    999999999999999  ¦ 999999999999999
    -999999999999999 ¦ -999999999999999
    0009             ¦ 9
    """)
  void integersKeepTheirValueAndSign(String value, long expected) {
    StructuredItem item = only(value);
    assertThat(item.type).isEqualTo(StructuredItem.INTEGER);
    assertThat(item.integer).isEqualTo(expected);
    assertThat(item.text).isNull();
    assertThat(item.params).isEmpty();
    assertThat(item.inner).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"1.5", "-0.1", "1.50", "1.123", "123456789012.1", "-123456789012.123", "0.0"})
  void decimalsKeepTheirTextAsSent(String value) {
    StructuredItem item = only(value);
    assertThat(item.type).isEqualTo(StructuredItem.DECIMAL);
    assertThat(item.text).isEqualTo(value);
  }

  @ParameterizedTest(name = "invalid number: {0}")
  @ValueSource(strings = {
    "1234567890123.1", // 13 integer digits before the dot
    "1.1234", // 4 fraction digits
    "1.", "-1.", "-.1", ".1", "1..2", "1.2.3", "-a", "- 1"})
  void numbersPastTheirBoundsAreInvalid(String value) {
    assertThat(StructuredFields.parseList(value)).isNull();
  }

  @ParameterizedTest(name = "{0} -> [{1}]")
  @CsvSource(delimiter = '¦', quoteCharacter = '\'', textBlock = """
    '""'                  ¦ ''
    '"a"'                 ¦ 'a'
    '" ~"'                ¦ ' ~'
    '"a\\"b"'             ¦ 'a"b'
    '"a\\\\b"'            ¦ 'a\\b'
    '"x;y=1, (z)"'        ¦ 'x;y=1, (z)'
    """)
  void stringsAreUnescaped(String value, String text) {
    StructuredItem item = only(value);
    assertThat(item.type).isEqualTo(StructuredItem.STRING);
    assertThat(item.text).isEqualTo(text);
  }

  @Test
  void stringsAcceptExactlyTheVisibleAsciiRangeAndSpace() {
    assertThat(StructuredFields.parseList("\"\u0020\u007e\"")).isNotNull();
    assertThat(StructuredFields.parseList("\"\u001f\"")).as("below SP").isNull();
    assertThat(StructuredFields.parseList("\"\u007f\"")).as("DEL").isNull();
    assertThat(StructuredFields.parseList("\"a\\")).as("an escape at the end").isNull();
    assertThat(StructuredFields.parseList("\"a\\n\"")).as("only \\\" and \\\\ escape").isNull();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"a", "Z", "z", "A", "zZ", "Az", "*", "foo", "Foo123", "a:b/c", "text/html", "t!#$%&'*+-.^_`|~0"})
  void tokensKeepTheirText(String value) {
    StructuredItem item = only(value);
    assertThat(item.type).isEqualTo(StructuredItem.TOKEN);
    assertThat(item.text).isEqualTo(value);
  }

  @Test
  void aTokenEndsAtTheFirstCharacterThatIsNotATokenCharacter() {
    StructuredItem item = only("abc;p=1");
    assertThat(item.text).isEqualTo("abc");
    assertThat(item.param("p").integer).isEqualTo(1);
    assertThat(StructuredFields.parseList("a\"b")).as("a quote cannot follow a token").isNull();
    assertThat(StructuredFields.parseList("a(b)")).isNull();
    assertThat(StructuredFields.parseList("@a")).as("a token starts with ALPHA or *").isNull();
    assertThat(StructuredFields.parseList("[a")).isNull();
    assertThat(StructuredFields.parseList("{a")).isNull();
    assertThat(StructuredFields.parseList("`a")).isNull();
  }

  @ParameterizedTest(name = ":{0}:")
  @ValueSource(strings = {"", "YQ", "YQ=", "YQ==", "YWI", "YWI=", "YWJj", "YWJjZA==", "a+/9", "AZaz09+/"})
  void byteSequencesInTheBase64AlphabetKeepTheirText(String base64) {
    StructuredItem item = only(":" + base64 + ":");
    assertThat(item.type).isEqualTo(StructuredItem.BYTES);
    assertThat(item.text).isEqualTo(base64);
  }

  @ParameterizedTest(name = "invalid :{0}:")
  @ValueSource(strings = {
    "Y", "YWJjZ", // one character left over: no base64 has that length
    "Y===", "YQ===", // more than two padding characters
    "=YQ", "Y=Q=", "YQ=a", // padding only at the end
    "YQ-_", "YQ.a", "Y Q"})
  void byteSequencesThatCannotBeBase64AreInvalid(String base64) {
    assertThat(StructuredFields.parseList(":" + base64 + ":")).isNull();
  }

  @Test
  void booleansAreOneOrZero() {
    assertThat(only("?1").type).isEqualTo(StructuredItem.BOOLEAN);
    assertThat(only("?1").integer).isEqualTo(1);
    assertThat(only("?0").integer).isZero();
    assertThat(StructuredFields.parseList("?/")).isNull();
    assertThat(StructuredFields.parseList("?:")).isNull();
    assertThat(StructuredFields.parseList("?true")).isNull();
  }

  @Test
  void datesAreIntegerSeconds() {
    assertThat(only("@1659578233").type).isEqualTo(StructuredItem.DATE);
    assertThat(only("@1659578233").integer).isEqualTo(1659578233L);
    assertThat(only("@-62135596800").integer).isEqualTo(-62135596800L);
    assertThat(StructuredFields.parseList("@1.0")).as("a Decimal is no Date").isNull();
    assertThat(StructuredFields.parseList("@x")).isNull();
  }

  @ParameterizedTest(name = "{0} -> [{1}]")
  @CsvSource(delimiter = '¦', quoteCharacter = '\'', textBlock = """
    '%""'                    ¦ ''
    '%"plain text"'          ¦ 'plain text'
    '%"%41%4a%7e"'           ¦ 'AJ~'
    '%"f%c3%bc%c3%9f"'       ¦ 'füß'
    '%"%e2%82%ac 5"'         ¦ '€ 5'
    '%"~ ~"'                 ¦ '~ ~'
    '%"%6f%3a"'              ¦ 'o:'
    """)
  void displayStringsDecodeTheirPercentEscapesAsUtf8(String value, String text) {
    StructuredItem item = only(value);
    assertThat(item.type).isEqualTo(StructuredItem.DISPLAY_STRING);
    assertThat(item.text).isEqualTo(text);
  }

  @Test
  void displayStringEscapesOfZeroDigitsDecode() {
    assertThat(only("%\"%09%30%00\"").text).isEqualTo("\t0\u0000");
  }

  @ParameterizedTest(name = "invalid {0}")
  @ValueSource(strings = {
    "%\"%4A\"", "%\"%g0\"", "%\"%0G\"", "%\"%:0\"", "%\"%/0\"", // lowercase hex only
    "%\"%4\"", "%\"%", "%\"%4", // an escape cut short
    "%\"abc", // no closing quote
    "%\"\u00e9\"", "%\"\u0007\"", // not visible ASCII
    "%\"%ff\"", "%\"%c3\"", // not UTF-8
    "%x", "%"})
  void displayStringsThatAreNotPercentEncodedUtf8AreInvalid(String value) {
    assertThat(StructuredFields.parseList(value)).isNull();
  }

  @Test
  void keysAreLowercaseLettersDigitsAndTheFourPunctuationMarks() {
    StructuredItem item = only("1;*a0_-.*z9=2;b");
    assertThat(item.params).containsOnlyKeys("*a0_-.*z9", "b");
    assertThat(item.param("*a0_-.*z9").integer).isEqualTo(2);
    assertThat(item.param("b")).as("no value: Boolean true").isSameAs(StructuredItem.TRUE);
    assertThat(StructuredFields.parseList("1;0a=1")).as("a key starts with lcalpha or *").isNull();
    assertThat(StructuredFields.parseList("1;_a=1")).isNull();
    assertThat(StructuredFields.parseList("1;aB=1")).as("uppercase ends the key; B is not =, ; or ,").isNull();
    assertThat(StructuredFields.parseList("1;a\t=1")).isNull();
    assertThat(StructuredFields.parseList("1;\ta=1")).as("only SP after ;").isNull();
    assertThat(StructuredFields.parseList("1;a=(1)")).as("a parameter's value is a bare item").isNull();
    assertThat(StructuredFields.parseList("1;,2")).as("a ; without a key").isNull();
    assertThat(StructuredFields.parseList("1; ,2")).isNull();
    assertThat(StructuredFields.parseDictionary("a;,b")).isNull();
  }

  @Test
  void parametersInOrderAndOnInnerListItems() {
    StructuredItem list = only("(a;x=1 \"b\";y);z=?0");
    assertThat(list.type).isEqualTo(StructuredItem.INNER_LIST);
    assertThat(list.integer).isZero();
    assertThat(list.inner).extracting(i -> i.text).containsExactly("a", "b");
    assertThat(list.inner.get(0).param("x").integer).isEqualTo(1);
    assertThat(list.inner.get(1).param("y")).isSameAs(StructuredItem.TRUE);
    assertThat(list.param("z").type).isEqualTo(StructuredItem.BOOLEAN);
    assertThat(list.param("z").integer).isZero();
    assertThat(list.param("absent")).isNull();
    assertThat(only("1;b=1;a=2").params.keySet()).containsExactly("b", "a");
  }

  @Test
  void innerListsTakeOnlySpacesBetweenItems() {
    assertThat(only("(  1   2  )").inner).extracting(i -> i.integer).containsExactly(1L, 2L);
    assertThat(only("(1)").inner).hasSize(1);
    assertThat(only("()").inner).isEmpty();
    assertThat(StructuredFields.parseList("(1\t2)")).isNull();
    assertThat(StructuredFields.parseList("(\t1)")).isNull();
    assertThat(StructuredFields.parseList("(1;A)")).as("a bad parameter inside").isNull();
    assertThat(StructuredFields.parseList("(1);A")).as("a bad parameter after").isNull();
    assertThat(StructuredFields.parseList("((1))")).as("no nesting").isNull();
    assertThat(StructuredFields.parseList("(1 ")).isNull();
    assertThat(StructuredFields.parseList("(")).isNull();
  }

  @Test
  void membersAreSeparatedByACommaWithOptionalSpacesAndTabs() {
    assertThat(StructuredFields.parseList("1,2")).extracting(i -> i.integer).containsExactly(1L, 2L);
    assertThat(StructuredFields.parseList("1 \t, \t2\t")).extracting(i -> i.integer).containsExactly(1L, 2L);
    assertThat(StructuredFields.parseList("   ")).as("only SP: an empty list").isEmpty();
    assertThat(StructuredFields.parseList("1, ")).as("a trailing comma").isNull();
    assertThat(StructuredFields.parseList("1;a=1 2")).isNull();
    assertThat(StructuredFields.parseList("1 ;a=1")).isNull();
  }

  @Test
  void aDictionaryMemberWithoutAValueIsTrueWithItsParameters() {
    Map<String, StructuredItem> dict = StructuredFields.parseDictionary("a, b;x=1;y, c=?0, *d=tok, e=(1 2);q=3");
    assertThat(dict).containsOnlyKeys("a", "b", "c", "*d", "e");
    assertThat(dict.keySet()).containsExactly("a", "b", "c", "*d", "e");
    assertThat(dict.get("a").type).isEqualTo(StructuredItem.BOOLEAN);
    assertThat(dict.get("a").integer).isEqualTo(1);
    assertThat(dict.get("a").params).isEmpty();
    assertThat(dict.get("b").type).isEqualTo(StructuredItem.BOOLEAN);
    assertThat(dict.get("b").integer).isEqualTo(1);
    assertThat(dict.get("b").param("x").integer).isEqualTo(1);
    assertThat(dict.get("b").param("y")).isSameAs(StructuredItem.TRUE);
    assertThat(dict.get("c").integer).isZero();
    assertThat(dict.get("*d").text).isEqualTo("tok");
    assertThat(dict.get("e").inner).hasSize(2);
    assertThat(dict.get("e").param("q").integer).isEqualTo(3);
    assertThat(StructuredFields.parseDictionary("a;X")).as("a bad parameter of a member without value").isNull();
    assertThat(StructuredFields.parseDictionary("a=\"x")).isNull();
    assertThat(StructuredFields.parseDictionary("")).isEmpty();
    assertThat(StructuredFields.parseDictionary("a=1,\tb=2")).containsOnlyKeys("a", "b");
  }

  @Test
  void aRepeatedDictionaryKeyKeepsTheLastValueInTheFirstPlace() {
    Map<String, StructuredItem> dict = StructuredFields.parseDictionary("a=1, b=2, a=3");
    assertThat(dict.get("a").integer).isEqualTo(3);
    assertThat(dict.keySet()).containsExactly("a", "b");
  }

  @Test
  void whatIsParsedCannotBeChanged() {
    List<StructuredItem> list = StructuredFields.parseList("1;a=2, (3)");
    Map<String, StructuredItem> dict = StructuredFields.parseDictionary("a=1");
    assertThat(list).isUnmodifiable();
    assertThat(list.get(0).params).isUnmodifiable();
    assertThat(list.get(1).inner).isUnmodifiable();
    assertThat(dict).isUnmodifiable();
  }

  @Test
  void combineKeepsEveryLineInOrder() {
    assertThat(StructuredFields.combine(List.of("a", "b", "c"))).isEqualTo("a, b, c");
    assertThat(StructuredFields.parseList(StructuredFields.combine(List.of("1", "2;x, 3"))))
        .extracting(i -> i.integer).containsExactly(1L, 2L, 3L);
  }
}
