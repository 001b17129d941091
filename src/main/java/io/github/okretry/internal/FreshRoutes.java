package io.github.okretry.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import okhttp3.Dns;
import okhttp3.HttpUrl;
import org.jspecify.annotations.Nullable;

/**
 * The origins whose shared (HTTP/2) connection failed a call of one policy, and the route each now
 * takes instead: a {@link Dns} of its own ({@link Route}), which OkHttp counts as part of a
 * connection's address, so that requests given it never share a connection made without it, and the
 * next failure moves them again. The old connection is left to finish the calls on it and idle out
 * of the pool as OkHttp's pool decides; nothing here closes it.
 *
 * <p>A fixed table of slots by origin hash, made at the first move: a policy whose shared
 * connections never failed keeps nothing and costs one volatile read an attempt. Two origins in one
 * slot take turns: the later move replaces the other's route, whose calls go back to the client's
 * own connections (the cost of a bounded table, paid only by origins that both failed).
 */
public final class FreshRoutes {

  /** Addresses a route puts last, at most: those it and the routes before it failed on. */
  static final int MAX_AVOIDED = 8;

  private final int mask;
  private volatile @Nullable AtomicReferenceArray<Route> slots; // made at the first move

  /**
   * @param slots the size of the table, a power of two ≥ 1
   */
  public FreshRoutes(int slots) {
    if (slots < 1 || Integer.bitCount(slots) != 1) {
      throw new IllegalArgumentException("slots not a power of two: " + slots);
    }
    this.mask = slots - 1;
  }

  /**
   * The route requests to {@code url}'s origin take over {@code dns} (the chain's own): null for
   * the client's own connections, as long as none of the origin's failed.
   */
  public @Nullable Dns route(HttpUrl url, Dns dns) {
    AtomicReferenceArray<Route> table = slots;
    if (table == null) return null;
    Route r = table.get(slot(url));
    return r != null && r.delegate == dns && r.isFor(url) ? r : null;
  }

  /**
   * The shared connection to {@code url}'s origin on {@code address}, reached through {@code
   * connectionDns} (the Dns of its address), failed a call: later requests take a new route, which
   * puts {@code address} last among the addresses the origin's name resolves to. Many calls that
   * fail on one connection at once move the origin once: only a failure on its current route moves
   * it.
   *
   * @param chainDns the Dns the chain had before okretry routed it (the client's)
   */
  public void failedOn(
      HttpUrl url, Dns connectionDns, Dns chainDns, @Nullable InetAddress address) {
    AtomicReferenceArray<Route> table = slots;
    if (table == null) {
      synchronized (this) {
        table = slots;
        if (table == null) slots = table = new AtomicReferenceArray<>(mask + 1);
      }
    }
    int i = slot(url);
    while (true) {
      Route current = table.get(i);
      boolean ours = current != null && current.isFor(url) && current.delegate == chainDns;
      // A connection of an older route, or of another origin's: already moved past, or not ours
      if (ours ? connectionDns != current : connectionDns != chainDns) return;
      Route next = new Route(chainDns, url, ours ? current.avoided : NONE, address);
      if (table.compareAndSet(i, current, next)) return;
    }
  }

  private int slot(HttpUrl url) {
    int h = url.host().hashCode() * 31 + url.port();
    h ^= h >>> 16;
    return h & mask;
  }

  private static final InetAddress[] NONE = new InetAddress[0];

  /**
   * One move of an origin: a Dns of its own (identity makes it a new connection address) that asks
   * the client's and puts the addresses failed on last, in the order they came.
   */
  static final class Route implements Dns {
    final Dns delegate;
    private final String scheme;
    private final String host;
    private final int port;
    final InetAddress[] avoided;

    Route(Dns delegate, HttpUrl url, InetAddress[] before, @Nullable InetAddress failed) {
      this.delegate = delegate;
      this.scheme = url.scheme();
      this.host = url.host();
      this.port = url.port();
      this.avoided = withLatest(before, failed);
    }

    boolean isFor(HttpUrl url) {
      return url.port() == port && url.host().equals(host) && url.scheme().equals(scheme);
    }

    @Override
    public List<InetAddress> lookup(String hostname) throws UnknownHostException {
      List<InetAddress> all = delegate.lookup(hostname);
      if (all.size() < 2 || avoided.length == 0) return all;
      List<InetAddress> ordered = new ArrayList<>(all.size());
      for (InetAddress a : all) {
        if (!isAvoided(a)) ordered.add(a);
      }
      for (int i = avoided.length - 1; i >= 0; i--) { // the one that failed latest goes last
        if (all.contains(avoided[i])) ordered.add(avoided[i]);
      }
      return ordered;
    }

    private boolean isAvoided(InetAddress a) {
      for (InetAddress x : avoided) {
        if (x.equals(a)) return true;
      }
      return false;
    }

    /** {@code before} with {@code failed} first, at most {@link #MAX_AVOIDED}. */
    private static InetAddress[] withLatest(InetAddress[] before, @Nullable InetAddress failed) {
      if (failed == null) return before;
      List<InetAddress> list = new ArrayList<>(before.length + 1);
      list.add(failed);
      for (InetAddress a : before) {
        if (!a.equals(failed) && list.size() < MAX_AVOIDED) list.add(a);
      }
      return list.toArray(new InetAddress[0]);
    }

    @Override
    public String toString() {
      return "okretry route to " + host + ":" + port + " avoiding " + Arrays.toString(avoided);
    }
  }
}
