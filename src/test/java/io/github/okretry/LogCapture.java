package io.github.okretry;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Captures what okretry logs during a test instead of printing it, so a test that provokes a
 * warning on purpose (a listener that throws, say) can assert on it and leaves no stack trace in
 * the build output.
 *
 * <pre>{@code
 * @RegisterExtension final LogCapture log = LogCapture.okretry();
 * ...
 * assertThat(log.warnings()).singleElement().satisfies(e -> assertThat(e.thrown()).isSameAs(bug));
 * }</pre>
 *
 * <p>Captures WARN and above from every logger under {@code io.github.okretry} (not one class:
 * where a message is logged from may move while the message stays), from any thread, for the
 * duration of each test; nothing captured reaches the console. Tests run one at a time in this
 * build, so a capture sees only its own test's events, apart from a late one a previous test's
 * background thread might log.
 */
final class LogCapture implements BeforeEachCallback, AfterEachCallback {

  /** One captured event: its level, logger, formatted message and the exception logged with it. */
  record Event(String level, String logger, String message, Throwable thrown) {
    @Override
    public String toString() {
      return level + " " + logger + " - " + message + (thrown == null ? "" : " [" + thrown + "]");
    }
  }

  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private boolean additive;

  private LogCapture(String loggerName) {
    this.logger = (Logger) LoggerFactory.getLogger(loggerName);
  }

  /** Captures okretry's own log ({@code io.github.okretry} and below). */
  static LogCapture okretry() {
    return new LogCapture("io.github.okretry");
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    appender.list.clear();
    appender.start();
    logger.addAppender(appender);
    additive = logger.isAdditive();
    logger.setAdditive(false); // captured events do not also go to the console
  }

  @Override
  public void afterEach(ExtensionContext context) {
    logger.detachAppender(appender);
    logger.setAdditive(additive);
    appender.stop();
  }

  /** Every WARN or ERROR event captured so far in this test, in order. */
  List<Event> warnings() {
    List<Event> events = new ArrayList<>();
    synchronized (appender) { // ListAppender appends under its own lock
      for (ILoggingEvent e : appender.list) {
        if (!e.getLevel().isGreaterOrEqual(Level.WARN)) continue;
        events.add(
            new Event(
                e.getLevel().toString(), e.getLoggerName(), e.getFormattedMessage(), thrown(e)));
      }
    }
    return events;
  }

  /** The captured warnings' messages, in order. */
  List<String> warningMessages() {
    return warnings().stream().map(Event::message).toList();
  }

  private static Throwable thrown(ILoggingEvent event) {
    IThrowableProxy proxy = event.getThrowableProxy();
    return proxy instanceof ThrowableProxy p ? p.getThrowable() : null;
  }
}
