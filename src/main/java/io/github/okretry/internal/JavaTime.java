package io.github.okretry.internal;

/**
 * Whether {@code java.time} exists here: always on a JVM, only from Android API 26 (or with core
 * library desugaring). okretry's own code never needs it; only its {@code Duration} conveniences
 * do, and they check this first.
 *
 * <p>Internal API: not covered by compatibility guarantees.
 */
public final class JavaTime {

  /** True where {@code java.time.Duration} can be loaded. */
  public static final boolean AVAILABLE = probe();

  private JavaTime() {}

  private static boolean probe() {
    try {
      Class.forName("java.time.Duration");
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
