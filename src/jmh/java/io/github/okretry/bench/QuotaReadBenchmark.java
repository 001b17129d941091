package io.github.okretry.bench;

import io.github.okretry.internal.Quota;
import io.github.okretry.internal.QuotaHeaders;
import io.github.okretry.internal.WallClock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Issue 30.1: what reading the quota of one ordinary response costs, as okretry does it on every
 * response while quota pacing is PUBLISHED (the default): {@link QuotaHeaders#mayPublish} on the
 * names, then {@link QuotaHeaders#parse} if it says so. Three real shapes, with the headers an API
 * sends beside them: {@code none} (no quota field: the name scan alone), {@code github} ({@code
 * X-RateLimit-Limit/Remaining/Reset/Used/Resource} as api.github.com sends them), {@code ietf}
 * ({@code RateLimit} + {@code RateLimit-Policy} with one policy, as Cloudflare's API does). Run
 * with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes per response.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class QuotaReadBenchmark {
  private static final long NOW_MILLIS = 1_767_225_600_000L; // 2026-01-01T00:00:00Z, the Date sent
  private static final WallClock CLOCK = () -> NOW_MILLIS;

  @Param({"none", "github", "ietf"})
  public String response;

  private Headers headers;

  @Setup(Level.Trial)
  public void setUp() {
    Headers.Builder b =
        new Headers.Builder()
            .add("Date", "Thu, 01 Jan 2026 00:00:00 GMT")
            .add("Content-Type", "application/json; charset=utf-8")
            .add("Cache-Control", "private, max-age=60, s-maxage=60")
            .add("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
            .add("ETag", "W/\"4b2b5a2e8c1f6e0a9d3c7b1e2f4a6c8d\"")
            .add("Content-Length", "5321");
    switch (response) {
      case "none":
        break;
      case "github":
        b.add("X-RateLimit-Limit", "5000")
            .add("X-RateLimit-Remaining", "4987")
            .add("X-RateLimit-Reset", "1767227400")
            .add("X-RateLimit-Used", "13")
            .add("X-RateLimit-Resource", "core");
        break;
      case "ietf":
        b.add("RateLimit-Policy", "\"default\";q=1200;w=300")
            .add("RateLimit", "\"default\";r=1187;t=240");
        break;
      default:
        throw new IllegalArgumentException(response);
    }
    headers = b.add("X-GitHub-Request-Id", "C0DE:1B2F:3A4C5D:6E7F80:6956A1B0").build();
  }

  @Benchmark
  public List<Quota> read() {
    return QuotaHeaders.mayPublish(headers)
        ? QuotaHeaders.parse(headers, 200, false, 5_000_000_000L, CLOCK)
        : null;
  }
}
