package io.github.okretry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves anything behind: a connection still allocated to a call (a response
 * nobody closed), OkHttp's "connection leaked" warning, a call still running, or a thread the test
 * started and did not end.
 *
 * <p>Use with {@code @ExtendWith(LeakCheck.class)} and register each client with {@link
 * #track(OkHttpClient)}. After the test, each client gets a short grace period for in-flight
 * cleanup, then is checked and shut down (dispatcher executor stopped, idle connections evicted).
 * OkHttp's shared {@code TaskRunner} threads ("OkHttp …") are the client's own pool and outlive a
 * test by design, so they are not counted as leaks; everything else new must be gone.
 */
final class LeakCheck implements BeforeEachCallback, AfterEachCallback {

  static final Duration GRACE = Duration.ofSeconds(3);

  /** Tests run one at a time (no parallel execution is configured), so one static list will do. */
  private static final List<OkHttpClient> clients = new ArrayList<>();

  /** Held strongly: java.util.logging keeps only weak references to loggers. */
  private static final Logger OKHTTP_LOGGER = Logger.getLogger(OkHttpClient.class.getName());

  private final List<LogRecord> warnings = new ArrayList<>();
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
            synchronized (warnings) {
              warnings.add(record);
            }
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  private Set<Thread> threadsBefore = Set.of();

  static synchronized OkHttpClient track(OkHttpClient client) {
    clients.add(client);
    return client;
  }

  private static synchronized List<OkHttpClient> drainClients() {
    List<OkHttpClient> all = List.copyOf(clients);
    clients.clear();
    return all;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    drainClients();
    synchronized (warnings) {
      warnings.clear();
    }
    OKHTTP_LOGGER.addHandler(handler);
    threadsBefore = new HashSet<>(Thread.getAllStackTraces().keySet());
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    try {
      List<String> problems = check(drainClients(), threadsBefore, warnings);
      if (!problems.isEmpty()) {
        throw new AssertionError(context.getDisplayName() + " leaked: " + problems);
      }
    } finally {
      OKHTTP_LOGGER.removeHandler(handler);
    }
  }

  /**
   * Checks {@code clients} and the threads started since {@code threadsBefore}; returns what
   * leaked, empty if nothing. Shuts the clients down either way.
   */
  static List<String> check(
      List<OkHttpClient> clients, Set<Thread> threadsBefore, List<LogRecord> warnings)
      throws InterruptedException {
    return check(clients, threadsBefore, warnings, GRACE);
  }

  static List<String> check(
      List<OkHttpClient> clients,
      Set<Thread> threadsBefore,
      List<LogRecord> warnings,
      Duration grace)
      throws InterruptedException {
    List<String> problems = new ArrayList<>();
    long deadline = System.nanoTime() + grace.toNanos();
    for (OkHttpClient client : clients) {
      // A response closed on another thread a moment ago releases its connection asynchronously.
      while (System.nanoTime() < deadline
          && (allocated(client) > 0 || client.dispatcher().runningCallsCount() > 0)) {
        Thread.sleep(10);
      }
      if (allocated(client) > 0) {
        problems.add(allocated(client) + " connection(s) still allocated");
      }
      if (client.dispatcher().runningCallsCount() > 0) {
        problems.add(client.dispatcher().runningCallsCount() + " call(s) still running");
      }
    }
    // A response leaked and already garbage collected shows up only as OkHttp's warning, logged
    // when the pool next prunes; the allocation check above catches the same leak earlier and
    // without a costly System.gc() per test.
    for (OkHttpClient client : clients) {
      client.connectionPool().evictAll();
      ExecutorService executor = client.dispatcher().executorService();
      executor.shutdown();
      if (!executor.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        problems.add("dispatcher executor did not stop");
      }
    }
    synchronized (warnings) {
      for (LogRecord r : warnings) {
        if (r.getMessage() != null && r.getMessage().contains("leaked")) {
          problems.add("OkHttp warned: " + r.getMessage());
        }
      }
    }
    List<String> left = newThreads(threadsBefore);
    while (!left.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(10);
      left = newThreads(threadsBefore);
    }
    if (!left.isEmpty()) problems.add("threads left behind: " + left);
    return problems;
  }

  static int allocated(OkHttpClient client) {
    return client.connectionPool().connectionCount()
        - client.connectionPool().idleConnectionCount();
  }

  private static List<String> newThreads(Set<Thread> before) {
    List<String> left = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (before.contains(t) || !t.isAlive()) continue;
      String name = t.getName();
      if (name.startsWith("OkHttp")) continue; // OkHttp's shared TaskRunner pool, kept alive 60 s
      if (name.equals("Okio Watchdog")) continue; // Okio's timeout thread, one per JVM, idles out
      if (name.equals("Attach Listener") || name.equals("Common-Cleaner")) continue; // JVM's own
      if (name.equals("process reaper")) { // the JDK's: waits on a started process (HAProxy)
        continue;
      }
      left.add(name);
    }
    return left;
  }
}
