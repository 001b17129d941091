package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.SeededProperties;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StructuredFields}: RFC 9651 §4.2 List and Dictionary parsing, cases after the httpwg
 * structured-field-tests suite (numbers, strings, tokens, byte sequences, booleans, dates, display
 * strings, parameters, inner lists, whitespace); every invalid input is null, never an exception.
 */
@Tag("unit")
class StructuredFieldsTest {

  @ParameterizedTest(name = "valid list: {0}")
  @ValueSource(strings = {
    "", "1", "-1", "0", "999999999999999", "-999999999999999", "1.5", "123456789012.123", "-0.1",
    "\"\"", "\"a \\\"q\\\" \\\\ b\"", "foo", "*foo", "a:b/c", "Foo123!#$%&'*+-.^_`|~", ":YWJj:", ":YWI=:", ":YWI:", "::",
    "?0", "?1", "@1659578233", "@-1", "%\"f%c3%bc\"", "%\"\"", "1;a", "1;a=1;b=\"x\";c=?0;*d=tok",
    "1;a=1;a=2", "1; a=1", "(1 2);p=1", "()", "( 1  2 )", "(1;a=2 x)", "1,2", "1 , 2", "1\t,\t2",
    "  1, 2  ", "\"default\";r=50;t=30", "\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:"})
  void validLists(String value) {
    assertThat(StructuredFields.parseList(value)).as(value).isNotNull();
  }

  @ParameterizedTest(name = "invalid list: {0}")
  @ValueSource(strings = {
    "1,", ",1", "1,,2", "1 2", "1000000000000000", "-", "--1", "1.", "1.1234", "1234567890123.1",
    "12345678901234.1", "\"a", "\"\\a\"", "\"é\"", "\"\u0001\"", ":a*b:", ":YWJj", ":Y===:", ":Y=WJ:", ":Y:",
    "?2", "?", "@1.5", "@", "%\"f%C3%BC\"", "%\"%c3\"", "%\"%zz\"", "%a", "1;A=1", "1;=1", "1;a=", "1 ;a=1",
    "(1 2", "(1,2)", "(1 2)x", "é", "\t1", "1\u0000", "{1}", "1;a=(1)"})
  void invalidLists(String value) {
    assertThat(StructuredFields.parseList(value)).as(value).isNull();
  }

  @Test
  void valuesAndParameters() {
    List<StructuredItem> list = StructuredFields.parseList("\"d\";r=5;t=-2;pk=:YWJj:, tok;x;r=1;r=2, (1 \"s\");q=1.5");
    assertThat(list).hasSize(3);
    assertThat(list.get(0).type).isEqualTo(StructuredItem.STRING);
    assertThat(list.get(0).text).isEqualTo("d");
    assertThat(list.get(0).param("r").integer).isEqualTo(5);
    assertThat(list.get(0).param("t").integer).isEqualTo(-2);
    assertThat(list.get(0).param("pk").type).isEqualTo(StructuredItem.BYTES);
    assertThat(list.get(0).param("pk").text).isEqualTo("YWJj");
    assertThat(list.get(1).type).isEqualTo(StructuredItem.TOKEN);
    assertThat(list.get(1).param("x").type).isEqualTo(StructuredItem.BOOLEAN);
    assertThat(list.get(1).param("r").integer).as("the last of a repeated key wins").isEqualTo(2);
    assertThat(list.get(2).type).isEqualTo(StructuredItem.INNER_LIST);
    assertThat(list.get(2).inner).hasSize(2);
    assertThat(list.get(2).param("q").type).isEqualTo(StructuredItem.DECIMAL);
  }

  @ParameterizedTest(name = "dictionary {0} -> {1}")
  @CsvSource(delimiter = '¦', textBlock = """
    limit=10, remaining=3, reset=5 ¦ 3
    a, b;x=1, c=(1 2)              ¦ 3
    a=1, a=2                       ¦ 1
    """)
  void validDictionaries(String value, int members) {
    assertThat(StructuredFields.parseDictionary(value)).hasSize(members);
    assertThat(StructuredFields.parseDictionary("a=1, a=2").get("a").integer).isEqualTo(2);
  }

  @ParameterizedTest(name = "invalid dictionary: {0}")
  @ValueSource(strings = {"A=1", "a=1,", "a=", "\"a\"=1", "a=1 b=2", "1=a", "a==1"})
  void invalidDictionaries(String value) {
    assertThat(StructuredFields.parseDictionary(value)).isNull();
  }

  @Test
  void combineJoinsFieldLinesWithACommaAndNoneIsNull() {
    assertThat(StructuredFields.combine(List.of())).isNull();
    assertThat(StructuredFields.combine(List.of("a"))).isEqualTo("a");
    assertThat(StructuredFields.combine(List.of("a", "b;x=1"))).isEqualTo("a, b;x=1");
    assertThat(StructuredFields.parseList(null)).isNull();
    assertThat(StructuredFields.parseDictionary(null)).isNull();
  }

  @TestFactory
  Stream<DynamicTest> garbageNeverThrows() {
    return SeededProperties.forSeeds("sf-garbage", r -> {
      for (int i = 0; i < 50; i++) {
        String g = RetryAfterValues.garbage(r);
        StructuredFields.parseList(g);
        StructuredFields.parseDictionary(g);
      }
    });
  }
}
