package io.github.okretry.examples;

import io.github.okretry.GiveUpReason;
import io.github.okretry.RetryBudget;
import io.github.okretry.RetryListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Micrometer metrics from okretry's {@link RetryListener} events. Copy it into your code base; the
 * names follow Micrometer's dot convention (Prometheus shows {@code okretry.retries} as {@code
 * okretry_retries_total}).
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>counts</th></tr>
 *   <tr><td>{@code okretry.attempts}</td><td>counter</td><td></td><td>attempts started, each
 *       call's first included</td></tr>
 *   <tr><td>{@code okretry.network.requests}</td><td>counter</td><td></td><td>requests that
 *       reached the network, OkHttp's own repeats underneath okretry included: the load the
 *       server sees</td></tr>
 *   <tr><td>{@code okretry.retries}</td><td>counter</td><td>{@code reason}</td><td>retries
 *       scheduled, by what failed: {@code HTTP 503}, {@code SocketTimeoutException}, …</td></tr>
 *   <tr><td>{@code okretry.giveups}</td><td>counter</td><td>{@code reason}</td><td>calls that
 *       ended on a failure, by {@link GiveUpReason}</td></tr>
 *   <tr><td>{@code okretry.successes}</td><td>counter</td><td></td><td>calls that ended with a
 *       response okretry does not retry (a 404 too)</td></tr>
 *   <tr><td>{@code okretry.budget.tokens}</td><td>gauge</td><td></td><td>retries the {@link
 *       RetryBudget} holds from deposits (its per-second reserve not counted)</td></tr>
 * </table>
 *
 * <pre>{@code
 * RetryBudget budget = RetryBudget.builder().build();   // yours, so the gauge can read it
 * RetryInterceptor retry = RetryPolicy.builder()
 *     .retryBudget(budget)
 *     .listener(new RetryMetrics(registry, budget, Tags.of("client", "orders")))
 *     .build();
 * }</pre>
 *
 * <p>Thread-safe; each event costs a counter increment (and a map lookup for tagged counters).
 */
final class RetryMetrics implements RetryListener {
  private final MeterRegistry registry;
  private final Tags tags;
  private final Counter attempts;
  private final Counter networkRequests;
  private final Counter successes;
  private final ConcurrentMap<String, Counter> retries = new ConcurrentHashMap<>();
  private final ConcurrentMap<GiveUpReason, Counter> giveUps = new ConcurrentHashMap<>();

  /**
   * Registers the meters in {@code registry}, each with {@code tags} (e.g. the client's name). The
   * gauge holds {@code budget} weakly, as Micrometer gauges do: the interceptor keeps it alive.
   */
  RetryMetrics(MeterRegistry registry, RetryBudget budget, Iterable<Tag> tags) {
    this.registry = registry;
    this.tags = Tags.of(tags);
    this.attempts =
        Counter.builder("okretry.attempts")
            .description("Attempts started, each call's first included")
            .tags(this.tags)
            .register(registry);
    this.networkRequests =
        Counter.builder("okretry.network.requests")
            .description("Requests that reached the network, OkHttp's own repeats included")
            .tags(this.tags)
            .register(registry);
    this.successes =
        Counter.builder("okretry.successes")
            .description("Calls that ended with a response okretry does not retry")
            .tags(this.tags)
            .register(registry);
    Gauge.builder("okretry.budget.tokens", budget, RetryBudget::availableTokens)
        .description("Retries the retry budget holds from deposits, its reserve not counted")
        .tags(this.tags)
        .register(registry);
  }

  @Override
  public void onAttemptStarted(Request request, int attempt) {
    attempts.increment();
  }

  @Override
  public void onNetworkRequest(Request request, int attempt, int requestInAttempt) {
    networkRequests.increment();
  }

  @Override
  public void onRetryScheduled(Request request, int attempt, String reason, long delayNanos) {
    retries
        .computeIfAbsent(
            reasonTag(reason),
            r ->
                Counter.builder("okretry.retries")
                    .description("Retries scheduled, by what failed")
                    .tags(tags)
                    .tag("reason", r)
                    .register(registry))
        .increment();
  }

  @Override
  public void onGaveUp(Request request, int attempts, GiveUpReason reason, String lastFailure) {
    giveUps
        .computeIfAbsent(
            reason,
            r ->
                Counter.builder("okretry.giveups")
                    .description(
                        "Calls that ended on a failure, by why no further attempt was made")
                    .tags(tags)
                    .tag("reason", r.name())
                    .register(registry))
        .increment();
  }

  @Override
  public void onSucceeded(Request request, Response response, int attempts) {
    successes.increment();
  }

  /**
   * A bounded tag value for a retry reason: {@code "HTTP 503"} stays, {@code
   * "SocketTimeoutException: timeout"} becomes {@code "SocketTimeoutException"}. Exception messages
   * (host names, ports) would give the tag unbounded values, one time series each.
   */
  static String reasonTag(String reason) {
    int colon = reason.indexOf(':');
    return colon < 0 ? reason : reason.substring(0, colon);
  }
}
