package io.github.okretry;

import static io.github.okretry.SeededProperties.logUniform;
import static io.github.okretry.SeededProperties.multiplier;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Settings and the one builder: the public {@link RetryPolicy} value and {@link
 * RetryPolicy.Builder}, which both drivers take. Defaults, validation when a value is set (a
 * message naming the setting and the value), the {@code (long, TimeUnit)} and {@code Duration}
 * forms, {@code build()} snapshots, and the drivers made from one policy. Per-request overrides:
 * {@link RetryOverridesTest}; keys: {@link IdempotencyKeyTest}.
 */
@Tag("unit")
@ParameterizedClass
@EnumSource(Driver.class)
class RetryPolicyTest extends ScriptedTest {

  RetryPolicyTest(Driver driver) {
    this.driver = driver;
  }

  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;

  @Nested
  class Defaults {
    @Test
    void defaultsInNanoseconds() {
      RetryPolicy p = RetryPolicy.builder().build();
      assertThat(p.settings.maxRetries).isEqualTo(3);
      assertThat(p.settings.baseDelayNanos).isEqualTo(200 * MS);
      assertThat(p.settings.maxDelayNanos).isEqualTo(10 * S);
      assertThat(p.settings.multiplier).isEqualTo(2.0);
      assertThat(p.settings.jitter).isEqualTo(Jitter.FULL);
      assertThat(p.settings.deadlineNanos).as("0 means none, as OkHttp's timeouts").isZero();
      assertThat(p.settings.maxRetryAfterNanos).isEqualTo(60 * S);
      assertThat(p.settings.retryAfterSpread).isEqualTo(0.5);
      assertThat(p.retryStatuses).containsExactly(429, 503);
      assertThat(p.settings.idempotencyKeyHeader).isEqualTo("Idempotency-Key");
      assertThat(p.settings.listener).isSameAs(RetryListener.NONE);
      assertThat(p.settings.originWideRetryAfter).isFalse();
      assertThat(p.settings.quotaPacing).isEqualTo(QuotaPacing.PUBLISHED);
      assertThat(p.budget.availableTokens()).as("its own budget, with the defaults").isEqualTo(100);
      assertThat(p.toString())
          .isEqualTo(
              "RetryPolicy{maxRetries=3, baseDelayNanos=200000000, maxDelayNanos=10000000000,"
                  + " multiplier=2.0, jitter=FULL, deadlineNanos=0, maxRetryAfterNanos=60000000000,"
                  + " retryAfterSpread=0.5, retryStatuses=[429, 503],"
                  + " idempotencyKeyHeader=Idempotency-Key, attemptHeader=null,"
                  + " obeyShouldRetryHeader=true, avoidFailedConnections=true, budget="
                  + p.budget
                  + ", originWideRetryAfter=false, quotaPacing=PUBLISHED,"
                  + " replayBuffer=1048576/16777216}");
      assertThat(p.replay.perCallBytes).as("gRPC's A6 defaults").isEqualTo(1 << 20);
      assertThat(p.replay.perClientBytes).isEqualTo(16 << 20);
    }

    @ParameterizedTest
    @EnumSource(Jitter.class)
    void everyJitterReachesTheBackoffAsItsInternalTwin(Jitter jitter) {
      assertThat(RetryPolicy.builder().jitter(jitter).build().rules.toString())
          .contains("jitter=" + jitter + "}");
    }

    @Test
    void defaultsDrawRealKeysAndRealJitter() throws Exception {
      script.status(200); // the default budget retries errors once it has seen the server work
      for (int i = 0; i < 10; i++) script.status(503);
      script.status(200);
      Call.Factory client = client(RetryPolicy.builder().timeSource(time).maxRetries(19));
      assertThat(code(client, post())).isEqualTo(200);
      assertThat(code(client, post())).isEqualTo(200);
      assertThat(script.requests().get(1).header("Idempotency-Key"))
          .matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
      assertThat(time.sleeps()).hasSize(10).anyMatch(d -> d.toNanos() > 0).doesNotHaveDuplicates();
    }
  }

  @Nested
  class Validation {
    static Stream<Arguments> badSettings() {
      return Stream.of(
          bad("negative retries", () -> RetryPolicy.builder().maxRetries(-1), "maxRetries", "-1"),
          bad(
              "zero base delay",
              () -> RetryPolicy.builder().baseDelay(Duration.ZERO),
              "baseDelay",
              "PT0S"),
          bad(
              "negative base delay",
              () -> RetryPolicy.builder().baseDelay(Duration.ofMillis(-5)),
              "baseDelay",
              "-0.005"),
          bad(
              "overlong max delay",
              () -> RetryPolicy.builder().maxDelay(Duration.ofDays(2)),
              "maxDelay",
              "PT48H"),
          bad(
              "negative deadline",
              () -> RetryPolicy.builder().deadline(Duration.ofSeconds(-2)),
              "deadline",
              "PT-2S"),
          bad(
              "negative max Retry-After",
              () -> RetryPolicy.builder().maxRetryAfter(Duration.ofSeconds(-1)),
              "maxRetryAfter",
              "-1"),
          bad("multiplier 1", () -> RetryPolicy.builder().multiplier(1.0), "multiplier", "1.0"),
          bad("multiplier 0.5", () -> RetryPolicy.builder().multiplier(0.5), "multiplier", "0.5"),
          bad(
              "multiplier NaN",
              () -> RetryPolicy.builder().multiplier(Double.NaN),
              "multiplier",
              "NaN"),
          bad(
              "multiplier infinite",
              () -> RetryPolicy.builder().multiplier(Double.POSITIVE_INFINITY),
              "multiplier",
              "Infinity"),
          bad(
              "spread above 1",
              () -> RetryPolicy.builder().retryAfterSpread(1.5),
              "retryAfterSpread",
              "1.5"),
          bad("status 42", () -> RetryPolicy.builder().retryOnStatus(42), "retryOnStatus", "42"),
          bad(
              "header with space",
              () -> RetryPolicy.builder().idempotencyKeyHeader("Idem Key"),
              "idempotencyKeyHeader",
              "Idem Key"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badSettings")
    void rejectsBadSettingsNamingThem(Executable setting, String field, String value) {
      assertRejectedNaming(setting, field, value);
    }

    @Test
    void timeUnitFormRejectsBadValuesNamingThem() {
      assertThatThrownBy(() -> RetryPolicy.builder().baseDelay(0, TimeUnit.SECONDS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("baseDelay must be positive: 0 SECONDS");
      assertThatThrownBy(() -> RetryPolicy.builder().maxDelay(-3, TimeUnit.MILLISECONDS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("maxDelay must be positive: -3 MILLISECONDS");
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(25, TimeUnit.HOURS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("deadline must be at most 24 hours: 25 HOURS");
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(-1, TimeUnit.SECONDS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("deadline must be 0 (none) or positive: -1 SECONDS");
      assertThatThrownBy(() -> RetryPolicy.builder().maxRetryAfter(Long.MAX_VALUE, TimeUnit.DAYS))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("maxRetryAfter");
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(Duration.ofHours(24).plusNanos(1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("deadline must be at most PT24H: PT24H0.000000001S");
    }

    @Test
    void nullsAreRejectedWithNpe() {
      assertThatThrownBy(() -> RetryPolicy.builder().baseDelay(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("baseDelay");
      assertThatThrownBy(() -> RetryPolicy.builder().jitter(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().listener(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().idempotencyKeyHeader(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().deadline(1, null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("deadline");
      assertThatThrownBy(() -> RetryPolicy.builder().retryOnResponse(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().retryOnException(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().retryBudget(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryPolicy.builder().quotaPacing(null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("quotaPacing");
      assertThatThrownBy(() -> RetryPolicy.builder().retryOnStatus((int[]) null))
          .isInstanceOf(NullPointerException.class);
    }

    @Test
    void theKeyHeaderMustBeAVisibleToken() {
      for (String bad : new String[] {"", "a b", "a:b", "a\u007fb", " ", "\"k"}) {
        assertThatThrownBy(() -> RetryPolicy.builder().idempotencyKeyHeader(bad))
            .as("[%s]", bad)
            .isInstanceOf(IllegalArgumentException.class);
      }
      assertThat(
              RetryPolicy.builder()
                  .idempotencyKeyHeader("!~")
                  .build()
                  .settings
                  .idempotencyKeyHeader)
          .isEqualTo("!~");
    }

    @Test
    void edgeValuesAreAccepted() {
      assertThat(RetryPolicy.builder().maxRetries(0).build().settings.maxRetries).isZero();
      assertThat(
              RetryPolicy.builder().baseDelay(Duration.ofHours(24)).build().settings.baseDelayNanos)
          .isEqualTo(24 * 3600 * S);
      RetryPolicy maxBelowBase =
          RetryPolicy.builder()
              .baseDelay(Duration.ofSeconds(5))
              .maxDelay(Duration.ofSeconds(1))
              .build();
      assertThat(maxBelowBase.settings.maxDelayNanos).isEqualTo(S);
    }
  }

  @Nested
  class TimeUnits {
    @Test
    void timeUnitAndDurationFormsSetTheSameNanoseconds() {
      RetryPolicy units =
          RetryPolicy.builder()
              .baseDelay(1500, TimeUnit.MICROSECONDS)
              .maxDelay(3, TimeUnit.SECONDS)
              .deadline(2, TimeUnit.MINUTES)
              .maxRetryAfter(90, TimeUnit.SECONDS)
              .build();
      RetryPolicy durations =
          RetryPolicy.builder()
              .baseDelay(Duration.ofNanos(1_500_000))
              .maxDelay(Duration.ofSeconds(3))
              .deadline(Duration.ofMinutes(2))
              .maxRetryAfter(Duration.ofSeconds(90))
              .build();
      for (RetryPolicy p : List.of(units, durations)) {
        assertThat(p.settings.baseDelayNanos).isEqualTo(1_500_000);
        assertThat(p.settings.maxDelayNanos).isEqualTo(3 * S);
        assertThat(p.settings.deadlineNanos).isEqualTo(120 * S);
        assertThat(p.settings.maxRetryAfterNanos).isEqualTo(90 * S);
      }
      // 0 means none, as OkHttp's timeouts: a deadline set before is removed.
      assertThat(
              RetryPolicy.builder()
                  .deadline(1, TimeUnit.HOURS)
                  .deadline(0, TimeUnit.SECONDS)
                  .build()
                  .settings
                  .deadlineNanos)
          .isZero();
      assertThat(
              RetryPolicy.builder()
                  .deadline(Duration.ofHours(1))
                  .deadline(Duration.ZERO)
                  .build()
                  .settings
                  .deadlineNanos)
          .isZero();
      assertThat(RetryPolicy.builder().deadline(24, TimeUnit.HOURS).build().settings.deadlineNanos)
          .as("24 hours is the longest allowed")
          .isEqualTo(TimeUnit.HOURS.toNanos(24));
    }
  }

  @Nested
  class Snapshots {
    @Test
    void policyBuildTakesASnapshotWithItsOwnBudgetUnlessGivenOne() {
      RetryPolicy.Builder builder = RetryPolicy.builder().maxRetries(1).retryOnStatus(502);
      RetryPolicy first = builder.build();
      builder.maxRetries(7).retryOnStatus(504);
      RetryPolicy second = builder.build();
      assertThat(first.settings.maxRetries).isEqualTo(1);
      assertThat(first.retryStatuses).containsExactly(429, 502, 503);
      assertThat(second.retryStatuses).containsExactly(429, 502, 503, 504);
      assertThat(second.budget)
          .as("each build() of a builder without a budget gets its own")
          .isNotSameAs(first.budget);
      RetryBudget shared = RetryBudget.unlimited();
      builder.retryBudget(shared);
      assertThat(builder.build().budget)
          .as("a budget given is shared")
          .isSameAs(builder.build().budget)
          .isSameAs(shared);
      assertThat(first.settings.deadlineNanos).isZero();
      assertThatThrownBy(() -> first.retryStatuses.add(500))
          .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void everySettingIsSnapshotted() {
      RetryListener listener = new RetryListener() {};
      RetryBudget budget = RetryBudget.unlimited();
      RetryPolicy.Builder b =
          RetryPolicy.builder()
              .maxRetries(5)
              .baseDelay(Duration.ofMillis(7))
              .maxDelay(Duration.ofSeconds(3))
              .multiplier(3)
              .jitter(Jitter.EQUAL)
              .deadline(Duration.ofSeconds(9))
              .maxRetryAfter(Duration.ofSeconds(4))
              .retryAfterSpread(0.25)
              .retryOnStatus(500)
              .idempotencyKeyHeader("X-K")
              .listener(listener)
              .retryBudget(budget)
              .originWideRetryAfter(true);
      RetryPolicy a = b.build();
      // Reusing the builder is safe: changing it afterwards leaves the policy it built alone.
      b.maxRetries(1)
          .deadline(Duration.ZERO)
          .retryOnStatus(502)
          .retryAfterSpread(1)
          .originWideRetryAfter(false);
      assertThat(a.settings.maxRetries).isEqualTo(5);
      assertThat(a.settings.baseDelayNanos).isEqualTo(7 * MS);
      assertThat(a.settings.maxDelayNanos).isEqualTo(3 * S);
      assertThat(a.settings.multiplier).isEqualTo(3);
      assertThat(a.settings.jitter).isEqualTo(Jitter.EQUAL);
      assertThat(a.settings.deadlineNanos).isEqualTo(9 * S);
      assertThat(a.settings.maxRetryAfterNanos).isEqualTo(4 * S);
      assertThat(a.settings.retryAfterSpread).isEqualTo(0.25);
      assertThat(a.retryStatuses).containsExactly(429, 500, 503);
      assertThat(a.settings.idempotencyKeyHeader).isEqualTo("X-K");
      assertThat(a.settings.listener).isSameAs(listener);
      assertThat(a.budget).isSameAs(budget);
      assertThat(a.settings.originWideRetryAfter).isTrue();
      assertThat(RetryPolicy.builder().quotaPacing(QuotaPacing.PROBE).build().settings.quotaPacing)
          .isEqualTo(QuotaPacing.PROBE);
      assertThat(b.build().settings.deadlineNanos).isZero();
      assertThat(b.build().retryStatuses).containsExactly(429, 500, 502, 503);
    }
  }

  @Nested
  class Drivers {
    @Test
    void interceptorAndFactoryShareTheirPolicy() {
      RetryPolicy policy = RetryPolicy.builder().maxRetries(5).build();
      RetryInterceptor retry = RetryInterceptor.create(policy);
      assertThat(retry.policy()).isSameAs(policy);
      assertThat(retry.toString()).contains("maxRetries=5");
      try (RetryingCallFactory calls = RetryingCallFactory.create(new OkHttpClient(), policy)) {
        assertThat(calls.policy).isSameAs(policy);
      }
      assertThatThrownBy(() -> RetryInterceptor.create(null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> RetryingCallFactory.create(new OkHttpClient(), null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("policy");
      assertThatThrownBy(() -> RetryingCallFactory.create(null, policy))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("client");
    }
  }

  /**
   * Seeded random values: every invalid one is rejected at once with an IAE naming the setting,
   * leaving the builder as it was; every valid one is accepted and reaches the policy.
   */
  @Nested
  class ValidationProperties {
    static final int CASES_PER_SEED = 50;
    static final long DAY_NANOS = Duration.ofHours(24).toNanos();

    @TestFactory
    Stream<DynamicTest> invalidConfigurationsAreRejected() {
      return SeededProperties.forSeeds(
          "invalid",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              RetryPolicy.Builder b = RetryPolicy.builder();
              Duration badDuration = badDuration(r);
              double badMultiplier = badMultiplier(r);
              double badSpread = badSpread(r);
              int badRetries = -1 - r.nextInt(Integer.MAX_VALUE);
              int badStatus =
                  r.nextBoolean()
                      ? r.nextInt(Integer.MIN_VALUE, 100)
                      : r.nextInt(1000, Integer.MAX_VALUE);
              switch (r.nextInt(8)) {
                case 0 -> assertRejected(() -> b.baseDelay(badDuration), "baseDelay", badDuration);
                case 1 -> assertRejected(() -> b.maxDelay(badDuration), "maxDelay", badDuration);
                case 2 -> {
                  if (!badDuration.isZero()) {
                    assertRejected(
                        () -> b.deadline(badDuration), "deadline", badDuration); // 0: none
                  }
                }
                case 3 ->
                    assertRejected(
                        () -> b.maxRetryAfter(badDuration), "maxRetryAfter", badDuration);
                case 4 ->
                    assertRejected(() -> b.multiplier(badMultiplier), "multiplier", badMultiplier);
                case 5 ->
                    assertRejected(
                        () -> b.retryAfterSpread(badSpread), "retryAfterSpread", badSpread);
                case 6 -> assertRejected(() -> b.maxRetries(badRetries), "maxRetries", badRetries);
                default ->
                    assertRejected(
                        () -> b.retryOnStatus(200, badStatus), "retryOnStatus", badStatus);
              }
              // The builder is still usable and its earlier state intact: a rejected value changed
              // nothing.
              RetryPolicy built = b.build();
              assertThat(built.settings.maxRetries).isEqualTo(3);
              assertThat(built.settings.baseDelayNanos).isEqualTo(200 * MS);
              assertThat(built.retryStatuses).containsExactly(429, 503);
            }
          });
    }

    @TestFactory
    Stream<DynamicTest> validConfigurationsAreAccepted() {
      return SeededProperties.forSeeds(
          "valid",
          r -> {
            for (int i = 0; i < CASES_PER_SEED; i++) {
              Duration base = Duration.ofNanos(logUniform(r, DAY_NANOS));
              Duration max = Duration.ofNanos(logUniform(r, DAY_NANOS));
              double m = multiplier(r);
              double spread = r.nextInt(3) == 0 ? (r.nextBoolean() ? 0.0 : 1.0) : r.nextDouble();
              RetryPolicy built =
                  RetryPolicy.builder()
                      .baseDelay(base)
                      .maxDelay(max)
                      .multiplier(m)
                      .retryAfterSpread(spread)
                      .maxRetries(r.nextInt(0, Integer.MAX_VALUE))
                      .deadline(Duration.ofNanos(logUniform(r, DAY_NANOS)))
                      .maxRetryAfter(Duration.ofNanos(logUniform(r, DAY_NANOS)))
                      .retryOnStatus(r.nextInt(100, 1000))
                      .build();
              assertThat(built.settings.baseDelayNanos).isEqualTo(base.toNanos());
              assertThat(built.settings.maxDelayNanos).isEqualTo(max.toNanos());
              assertThat(built.settings.multiplier).isEqualTo(m);
            }
          });
    }

    static Duration badDuration(SplittableRandom r) {
      return switch (r.nextInt(4)) {
        case 0 -> Duration.ZERO;
        case 1 -> Duration.ofNanos(-1 - r.nextLong(Long.MAX_VALUE));
        case 2 -> Duration.ofHours(24).plusNanos(1 + r.nextLong(Long.MAX_VALUE / 2));
        default -> Duration.ofSeconds(Long.MAX_VALUE - r.nextInt(1000));
      };
    }

    static double badMultiplier(SplittableRandom r) {
      return switch (r.nextInt(6)) {
        case 0 -> Double.NaN;
        case 1 -> Double.POSITIVE_INFINITY;
        case 2 -> Double.NEGATIVE_INFINITY;
        case 3 -> 1.0;
        case 4 -> -r.nextDouble() * 1e300;
        default -> r.nextDouble(); // [0, 1)
      };
    }

    static double badSpread(SplittableRandom r) {
      return switch (r.nextInt(5)) {
        case 0 -> Double.NaN;
        case 1 -> Double.POSITIVE_INFINITY;
        case 2 -> Math.nextUp(1.0) + r.nextDouble() * 10;
        case 3 -> Math.nextDown(0.0) - r.nextDouble();
        default -> Double.NEGATIVE_INFINITY;
      };
    }

    static void assertRejected(Runnable setter, String field, Object value) {
      assertThatThrownBy(setter::run)
          .as("%s(%s)", field, value)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(field);
    }
  }
}
