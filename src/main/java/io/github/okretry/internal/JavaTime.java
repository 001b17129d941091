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

  // A direct reference, not Class.forName("java.time.Duration"): core library desugaring rewrites
  // references to java.time into its own j$.time copy, but not a class name in a string.
  @SuppressSignatureCheck
  private static boolean probe() {
    try {
      return java.time.Duration.ofNanos(1).toNanos() == 1;
    } catch (LinkageError e) {
      return false;
    }
  }
}
