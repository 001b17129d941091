package io.github.okretry.bench;

import io.github.okretry.sim.JitterSimulation;
import io.github.okretry.sim.JitterSimulation.Config;
import io.github.okretry.sim.JitterSimulation.Strategy;
import io.github.okretry.sim.JitterSimulation.Summary;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/**
 * Issue 5.3: runs {@link JitterSimulation} for N = 10, 20, …, 190 clients, 100 seeded runs per
 * (strategy, N), prints a Markdown table and draws {@code docs/jitter-experiment.png} (writes and
 * completion time against N), headless, with java.awt only.
 *
 * <p>Arguments: {@code [runs] [png path]}; defaults 100 and docs/jitter-experiment.png.
 */
public final class JitterExperiment {

  private static final Color[] COLORS = {
    new Color(0x7f7f7f),
    new Color(0xd62728),
    new Color(0x1f77b4),
    new Color(0x2ca02c),
    new Color(0xff7f0e)
  };

  public static void main(String[] args) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int runs = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    String png = args.length > 1 ? args[1] : "docs/jitter-experiment.png";
    long start = System.nanoTime();

    Map<Strategy, List<Summary>> results = new EnumMap<>(Strategy.class);
    List<Integer> ns = new ArrayList<>();
    for (int n = 10; n <= 190; n += 10) ns.add(n);
    for (Strategy s : Strategy.values()) {
      List<Summary> row = new ArrayList<>();
      for (int n : ns) row.add(JitterSimulation.summarize(s, n, runs, 1, Config.AWS));
      results.put(s, row);
    }

    System.out.printf(
        "Jitter experiment: base 5 ms, cap 2 s, legs |N(10 ms, 2 ms)|, %d runs per cell, seed"
            + " 1%n%n",
        runs);
    printTable(
        "Mean completion time of the last client (ms)",
        results,
        ns,
        Summary::completionMillis,
        "%.0f");
    printTable("Mean writes (work)", results, ns, Summary::writes, "%.0f");
    printTable(
        "Mean completion time per client (ms)", results, ns, Summary::meanClientMillis, "%.0f");

    draw(results, ns, runs, new File(png));
    System.out.printf("chart: %s%nsimulated in %.1f s%n", png, (System.nanoTime() - start) / 1e9);
  }

  private static void printTable(
      String title,
      Map<Strategy, List<Summary>> results,
      List<Integer> ns,
      ToDoubleFunction<Summary> f,
      String fmt) {
    System.out.println("**" + title + "**\n");
    StringBuilder header = new StringBuilder("| N |");
    StringBuilder rule = new StringBuilder("|---:|");
    for (Strategy s : results.keySet()) {
      header.append(' ').append(label(s)).append(" |");
      rule.append("---:|");
    }
    System.out.println(header);
    System.out.println(rule);
    for (int i = 0; i < ns.size(); i++) {
      StringBuilder line = new StringBuilder("| " + ns.get(i) + " |");
      for (List<Summary> row : results.values()) {
        line.append(' ').append(String.format(fmt, f.applyAsDouble(row.get(i)))).append(" |");
      }
      System.out.println(line);
    }
    System.out.println();
  }

  private static String label(Strategy s) {
    switch (s) {
      case NO_BACKOFF:
        return "no backoff";
      case EXPONENTIAL:
        return "exponential, no jitter";
      case FULL_JITTER:
        return "Full Jitter";
      case EQUAL_JITTER:
        return "Equal Jitter";
      case DECORRELATED_JITTER:
        return "Decorrelated Jitter";
      default:
        throw new AssertionError(s);
    }
  }

  private static void draw(
      Map<Strategy, List<Summary>> results, List<Integer> ns, int runs, File file)
      throws IOException {
    int w = 1400;
    int h = 620;
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(
        RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
    g.drawString(
        "okretry Backoff: "
            + ns.get(0)
            + "–"
            + ns.get(ns.size() - 1)
            + " clients racing for one OCC write (base 5 ms, cap 2 s, "
            + runs
            + " runs each)",
        40,
        34);

    panel(g, results, ns, 70, 70, 600, 440, "Total writes (work)", Summary::writes, false);
    panel(
        g,
        results,
        ns,
        760,
        70,
        600,
        440,
        "Completion time of the last client (s, log scale)",
        s -> s.completionMillis() / 1000,
        true);

    // legend
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 16));
    int x = 70;
    int y = 585;
    int i = 0;
    for (Strategy s : results.keySet()) {
      g.setColor(COLORS[i++]);
      g.setStroke(new BasicStroke(4));
      g.drawLine(x, y - 6, x + 30, y - 6);
      g.setColor(Color.BLACK);
      g.drawString(label(s), x + 38, y);
      x += 38 + g.getFontMetrics().stringWidth(label(s)) + 40;
    }
    g.dispose();
    File dir = file.getAbsoluteFile().getParentFile();
    if (dir != null) dir.mkdirs();
    ImageIO.write(image, "png", file);
  }

  private static void panel(
      Graphics2D g,
      Map<Strategy, List<Summary>> results,
      List<Integer> ns,
      int x0,
      int y0,
      int pw,
      int ph,
      String title,
      ToDoubleFunction<Summary> f,
      boolean log) {
    double max = 0;
    double min = Double.MAX_VALUE;
    for (List<Summary> row : results.values()) {
      for (Summary s : row) {
        max = Math.max(max, f.applyAsDouble(s));
        min = Math.min(min, f.applyAsDouble(s));
      }
    }
    double lo;
    double hi;
    if (log) {
      lo = Math.pow(10, Math.floor(Math.log10(min)));
      hi = Math.pow(10, Math.ceil(Math.log10(max)));
    } else {
      lo = 0;
      double step = niceStep(max / 5);
      hi = Math.ceil(max / step) * step;
    }
    int nMin = ns.get(0);
    int nMax = ns.get(ns.size() - 1);

    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 17));
    g.setColor(Color.BLACK);
    g.drawString(title, x0, y0 - 8);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    // grid and y labels
    List<Double> ticks = new ArrayList<>();
    if (log) {
      for (double t = lo; t <= hi * 1.0001; t *= 10) ticks.add(t);
    } else {
      double step = niceStep(max / 5);
      for (double t = 0; t <= hi + 1e-9; t += step) ticks.add(t);
    }
    for (double t : ticks) {
      int y = yOf(t, lo, hi, y0, ph, log);
      g.setColor(new Color(0xdddddd));
      g.drawLine(x0, y, x0 + pw, y);
      g.setColor(Color.BLACK);
      String s = t >= 1 ? String.format("%,.0f", t) : String.format("%.1f", t);
      g.drawString(s, x0 - 8 - g.getFontMetrics().stringWidth(s), y + 5);
    }
    for (int n = nMin; n <= nMax; n += 20) {
      int x = x0 + (int) ((n - nMin) * (double) pw / (nMax - nMin));
      g.setColor(new Color(0xeeeeee));
      g.drawLine(x, y0, x, y0 + ph);
      g.setColor(Color.BLACK);
      String s = Integer.toString(n);
      g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, y0 + ph + 20);
    }
    g.drawString("clients (N)", x0 + pw / 2 - 35, y0 + ph + 42);
    g.setColor(Color.BLACK);
    g.drawRect(x0, y0, pw, ph);

    int i = 0;
    for (List<Summary> row : results.values()) {
      g.setColor(COLORS[i++]);
      g.setStroke(new BasicStroke(3));
      int px = -1;
      int py = -1;
      for (int k = 0; k < row.size(); k++) {
        int x = x0 + (int) ((ns.get(k) - nMin) * (double) pw / (nMax - nMin));
        int y = yOf(f.applyAsDouble(row.get(k)), lo, hi, y0, ph, log);
        if (px >= 0) g.drawLine(px, py, x, y);
        g.fillOval(x - 4, y - 4, 8, 8);
        px = x;
        py = y;
      }
    }
    g.setStroke(new BasicStroke(1));
  }

  private static int yOf(double v, double lo, double hi, int y0, int ph, boolean log) {
    double frac =
        log
            ? (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))
            : (v - lo) / (hi - lo);
    return y0 + ph - (int) Math.round(frac * ph);
  }

  private static double niceStep(double raw) {
    double mag = Math.pow(10, Math.floor(Math.log10(raw)));
    double r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
  }
}
