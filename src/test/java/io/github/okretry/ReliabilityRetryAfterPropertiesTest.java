package io.github.okretry;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.okretry.internal.RetryAfter;
import java.io.IOException;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import okhttp3.Headers;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Hostile {@code Retry-After} values, generated from seeds: {@link RetryAfter} never throws and
 * never returns a negative other than {@link RetryAfter#ABSENT}; numbers saturate exactly; all
 * three HTTP-date formats are read exactly; and the interceptor, fed such headers, never sleeps
 * longer than {@code maxRetryAfter} (or {@code maxDelay} for computed waits), never shorter than
 * a valid Retry-After, and never past the deadline.
 */
@ExtendWith(LeakCheck.class)
class ReliabilityRetryAfterPropertiesTest {

  /** Lowered by the pit profile, where every surviving mutant reruns the whole property. */
  static final int SEEDS = SeededProperties.SEEDS;
  static final int CASES_PER_SEED = 50;
  static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

  static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
  static final DateTimeFormatter RFC_850 =
      DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
  static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);
  /** Not an HTTP-date (those are GMT only) but sent by real servers: a zone offset or name. */
  static final DateTimeFormatter RFC_1123_ZONED =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss Z", Locale.US);

  static final Map<String, LongAdder> COUNTS = new ConcurrentSkipListMap<>();

  static void count(String what) {
    COUNTS.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  @AfterAll
  static void printCounts() {
    Diagnostics.println("Retry-After properties: " + COUNTS);
  }

  static Stream<DynamicTest> forSeeds(String name, Consumer<SplittableRandom> property) {
    return SeededProperties.forSeeds(name, property, () -> {});
  }

  // ---------------------------------------------------------------- generators

  private static final String ALPHABET =
      "0123456789 \t-+.,:;eE\"'()GMTUTCSunMonDecNov/\\\u0000\u007f\u00e9\u00a0\u3000\uff11\r\n";

  static String garbage(SplittableRandom r) {
    int n = r.nextInt(0, 40);
    StringBuilder s = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      int kind = r.nextInt(10);
      if (kind == 0) {
        s.appendCodePoint(r.nextInt(0x10000, 0x10FFFF)); // astral: a surrogate pair
      } else if (kind == 1) {
        s.append((char) r.nextInt(0, 0x10000)); // anything, lone surrogates included
      } else {
        s.append(ALPHABET.charAt(r.nextInt(ALPHABET.length())));
      }
    }
    return s.toString();
  }

  /** Digit strings near the interesting edges, as a decimal BigInteger. */
  static BigInteger bigNumber(SplittableRandom r) {
    BigInteger longMax = BigInteger.valueOf(Long.MAX_VALUE);
    BigInteger maxSeconds = BigInteger.valueOf(MAX_SECONDS);
    BigInteger k = BigInteger.valueOf(r.nextInt(0, 1000));
    return switch (r.nextInt(7)) {
      case 0 -> longMax.add(k);
      case 1 -> longMax.subtract(k);
      case 2 -> maxSeconds.add(k);
      case 3 -> maxSeconds.subtract(k).max(BigInteger.ZERO);
      case 4 -> BigInteger.TEN.pow(r.nextInt(0, 60));
      case 5 -> new BigInteger(r.nextInt(1, 400), new java.util.Random(r.nextLong())); // up to 400 bits
      default -> BigInteger.valueOf(r.nextLong(0, 100_000));
    };
  }

  static String spaces(SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> " ";
      case 1 -> "\t ";
      default -> "";
    };
  }

  /** An instant with whole seconds between 1900 and 9999 (or near {@code near}). */
  static Instant instant(SplittableRandom r, Instant near) {
    if (r.nextBoolean()) return near.plusSeconds(r.nextLong(-86_400 * 3, 86_400 * 3));
    long min = ZonedDateTime.of(1900, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toEpochSecond();
    long max = ZonedDateTime.of(9999, 12, 31, 23, 59, 59, 0, ZoneOffset.UTC).toEpochSecond();
    return Instant.ofEpochSecond(r.nextLong(min, max));
  }

  static Clock clock(SplittableRandom r) {
    // Years RFC 850's two-digit "yy" reads unambiguously (within 80 years back, 20 ahead of now).
    long from = ZonedDateTime.of(1960, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
    long to = ZonedDateTime.of(2040, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toInstant().toEpochMilli();
    return Clock.fixed(Instant.ofEpochMilli(r.nextLong(from, to)), ZoneOffset.UTC);
  }

  static Headers headers(String... namesAndValues) {
    Headers.Builder b = new Headers.Builder();
    for (int i = 0; i < namesAndValues.length; i += 2) b.addUnsafeNonAscii(namesAndValues[i], namesAndValues[i + 1]);
    return b.build();
  }

  /** A wait in ms as nanoseconds: 0 for the past, saturated at Long.MAX_VALUE (~292 years). */
  static long waitNanos(long deltaMillis) {
    BigInteger nanos = BigInteger.valueOf(Math.max(0, deltaMillis)).multiply(BigInteger.valueOf(1_000_000L));
    return nanos.min(BigInteger.valueOf(Long.MAX_VALUE)).longValueExact();
  }

  static void assertSane(long nanos, String what) {
    assertThat(nanos).as(what).satisfiesAnyOf(
        v -> assertThat(v).isEqualTo(RetryAfter.ABSENT), v -> assertThat(v).isNotNegative());
  }

  // ---------------------------------------------------------------- parser properties

  /** A value of one of the kinds above, plus what {@code parse} must return for it (or null). */
  static String anyValue(SplittableRandom r, Clock clock) {
    return switch (r.nextInt(6)) {
      case 0 -> garbage(r);
      case 1 -> String.valueOf(r.nextInt(0, 5));
      case 2 -> String.valueOf(r.nextLong(0, 3_600));
      case 3 -> bigNumber(r).toString();
      case 4 -> IMF_FIXDATE.format(clock.instant().plusSeconds(r.nextLong(-100, 3_600)));
      default -> ASCTIME.format(instant(r, clock.instant()));
    };
  }

  // ---------------------------------------------------------------- through the interceptor

  /**
   * Drives the real interceptor with FakeTime and a stub "server" interceptor behind it (no
   * sockets, so thousands of calls take a second): each attempt answers 503 with random
   * Retry-After fields, eventually 200. The recorded sleeps must respect every bound.
   */
  @TestFactory
  Stream<DynamicTest> interceptorNeverSleepsPastTheBounds() {
    return forSeeds(
        "interceptor",
        r -> {
          for (int i = 0; i < 20; i++) runOneCall(r);
        });
  }

  static void runOneCall(SplittableRandom r) {
    Clock clock = clock(r);
    FakeTime time = new FakeTime();
    Duration maxRetryAfter = Duration.ofMillis(r.nextLong(1, 10_000));
    Duration maxDelay = Duration.ofMillis(r.nextLong(1, 5_000));
    Duration deadline = r.nextInt(4) == 0 ? null : Duration.ofMillis(r.nextLong(1, 20_000));
    double spread = r.nextInt(3) == 0 ? 0 : r.nextDouble();
    int maxRetries = r.nextInt(0, 6);
    List<Response> sent = new ArrayList<>();
    List<Duration> scheduled = new ArrayList<>();
    SplittableRandom serverRandom = r.split();
    RetryInterceptor.Builder b =
        RetryInterceptor.builder()
            .timeSource(time)
            .clock(clock::millis)
            .random(r.split()::nextLong)
            .maxRetries(maxRetries)
            .maxDelay(maxDelay)
            .maxRetryAfter(maxRetryAfter)
            .retryAfterSpread(spread)
            .listener(
                new RetryListener() {
                  @Override
                  public void onRetryScheduled(Request request, int attempt, String reason, Duration delay) {
                    scheduled.add(delay);
                  }
                });
    if (deadline != null) b.deadline(deadline);
    OkHttpClient client =
        LeakCheck.track(
            new OkHttpClient.Builder()
                .addInterceptor(b.build())
                .addInterceptor(
                    chain -> {
                      Headers.Builder hb = new Headers.Builder();
                      int fields = serverRandom.nextInt(0, 4);
                      for (int f = 0; f < fields; f++) hb.addUnsafeNonAscii("Retry-After", anyValue(serverRandom, clock));
                      if (serverRandom.nextInt(4) == 0) hb.add("Date", IMF_FIXDATE.format(clock.instant().plusSeconds(serverRandom.nextLong(-60, 60))));
                      boolean ok = serverRandom.nextInt(6) == 0;
                      Response response =
                          new Response.Builder().request(chain.request()).protocol(Protocol.HTTP_1_1)
                              .code(ok ? 200 : 503).message(ok ? "OK" : "Unavailable").headers(hb.build()).build();
                      sent.add(response);
                      return response;
                    })
                .build());
    String config = "maxRetries=" + maxRetries + " maxDelay=" + maxDelay + " maxRetryAfter=" + maxRetryAfter
        + " deadline=" + deadline + " spread=" + spread;
    Response last;
    try {
      last = client.newCall(new Request.Builder().url("http://example.invalid/").build()).execute();
    } catch (IOException e) {
      throw new AssertionError("the stub never fails, so the call must not: " + config, e);
    }
    last.close();
    List<Duration> sleeps = time.sleeps();
    String what = config + " responses " + sent.stream().map(x -> x.code() + " " + x.headers("Retry-After")).toList()
        + " sleeps " + sleeps;
    assertThat(sleeps).as(what).isEqualTo(scheduled).hasSize(sent.size() - 1);
    assertThat(sent.size()).as(what).isLessThanOrEqualTo(maxRetries + 1);
    assertThat(last).as(what).isSameAs(sent.get(sent.size() - 1));
    long total = 0;
    for (int k = 0; k < sleeps.size(); k++) {
      long sleep = sleeps.get(k).toNanos();
      long retryAfter = RetryAfter.delayNanos(sent.get(k), clock::millis);
      if (retryAfter == RetryAfter.ABSENT) {
        assertThat(sleep).as(what).isBetween(0L, maxDelay.toNanos());
        count("interceptor:backoff-sleeps");
      } else {
        assertThat(sleep).as(what).isBetween(retryAfter, maxRetryAfter.toNanos());
        count("interceptor:retry-after-sleeps");
      }
      total += sleep;
    }
    if (deadline != null) assertThat(total).as(what).isLessThan(deadline.toNanos());
    // A call that stopped on a 503 did so for a reason the bounds explain.
    if (last.code() == 503) {
      long retryAfter = RetryAfter.delayNanos(last, clock::millis);
      boolean exhausted = sent.size() == maxRetries + 1;
      boolean tooLong = retryAfter > maxRetryAfter.toNanos();
      boolean pastDeadline = deadline != null; // the next wait would not have fit
      assertThat(exhausted || tooLong || pastDeadline).as(what).isTrue();
      count(tooLong ? "interceptor:gave-up-retry-after-too-long" : exhausted ? "interceptor:gave-up-exhausted" : "interceptor:gave-up-deadline");
    } else {
      count("interceptor:succeeded");
    }
  }
}
