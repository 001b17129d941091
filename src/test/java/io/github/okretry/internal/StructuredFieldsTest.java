package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.SeededProperties;
import io.github.okretry.internal.StructuredFields.Item;
import java.util.List;
import java.util.stream.Stream;
import okhttp3.Headers;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StructuredFields}: RFC 9651 §4.2 List and Dictionary parsing of what rate-limit fields
 * use, cases after the httpwg structured-field-tests suite (integers, strings, tokens, byte
 * sequences, parameters, whitespace); every invalid input is null, never an exception, and so are
 * the types no rate-limit field uses (Decimal, Boolean values, Date, Display String, inner lists);
 * the bound on a field's length, and the work a hostile field can cost.
 */
@Tag("unit")
class StructuredFieldsTest {

  @ParameterizedTest(name = "valid list: {0}")
  @ValueSource(
      strings = {
        "",
        "1",
        "-1",
        "0",
        "999999999999999",
        "-999999999999999",
        "\"\"",
        "\"a \\\"q\\\" \\\\ b\"",
        "foo",
        "*foo",
        "a:b/c",
        "Foo123!#$%&'*+-.^_`|~",
        ":YWJj:",
        ":YWI=:",
        ":YWI:",
        "::",
        "1;a",
        "1;a=1;b=\"x\";c;*d=tok",
        "1;a=1;a=2",
        "1; a=1",
        "1,2",
        "1 , 2",
        "1\t,\t2",
        "  1, 2  ",
        "\"default\";r=50;t=30",
        "\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:"
      })
  void validLists(String value) {
    assertThat(StructuredFields.parse(value, false)).as(value).isNotNull();
  }

  @ParameterizedTest(name = "invalid list: {0}")
  @ValueSource(
      strings = {
        "1,",
        ",1",
        "1,,2",
        "1 2",
        "1000000000000000",
        "-",
        "--1",
        "1.",
        "1.1234",
        "1234567890123.1",
        "12345678901234.1",
        "\"a",
        "\"\\a\"",
        "\"é\"",
        "\"\u0001\"",
        ":a*b:",
        ":YWJj",
        ":Y===:",
        ":Y=WJ:",
        ":Y:",
        "?2",
        "?",
        "@1.5",
        "@",
        "%\"f%C3%BC\"",
        "%\"%c3\"",
        "%\"%zz\"",
        "%a",
        "1;A=1",
        "1;=1",
        "1;a=",
        "1 ;a=1",
        "(1 2",
        "(1,2)",
        "(1 2)x",
        "é",
        "\t1",
        "1\u0000",
        "{1}",
        "1;a=(1)",
        // valid RFC 9651 that no rate-limit field uses: Decimal, Boolean, Date, Display String,
        // inner list
        "1.5",
        "-0.1",
        "\"d\";r=1;c=1.5",
        "?1",
        "?0",
        "1;a=?1",
        "@1659578233",
        "%\"\"",
        "%\"f%c3%bc\"",
        "(1 2)",
        "()"
      })
  void invalidLists(String value) {
    assertThat(StructuredFields.parse(value, false)).as(value).isNull();
  }

  @Test
  void valuesAndParameters() {
    List<Item> list = StructuredFields.parse("\"d\";r=5;t=-2;pk=:YWJj:, tok;x;r=1;r=2, 7", false);
    assertThat(list).hasSize(3);
    assertThat(list.get(0).type).isEqualTo(Item.Type.STRING);
    assertThat(list.get(0).key).isNull();
    assertThat(list.get(0).text).isEqualTo("d");
    assertThat(list.get(0).param("r").integer).isEqualTo(5);
    assertThat(list.get(0).param("t").integer).isEqualTo(-2);
    assertThat(list.get(0).param("pk").type).isEqualTo(Item.Type.BYTES);
    assertThat(list.get(0).param("pk").text).isEqualTo("YWJj");
    assertThat(list.get(1).type).isEqualTo(Item.Type.TOKEN);
    assertThat(list.get(1).param("x").type).isEqualTo(Item.Type.BOOLEAN);
    assertThat(list.get(1).param("r").integer).as("the last of a repeated key wins").isEqualTo(2);
    assertThat(list.get(2).integer).isEqualTo(7);
  }

  @ParameterizedTest(name = "dictionary {0} -> {1}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          limit=10, remaining=3, reset=5 ¦ 3
          a, b;x=1, c=tok                ¦ 3
          a=1, a=2                       ¦ 2
          """)
  void validDictionaries(String value, int members) {
    assertThat(StructuredFields.parse(value, true)).hasSize(members);
    assertThat(StructuredFields.find(StructuredFields.parse("a=1, a=2", true), "a").integer)
        .isEqualTo(2);
  }

  @ParameterizedTest(name = "invalid dictionary: {0}")
  @ValueSource(
      strings = {
        "A=1", "a=1,", "a=", "\"a\"=1", "a=1 b=2", "1=a", "a==1", "a=1.5", "a=?1", "a=(1)"
      })
  void invalidDictionaries(String value) {
    assertThat(StructuredFields.parse(value, true)).isNull();
  }

  @Test
  void aFieldIsItsLinesJoinedWithACommaAndNoneIsNull() {
    assertThat(StructuredFields.field(QuotaHeadersTest.headers("Other: 1"), "RateLimit")).isNull();
    assertThat(StructuredFields.field(QuotaHeadersTest.headers("ratelimit: a"), "RateLimit"))
        .isEqualTo("a");
    assertThat(
            StructuredFields.field(
                QuotaHeadersTest.headers("RateLimit: a | X: y | RATELIMIT: b;x=1 | RateLimit: c"),
                "RateLimit"))
        .isEqualTo("a, b;x=1, c");
    assertThat(StructuredFields.parse(null, false)).isNull();
    assertThat(StructuredFields.parse(null, true)).isNull();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          one line of exactly the bound                ¦ 1 ¦ 0 ¦ true
          one line a character over                    ¦ 1 ¦ 1 ¦ false
          two lines whose join is exactly the bound    ¦ 2 ¦ 0 ¦ true
          two lines whose join is a character over     ¦ 2 ¦ 1 ¦ false
          """)
  void aFieldLongerThanTheBoundIsNotRead(String name, int lines, int over, boolean read) {
    int chars = StructuredFields.MAX_FIELD_CHARS + over - 2 * (lines - 1); // ", " between lines
    Headers.Builder b = new Headers.Builder();
    for (int i = 0; i < lines; i++) {
      b.add("RateLimit", "a".repeat(chars / lines + (i < chars % lines ? 1 : 0)));
    }
    String field = StructuredFields.field(b.build(), "RateLimit");
    if (read) assertThat(field).hasSize(StructuredFields.MAX_FIELD_CHARS);
    else assertThat(field).isNull();
  }

  /**
   * The bound is checked before anything is copied: a field of many lines, or of one huge line, is
   * rejected having allocated almost nothing (the copies of the old parser were as long as the
   * field, once per Display String: gigabytes for a field of 100 KB).
   */
  @Test
  void rejectingAHugeFieldAllocatesAlmostNothing() {
    Headers.Builder b = new Headers.Builder().add("RateLimit", "%\"\", ".repeat(20_000));
    for (int i = 0; i < 10_000; i++) b.add("RateLimit", "a");
    Headers headers = b.build();
    StructuredFields.field(headers, "RateLimit"); // warm-up
    long bytes = Allocation.ofCurrentThread(() -> StructuredFields.field(headers, "RateLimit"));
    assertThat(bytes).isLessThan(1_024);
  }

  /** Below the bound the parser is linear: no member costs in proportion to the whole field. */
  @Test
  void aFieldAtTheBoundOfTheWorstMembersAllocatesInProportionToItsLength() {
    for (String member : new String[] {"\"\"", "a", ":YQ==:", "1;a;b;c;d", "\"\\\\\""}) {
      StringBuilder b = new StringBuilder(member);
      while (b.length() + 2 + member.length() <= StructuredFields.MAX_FIELD_CHARS) {
        b.append(", ").append(member);
      }
      String field = b.toString();
      assertThat(StructuredFields.parse(field, false)).as(member).isNotEmpty();
      long bytes = Allocation.ofCurrentThread(() -> StructuredFields.parse(field, false));
      assertThat(bytes).as(member).isLessThan(200L * StructuredFields.MAX_FIELD_CHARS);
    }
  }

  @TestFactory
  Stream<DynamicTest> garbageNeverThrows() {
    return SeededProperties.forSeeds(
        "sf-garbage",
        r -> {
          for (int i = 0; i < 50; i++) {
            String g = RetryAfterValues.garbage(r);
            StructuredFields.parse(g, false);
            StructuredFields.parse(g, true);
          }
        });
  }
}
