package io.github.okretry;

import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Quiets MockWebServer's {@code java.util.logging} chatter once per test JVM (registered in {@code
 * META-INF/services}, so it applies to every test however it is launched).
 *
 * <p>MockWebServer logs a WARNING whenever a client opens a connection and closes it without a
 * request, which the cancellation, timeout and refused-stream tests do on purpose, at
 * timing-dependent moments (often during a later test). OkHttp's own loggers are left alone: its
 * "connection leaked" warning is a real finding, and {@link LeakCheck} asserts on it.
 */
public final class QuietTestLogging implements LauncherSessionListener {

  /** Held strongly: java.util.logging keeps only weak references to loggers (and their levels). */
  private static final Logger MOCK_WEB_SERVER = Logger.getLogger("mockwebserver3");

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    MOCK_WEB_SERVER.setLevel(Level.SEVERE);
  }
}
