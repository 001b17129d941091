package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.okretry.internal.Quota.Form;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Quota} as a value: the constructor's checks (every number already bounded, so a consumer
 * needs none of its own), the accessors' "0 when absent", the reset on the caller's monotonic
 * clock, and equality over every field.
 */
@Tag("unit")
class QuotaTest {
  static final long S = 1_000_000_000L;

  static Quota quota(
      long remaining, boolean hasLimit, long limit, boolean hasReset, long resetAfterNanos) {
    return new Quota(
        Form.IETF_LIST,
        "default",
        null,
        remaining,
        hasLimit,
        limit,
        60 * S,
        5 * S,
        hasReset,
        resetAfterNanos);
  }

  @Test
  void keepsWhatItWasGiven() {
    Quota q = new Quota(Form.X_RATELIMIT, "core", "cGs=", 3, true, 10, 60 * S, 5 * S, true, 2 * S);
    assertThat(q.form()).isEqualTo(Form.X_RATELIMIT);
    assertThat(q.policy()).isEqualTo("core");
    assertThat(q.partitionKey()).isEqualTo("cGs=");
    assertThat(q.remaining()).isEqualTo(3);
    assertThat(q.hasLimit()).isTrue();
    assertThat(q.limit()).isEqualTo(10);
    assertThat(q.windowNanos()).isEqualTo(60 * S);
    assertThat(q.receivedAtNanos()).isEqualTo(5 * S);
    assertThat(q.hasReset()).isTrue();
    assertThat(q.resetAfterNanos()).isEqualTo(2 * S);
    assertThat(q.resetAtNanos()).isEqualTo(7 * S);
  }

  @Test
  void anAbsentLimitOrResetReadsAsZero() {
    Quota q = quota(3, false, 99, false, 7 * S);
    assertThat(q.limit()).isZero();
    assertThat(q.resetAfterNanos()).isZero();
    assertThat(q).isEqualTo(quota(3, false, 0, false, 0));
  }

  @Test
  void theResetIsOnTheMonotonicClockEvenAcrossItsWrap() {
    Quota q =
        new Quota(Form.IETF_LIST, null, null, 0, false, 0, 0, Long.MAX_VALUE - S, true, 3 * S);
    assertThat(q.resetAtNanos() - q.receivedAtNanos()).isEqualTo(3 * S);
  }

  @Test
  void acceptsTheEdgesOfItsBounds() {
    assertThat(quota(10, true, 10, true, 0).remaining())
        .as("remaining = limit, a reset now")
        .isEqualTo(10);
    assertThat(quota(0, true, 0, false, 0).limit()).as("a limit of 0").isZero();
    assertThat(quota(0, false, 0, false, -1).hasReset())
        .as("no reset: its delay is not checked")
        .isFalse();
  }

  @Test
  void rejectsWhatNoParserMayProduce() {
    assertThatThrownBy(() -> new Quota(null, null, null, 0, false, 0, 0, 0, false, 0))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("form");
    assertThatThrownBy(() -> quota(-1, false, 0, false, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    assertThatThrownBy(() -> quota(11, true, 10, false, 0))
        .as("remaining above the limit")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("11");
    assertThatThrownBy(() -> quota(0, true, -1, false, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    assertThatThrownBy(() -> new Quota(Form.IETF_LIST, null, null, 0, false, 0, -1, 0, false, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("windowNanos");
    assertThatThrownBy(() -> quota(0, false, 0, true, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resetAfterNanos");
  }

  @Test
  void equalsComparesEveryField() {
    Quota q = new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 10, 60 * S, 5 * S, true, 2 * S);
    Quota same =
        new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 10, 60 * S, 5 * S, true, 2 * S);
    assertThat(q).isEqualTo(q).isEqualTo(same).hasSameHashCodeAs(same);
    assertThat(q).isNotEqualTo(null).isNotEqualTo("Quota");
    assertThat(q)
        .isNotEqualTo(
            new Quota(
                Form.DRAFT_FIELDS, "default", "cGs=", 3, true, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "other", "cGs=", 3, true, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, null, "cGs=", 3, true, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "YQ==", 3, true, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", null, 3, true, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 4, true, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 3, false, 10, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 11, 60 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 10, 61 * S, 5 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 10, 60 * S, 6 * S, true, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 10, 60 * S, 5 * S, false, 2 * S))
        .isNotEqualTo(
            new Quota(Form.IETF_LIST, "default", "cGs=", 3, true, 10, 60 * S, 5 * S, true, 3 * S));
    Quota unnamed = new Quota(Form.DRAFT_FIELDS, null, null, 3, false, 0, 0, 0, false, 0);
    assertThat(unnamed)
        .isEqualTo(new Quota(Form.DRAFT_FIELDS, null, null, 3, false, 0, 0, 0, false, 0));
  }
}
