package io.github.okretry;

/**
 * Diagnostic output of the tests (fault-matrix tables, latency percentiles, measured ratios):
 * printed only with {@code -Dokretry.printTables=true}, so a plain {@code mvn test} stays quiet and
 * a reader who wants the numbers behind the assertions can still see them.
 *
 * <pre>{@code mvn -B test -Dtest=FaultMatrixTest -Dokretry.printTables=true}</pre>
 */
public final class Diagnostics {
  /** True when {@code -Dokretry.printTables=true}. */
  public static final boolean PRINT = Boolean.getBoolean("okretry.printTables");

  private Diagnostics() {}

  /** Prints {@code line} to stdout when tables are asked for. */
  public static void println(String line) {
    if (PRINT) System.out.println(line);
  }

  /** Prints {@code String.format(format, args)} to stdout when tables are asked for. */
  public static void printf(String format, Object... args) {
    if (PRINT) System.out.printf(format, args);
  }
}
