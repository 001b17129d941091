package io.github.okretry.internal;

import okhttp3.OkHttp;
import org.jspecify.annotations.Nullable;

/**
 * Fails fast, with a message a user can act on, when the OkHttp on the classpath is older than
 * okretry needs: with OkHttp 4 beside 5 on a Maven classpath (README, "OkHttp 4 beside it"), {@code
 * OkHttpClient} may load from the old jar, and the first retry would otherwise throw {@code
 * NoSuchMethodError} deep inside a call.
 */
public final class OkHttpVersion {

  /** The oldest OkHttp okretry runs on: 5.4.0 added {@code Call.addEventListener}. */
  public static final String MINIMUM = "5.4.0";

  private static final int[] MINIMUM_PARTS = {5, 4, 0};

  /**
   * The running OkHttp's version, read once; null for OkHttp 3, which has no {@code
   * okhttp3.OkHttp}. {@code OkHttp.VERSION} is a plain static field in OkHttp 5, so javac reads it
   * at run time rather than copying 5.5.1 in; OkHttp 4 has the same field.
   */
  private static final @Nullable String FOUND = readVersion();

  private OkHttpVersion() {}

  /**
   * Checks the OkHttp on the classpath.
   *
   * @throws IllegalStateException if it is older than {@link #MINIMUM}
   */
  public static void check() {
    check(FOUND);
  }

  /**
   * Checks {@code found}, the version OkHttp reports (null: OkHttp 3); a version string that cannot
   * be read passes.
   */
  static void check(@Nullable String found) {
    if (found != null && !isOlderThanMinimum(found)) return;
    String shown = found != null ? found : "3.x or older (no okhttp3.OkHttp class)";
    throw new IllegalStateException(
        "okretry needs OkHttp "
            + MINIMUM
            + " or newer, but found OkHttp "
            + shown
            + " on the classpath. With Maven, look for com.squareup.okhttp3:okhttp 4.x beside"
            + " okhttp-jvm 5.x (Retrofit 3 brings okhttp 4.12.0) and exclude it from the dependency"
            + " that brings it.");
  }

  /**
   * True if {@code version} starts with a version number below {@link #MINIMUM}. Reads up to three
   * leading numbers (a missing one counts as 0) and ignores the rest, so "5.4.0-SNAPSHOT" passes
   * and "5.0.0-alpha.17" does not. A string that does not start with a number passes: a custom
   * build is not blocked on its version string.
   */
  static boolean isOlderThanMinimum(String version) {
    int[] parts = new int[3];
    int i = 0;
    for (int part = 0; part < 3; part++) {
      int start = i;
      int value = 0;
      while (i < version.length() && i - start < 6 && Character.isDigit(version.charAt(i))) {
        value = value * 10 + (version.charAt(i++) - '0');
      }
      if (i == start) {
        if (part == 0) return false; // no leading number: unreadable
        break;
      }
      parts[part] = value;
      if (i >= version.length() || version.charAt(i) != '.') break;
      i++;
    }
    for (int k = 0; k < 3; k++) {
      if (parts[k] != MINIMUM_PARTS[k]) return parts[k] < MINIMUM_PARTS[k];
    }
    return false;
  }

  private static @Nullable String readVersion() {
    try {
      return OkHttp.VERSION;
    } catch (LinkageError e) {
      return null;
    }
  }
}
