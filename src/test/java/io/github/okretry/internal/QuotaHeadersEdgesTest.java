package io.github.okretry.internal;

import static io.github.okretry.internal.QuotaHeadersTest.headers;
import static io.github.okretry.internal.QuotaHeadersTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import okhttp3.Headers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link QuotaHeaders} and {@link StructuredQuotas} at the edges docs/semantics.md ("Published
 * quotas") names: which family wins, the exact bounds (10 minutes, 366 days, 128 characters, 16
 * policies, 4 096 characters a field, epoch magnitudes), how a policy is found for a member, how
 * one key sent twice is merged, and which header names {@link QuotaHeaders#mayPublish} lets
 * through. Cases are written as in {@link QuotaHeadersTest} (the response's clock is
 * 2026-01-01T00:00:00Z).
 */
@Tag("unit")
class QuotaHeadersEdgesTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          IETF: over a -07 Dictionary and the separate fields ¦ RateLimit: "d";r=1 | RateLimit-Remaining: 5             ¦ Quota{IETF_LIST "d" remaining=1 reset unknown}
          -07 Dictionary over the separate fields  ¦ RateLimit: remaining=2 | RateLimit-Remaining: 5 | X-RateLimit-Remaining: 6 ¦ Quota{DRAFT_DICTIONARY remaining=2 reset unknown}
          RateLimit-* over X-RateLimit-*           ¦ RateLimit-Remaining: 5 | X-RateLimit-Remaining: 6                ¦ Quota{DRAFT_FIELDS remaining=5 reset unknown}
          X-RateLimit-* over X-Rate-Limit-*        ¦ X-RateLimit-Remaining: 6 | X-Rate-Limit-Remaining: 7             ¦ Quota{X_RATELIMIT remaining=6 reset unknown}
          a bad family gives way to the next       ¦ RateLimit-Remaining: -1 | X-RateLimit-Remaining: 6              ¦ Quota{X_RATELIMIT remaining=6 reset unknown}
          a bad X-RateLimit gives way too          ¦ X-RateLimit-Remaining: x | X-Rate-Limit-Remaining: 7 | X-Rate-Limit-Limit: 9 ¦ Quota{X_RATE_LIMIT remaining=7/9 reset unknown}
          a RateLimit-Policy alone yields nothing  ¦ RateLimit-Policy: "d";q=10;w=1                                  ¦ none
          """)
  void oneFamilyPerResponseInTheDocumentedOrder(String name, String headers, String expected) {
    assertThat(parse(headers)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          Reset-After is Discord's: X-RateLimit only ¦ RateLimit-Remaining: 1 | RateLimit-Reset: 3 | X-RateLimit-Reset-After: 9 ¦ Quota{DRAFT_FIELDS remaining=1 reset in 3000ms}
          Reset-After exactly 10 minutes             ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 600            ¦ Quota{X_RATELIMIT remaining=0 reset in 600000ms}
          Reset-After 601 s                          ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 601            ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          Reset-After 15 digits, no overflow         ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 999999999999999 ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          Reset-After decimal                        ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 2.25           ¦ Quota{X_RATELIMIT remaining=0 reset in 2250ms}
          Reset-After a trailing dot                 ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 2.             ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          Reset-After no whole part                  ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: .5             ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          Reset-After garbage in the fraction        ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 2.5s           ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          Reset-After a sign                         ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: +2             ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          delta reset with a fraction                ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1.5                  ¦ Quota{X_RATELIMIT remaining=0 reset in 1500ms}
          delta reset exactly 10 minutes             ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 600                  ¦ Quota{X_RATELIMIT remaining=0 reset in 600000ms}
          delta reset just past 10 minutes           ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 600.000000001        ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          epoch reset exactly 10 minutes ahead       ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767226200           ¦ Quota{X_RATELIMIT remaining=0 reset in 600000ms}
          epoch reset 10 minutes and 1 ms ahead      ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767226200.001       ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          epoch ms exactly 10 minutes ahead          ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767226200000        ¦ Quota{X_RATELIMIT remaining=0 reset in 600000ms}
          epoch ms 1 ms past 10 minutes              ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767226200001        ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          epoch ms 1 ms in the past                  ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767225599999        ¦ Quota{X_RATELIMIT remaining=0 reset unknown}
          epoch seconds with Date ahead of the clock ¦ X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1767225610 | Date: Thu, 01 Jan 2026 00:00:05 GMT ¦ Quota{X_RATELIMIT remaining=0 reset in 5000ms}
          """)
  void resetsAtTheirBounds(String name, String headers, String expected) {
    assertThat(parse(headers)).isEqualTo(expected);
  }

  @Test
  void fractionsPastTheNanosecondRoundUpAndExactOnesDoNot() {
    assertThat(resetAfterNanos("X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 0.123456789"))
        .isEqualTo(123_456_789L);
    assertThat(resetAfterNanos("X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 0.1234567891"))
        .isEqualTo(123_456_790L);
    assertThat(
            resetAfterNanos("X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 0.1234567890000"))
        .isEqualTo(123_456_789L);
    assertThat(
            resetAfterNanos("X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 1.000000000001"))
        .isEqualTo(1_000_000_001L);
    assertThat(resetAfterNanos("X-RateLimit-Remaining: 0 | X-RateLimit-Reset-After: 0.5"))
        .isEqualTo(500_000_000L);
    assertThat(resetAfterNanos("X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 0.000000001"))
        .isEqualTo(1L);
    assertThat(resetAfterNanos("RateLimit-Remaining: 0 | RateLimit-Reset: 3.0000000001"))
        .isEqualTo(3_000_000_001L);
  }

  /**
   * Below 10^9 a reset is delta seconds, from it epoch seconds; below 10^12 epoch seconds, from it
   * epoch ms.
   */
  @Test
  void theMagnitudeOfALegacyResetDecidesItsUnit() {
    // 5 s before 10^9 epoch seconds, and 10^12 epoch ms
    long clock2001 = 1_000_000_000_000L - 5_000L;
    WallClock wall = () -> clock2001;
    assertThat(
            quotas("X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1000000000", wall)
                .get(0)
                .resetAfterNanos())
        .as("10^9: epoch seconds, 5 s ahead")
        .isEqualTo(5_000_000_000L);
    assertThat(
            quotas("X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 999999999", wall)
                .get(0)
                .hasReset())
        .as("10^9 - 1: delta seconds, 31 years")
        .isFalse();
    assertThat(
            quotas("X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 1000000000000", wall)
                .get(0)
                .resetAfterNanos())
        .as("10^12: epoch ms, 5 s ahead")
        .isEqualTo(5_000_000_000L);
    assertThat(
            quotas("X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 999999999999", wall)
                .get(0)
                .hasReset())
        .as("10^12 - 1: epoch seconds, far in the future")
        .isFalse();
    assertThat(
            quotas("X-RateLimit-Remaining: 0 | X-RateLimit-Reset: 999999999.5", wall)
                .get(0)
                .hasReset())
        .isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          limit with a parameter                   ¦ X-RateLimit-Limit: 10;w=1 | X-RateLimit-Remaining: 3        ¦ Quota{X_RATELIMIT remaining=3/10 reset unknown}
          limit: parameter before a second member  ¦ X-RateLimit-Limit: 10;w=1, 5 | X-RateLimit-Remaining: 3     ¦ Quota{X_RATELIMIT remaining=3/10 reset unknown}
          limit: the first member, spaces around   ¦ X-RateLimit-Limit: 7 , 10;w=1 | X-RateLimit-Remaining: 3    ¦ Quota{X_RATELIMIT remaining=3/7 reset unknown}
          limit 0 takes remaining to 0             ¦ X-RateLimit-Limit: 0 | X-RateLimit-Remaining: 3              ¦ Quota{X_RATELIMIT remaining=0/0 reset unknown}
          limit fractional is no limit             ¦ X-RateLimit-Limit: 2.5 | X-RateLimit-Remaining: 3            ¦ Quota{X_RATELIMIT remaining=3 reset unknown}
          remaining of 15 digits                   ¦ X-RateLimit-Remaining: 999999999999999                       ¦ Quota{X_RATELIMIT remaining=999999999999999 reset unknown}
          remaining with a sign                    ¦ X-RateLimit-Remaining: +3                                    ¦ none
          remaining empty                          ¦ X-RateLimit-Remaining: ,                                     ¦ none
          Discord's Bucket over GitHub's Resource  ¦ X-RateLimit-Remaining: 3 | X-RateLimit-Resource: core | X-RateLimit-Bucket: b1 ¦ Quota{X_RATELIMIT "b1" remaining=3 reset unknown}
          X-Rate-Limit reads no bucket             ¦ X-Rate-Limit-Remaining: 3 | X-RateLimit-Bucket: b1           ¦ Quota{X_RATE_LIMIT remaining=3 reset unknown}
          RateLimit-* reads no bucket              ¦ RateLimit-Remaining: 3 | X-RateLimit-Resource: core          ¦ Quota{DRAFT_FIELDS remaining=3 reset unknown}
          a bucket of visible ASCII edges          ¦ X-RateLimit-Remaining: 3 | X-RateLimit-Bucket: !a~           ¦ Quota{X_RATELIMIT "!a~" remaining=3 reset unknown}
          a bucket with DEL                        ¦ X-RateLimit-Remaining: 3 | X-RateLimit-Bucket: a\u007f      ¦ none
          """)
  void separateFields(String name, String headers, String expected) {
    assertThat(parse(headers.replace("\\u007f", "\u007f"))).isEqualTo(expected);
  }

  @Test
  void aBucketOf128CharactersIsKeptAndOneOf129DropsTheFamily() {
    String b128 = "b".repeat(QuotaHeaders.MAX_KEY_CHARS);
    assertThat(
            quotas("X-RateLimit-Remaining: 3 | X-RateLimit-Bucket: " + b128, QuotaHeadersTest.CLOCK)
                .get(0)
                .policy())
        .isEqualTo(b128);
    assertThat(
            quotas(
                "X-RateLimit-Remaining: 3 | X-RateLimit-Bucket: " + b128 + "b",
                QuotaHeadersTest.CLOCK))
        .isNull();
    assertThat(quotas("X-RateLimit-Remaining: 3 | X-RateLimit-Bucket:  ", QuotaHeadersTest.CLOCK))
        .as("empty")
        .isNull();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          Age 00 is fresh                   ¦ Age: 00      ¦ 1
          Age 01 is one second old          ¦ Age: 01      ¦ 0
          Age 10                            ¦ Age: 10      ¦ 0
          Age 9                             ¦ Age: 9       ¦ 0
          Age negative is garbage           ¦ Age: -1      ¦ 1
          Age a decimal is garbage          ¦ Age: 1.5     ¦ 1
          Age with a letter after digits    ¦ Age: 5s      ¦ 1
          Age empty says nothing            ¦ Age:         ¦ 1
          """)
  void onlyAnAgeOfDigitsAboveZeroMeansCached(String name, String age, int quotas) {
    assertThat(parse("RateLimit: \"d\";r=0;t=1 | " + age))
        .isEqualTo(quotas == 0 ? "none" : "Quota{IETF_LIST \"d\" remaining=0 reset in 1000ms}");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          same key: the later reset, fewer remaining   ¦ RateLimit-Policy: "a";q=10;w=5 | RateLimit: "a";r=5;t=3, "a";r=7;t=2 ¦ Quota{IETF_LIST "a" remaining=5/10 w=5s reset in 3000ms}
          same key: a reset sent once is kept          ¦ RateLimit: "a";r=5;t=3, "a";r=4                                     ¦ Quota{IETF_LIST "a" remaining=4 reset in 3000ms}
          same key: a reset sent second is kept        ¦ RateLimit: "a";r=5, "a";r=4;t=2                                     ¦ Quota{IETF_LIST "a" remaining=4 reset in 2000ms}
          same name, other pk: two quotas              ¦ RateLimit: "a";r=5;pk=:YWJj:, "a";r=4                               ¦ Quota{IETF_LIST "a" pk=:YWJj: remaining=5 reset unknown} + Quota{IETF_LIST "a" remaining=4 reset unknown}
          same pk, other name: two quotas              ¦ RateLimit: "a";r=5;pk=:YWJj:, "b";r=4;pk=:YWJj:                     ¦ Quota{IETF_LIST "a" pk=:YWJj: remaining=5 reset unknown} + Quota{IETF_LIST "b" pk=:YWJj: remaining=4 reset unknown}
          the first keyless policy of a name           ¦ RateLimit-Policy: "u";q=7, "u";q=8 | RateLimit: "u";r=6             ¦ Quota{IETF_LIST "u" remaining=6/7 reset unknown}
          a pk policy after a keyless one              ¦ RateLimit-Policy: "u";q=7, "u";q=9;pk=:YWJj:, "u";q=8;pk=:YWJj: | RateLimit: "u";r=6;pk=:YWJj: ¦ Quota{IETF_LIST "u" pk=:YWJj: remaining=6/9 reset unknown}
          a keyless member takes no pk policy          ¦ RateLimit-Policy: "u";q=50;pk=:YWJj: | RateLimit: "u";r=6          ¦ Quota{IETF_LIST "u" remaining=6 reset unknown}
          a Token and a String of one name match       ¦ RateLimit-Policy: u;q=7 | RateLimit: "u";r=6                        ¦ Quota{IETF_LIST "u" remaining=6/7 reset unknown}
          qu of another unit drops only its members    ¦ RateLimit-Policy: "b";q=9;qu="content-bytes", "r";q=9 | RateLimit: "b";r=1, "r";r=2 ¦ Quota{IETF_LIST "r" remaining=2/9 reset unknown}
          w of exactly 366 days kept                   ¦ RateLimit-Policy: "d";q=9;w=31622400 | RateLimit: "d";r=5           ¦ Quota{IETF_LIST "d" remaining=5/9 w=31622400s reset unknown}
          w of 366 days and a second dropped           ¦ RateLimit-Policy: "d";q=9;w=31622401 | RateLimit: "d";r=5           ¦ Quota{IETF_LIST "d" remaining=5/9 reset unknown}
          w of 1 second                                ¦ RateLimit-Policy: "d";q=9;w=1 | RateLimit: "d";r=5                  ¦ Quota{IETF_LIST "d" remaining=5/9 w=1s reset unknown}
          q of 0                                       ¦ RateLimit-Policy: "d";q=0 | RateLimit: "d";r=5                      ¦ Quota{IETF_LIST "d" remaining=0/0 reset unknown}
          r of 0 under q                               ¦ RateLimit-Policy: "d";q=5 | RateLimit: "d";r=0                      ¦ Quota{IETF_LIST "d" remaining=0/5 reset unknown}
          Policy: q missing, ignored whole             ¦ RateLimit-Policy: "d";w=9 | RateLimit: "d";r=5                      ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          Policy: q a Decimal, ignored whole           ¦ RateLimit-Policy: "d";q=1.5 | RateLimit: "d";r=5                    ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          Policy: w a Decimal, ignored whole           ¦ RateLimit-Policy: "d";q=9;w=1.5 | RateLimit: "d";r=5                ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          Policy: w negative, ignored whole            ¦ RateLimit-Policy: "d";q=9;w=-1 | RateLimit: "d";r=5                 ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          Policy: pk a String, ignored whole           ¦ RateLimit-Policy: "d";q=9;pk="x" | RateLimit: "d";r=5               ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          Policy: pk a String of the member's base64   ¦ RateLimit-Policy: "d";q=9;pk="YWJj" | RateLimit: "d";r=5;pk=:YWJj:  ¦ Quota{IETF_LIST "d" pk=:YWJj: remaining=5 reset unknown}
          Policy: name an Integer, ignored whole       ¦ RateLimit-Policy: "d";q=9, 5;q=9 | RateLimit: "d";r=5               ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          Policy: a syntax error, ignored whole        ¦ RateLimit-Policy: "d";q=9, | RateLimit: "d";r=5                     ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          IETF: t a String                             ¦ RateLimit: "d";r=5;t="1"                                            ¦ none
          IETF: an empty field                         ¦ RateLimit: ,                                                        ¦ none
          """)
  void ietfPoliciesAndMerging(String name, String headers, String expected) {
    assertThat(parse(headers)).isEqualTo(expected);
  }

  @Test
  void namesAndKeysOf128CharactersAreKeptAndLongerOnesDropTheirQuota() {
    String n128 = "n".repeat(QuotaHeaders.MAX_KEY_CHARS);
    String pk128 = "A".repeat(QuotaHeaders.MAX_KEY_CHARS);
    String pk132 = "A".repeat(QuotaHeaders.MAX_KEY_CHARS + 4);
    List<Quota> quotas =
        quotas(
            "RateLimit: \""
                + n128
                + "\";r=1, \""
                + n128
                + "x\";r=2, \"k\";r=3;pk=:"
                + pk128
                + ":, \"l\";r=4;pk=:"
                + pk132
                + ":",
            QuotaHeadersTest.CLOCK);
    assertThat(quotas).extracting(Quota::remaining).containsExactly(1L, 3L);
    assertThat(quotas.get(0).policy()).isEqualTo(n128);
    assertThat(quotas.get(1).partitionKey()).isEqualTo(pk128);
  }

  @Test
  void pastSixteenPoliciesAKeyAlreadyKeptIsStillMerged() {
    StringBuilder b = new StringBuilder("RateLimit: ");
    for (int i = 0; i < 20; i++) {
      b.append("\"p").append(i).append("\";r=").append(10 + i).append(", ");
    }
    b.append("\"p0\";r=1;t=4");
    List<Quota> quotas = quotas(b.toString(), QuotaHeadersTest.CLOCK);
    assertThat(quotas).hasSize(QuotaHeaders.MAX_QUOTAS);
    assertThat(quotas.get(0).toString())
        .isEqualTo("Quota{IETF_LIST \"p0\" remaining=1 reset in 4000ms}");
    assertThat(quotas).extracting(Quota::policy).doesNotContain("p16", "p19");
  }

  /**
   * A structured field of exactly {@link StructuredFields#MAX_FIELD_CHARS} is read; one more
   * character and it is not.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          RateLimit at the bound                   ¦ RateLimit        ¦ 0 ¦ Quota{IETF_LIST "d" remaining=5/9 reset unknown}
          RateLimit over it: the next family       ¦ RateLimit        ¦ 1 ¦ Quota{X_RATELIMIT remaining=7 reset unknown}
          RateLimit-Policy at the bound            ¦ RateLimit-Policy ¦ 0 ¦ Quota{IETF_LIST "d" remaining=5/9 reset unknown}
          RateLimit-Policy over it: RateLimit alone ¦ RateLimit-Policy ¦ 1 ¦ Quota{IETF_LIST "d" remaining=5 reset unknown}
          -07 Dictionary at the bound              ¦ Dictionary       ¦ 0 ¦ Quota{DRAFT_DICTIONARY remaining=5 reset unknown}
          -07 Dictionary over it                   ¦ Dictionary       ¦ 1 ¦ Quota{X_RATELIMIT remaining=7 reset unknown}
          """)
  void aStructuredFieldIsReadUpToTheBound(String name, String padded, int over, String expected) {
    String limit = "\"d\";r=5";
    String policy = "\"d\";q=9";
    String dictionary = "remaining=5";
    // Padding: the field's own members first, then comments ("c=…") up to the length wanted.
    String field =
        switch (padded) {
          case "RateLimit" -> limit = pad(limit, ";c=", over);
          case "RateLimit-Policy" -> policy = pad(policy, ";c=", over);
          default -> dictionary = pad(dictionary, ", c=", over);
        };
    assertThat(field).hasSize(StructuredFields.MAX_FIELD_CHARS + over);
    Headers h =
        new Headers.Builder()
            .add("X-RateLimit-Remaining", "7")
            .add("RateLimit", padded.equals("Dictionary") ? dictionary : limit)
            .add("RateLimit-Policy", policy)
            .build();
    assertThat(
            QuotaHeaders.parse(h, 200, false, QuotaHeadersTest.NOW_NANOS, QuotaHeadersTest.CLOCK))
        .extracting(Quota::toString)
        .containsExactly(expected);
  }

  // value + separator + a Token of 't's, MAX_FIELD_CHARS + over characters in all.
  static String pad(String value, String separator, int over) {
    return value
        + separator
        + "t".repeat(StructuredFields.MAX_FIELD_CHARS + over - value.length() - separator.length());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          limit 0                           ¦ RateLimit: limit=0, remaining=5           ¦ Quota{DRAFT_DICTIONARY remaining=0/0 reset unknown}
          limit negative                    ¦ RateLimit: limit=-1, remaining=5          ¦ none
          reset negative                    ¦ RateLimit: remaining=5, reset=-1          ¦ none
          reset a Decimal                   ¦ RateLimit: remaining=5, reset=1.5         ¦ none
          reset 0                           ¦ RateLimit: remaining=5, reset=0           ¦ Quota{DRAFT_DICTIONARY remaining=5 reset in 0ms}
          reset exactly 10 minutes          ¦ RateLimit: remaining=5, reset=600         ¦ Quota{DRAFT_DICTIONARY remaining=5 reset in 600000ms}
          remaining missing                 ¦ RateLimit: limit=5, reset=1               ¦ none
          remaining a Token                 ¦ RateLimit: remaining=five                 ¦ none
          remaining a Boolean               ¦ RateLimit: remaining                      ¦ none
          remaining 0                       ¦ RateLimit: remaining=0                    ¦ Quota{DRAFT_DICTIONARY remaining=0 reset unknown}
          other members ignored             ¦ RateLimit: remaining=5, policy="x", w=9   ¦ Quota{DRAFT_DICTIONARY remaining=5 reset unknown}
          """)
  void draftDictionary(String name, String headers, String expected) {
    assertThat(parse(headers)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '¦',
      textBlock =
          """
          RateLimit                    ¦ true
          ratelimit-policy             ¦ true
          RATELIMIT-Remaining          ¦ true
          X-RateLimit-Remaining        ¦ true
          x-ratelimit-bucket           ¦ true
          X-Rate-Limit-Reset           ¦ true
          x-rate-limit-limit           ¦ true
          RateLimi                     ¦ false
          X-RateLimit                  ¦ false
          X-Rate-Limit                 ¦ false
          X-RateLimi-Remaining         ¦ false
          Retry-After                  ¦ false
          Content-Type                 ¦ false
          """)
  void mayPublishLooksForTheFamiliesNames(String name, boolean expected) {
    assertThat(QuotaHeaders.mayPublish(headers("Content-Length: 3 | " + name + ": 1 | Date: x")))
        .isEqualTo(expected);
    assertThat(QuotaHeaders.mayPublish(headers(name + ": 1"))).isEqualTo(expected);
  }

  @Test
  void mayPublishIsFalseWithoutHeaders() {
    assertThat(QuotaHeaders.mayPublish(headers(""))).isFalse();
  }

  static List<Quota> quotas(String spec, WallClock clock) {
    return QuotaHeaders.parse(headers(spec), 200, false, QuotaHeadersTest.NOW_NANOS, clock);
  }

  static long resetAfterNanos(String spec) {
    List<Quota> quotas = quotas(spec, QuotaHeadersTest.CLOCK);
    assertThat(quotas).as(spec).hasSize(1);
    assertThat(quotas.get(0).hasReset()).as(spec).isTrue();
    return quotas.get(0).resetAfterNanos();
  }
}
