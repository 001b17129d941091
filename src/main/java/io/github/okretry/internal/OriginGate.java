package io.github.okretry.internal;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import okhttp3.HttpUrl;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * What one policy's calls know per origin (scheme, host, port): the opt-in origin-wide {@code
 * Retry-After} gate (every call to an origin that refused one with a 429/503 {@code Retry-After}
 * waits until the time it named), the {@link OriginPacer} of the retries waiting on it, and, once
 * it published a quota (or, probing, was called), its {@link QuotaPacer}. Beside the table, by
 * stripes of origins and without a lock, the sends no pacer counts: a quota first heard of counts
 * those still in flight.
 *
 * <p>Bounded: at most {@code maxOrigins} origins (about 200 bytes each); past that the least
 * recently used is forgotten, which at worst lets one call through to an origin still closed, to be
 * closed again by its answer. An entry with nothing left to keep is removed when met, and two at a
 * time from the least recently used end whenever an origin is added, so the table empties itself
 * once throttling is over. Every operation is O(1) under one short lock; a lookup when nothing is
 * remembered takes no lock.
 */
public final class OriginGate {

  /** A closed gate. */
  public static final class Closed {
    /** No request before this time. */
    public final long notBeforeNanos;

    /** The status that closed it, handed to callers that cannot wait. */
    public final int code;

    Closed(long notBeforeNanos, int code) {
      this.notBeforeNanos = notBeforeNanos;
      this.code = code;
    }
  }

  /**
   * A quota's answer to a call asking to go ({@link #admitQuota}): wait {@link #waitNanos} and ask
   * again, or, when that is 0, go, counted in flight at its origin until {@link #quotaAnswered}
   * hears how the send ended.
   */
  public static final class QuotaTurn {
    private final String origin; // the origin whose quota pacer answered
    final long seq; // the pacer's number for the send once it goes, from 1 (tests read it)
    private final long waitNanos;

    QuotaTurn(String origin, long seq, long waitNanos) {
      this.origin = origin;
      this.seq = seq;
      this.waitNanos = waitNanos;
    }

    /** How long to wait before asking again; 0: go now, counted. */
    public long waitNanos() {
      return waitNanos;
    }
  }

  /** One origin's state. Guarded by the gate's lock. */
  private static final class Entry {
    @Nullable Closed closed; // null: open
    @Nullable OriginPacer pacer; // null until a retry waits on the origin
    @Nullable QuotaPacer quota; // null until the origin published a quota (or, probing, was called)

    boolean isEmpty(long nowNanos) {
      if (closed != null && closed.notBeforeNanos - nowNanos > 0) return false;
      if (quota != null && !quota.isIdle(nowNanos)) return false;
      return pacer == null || pacer.isIdle(nowNanos);
    }
  }

  /** Origins looked at from the least recently used end, per insertion, for amortised expiry. */
  private static final int EXPIRE_PER_INSERT = 2;

  private final int maxOrigins;
  private final boolean paceQuotas;
  private final boolean probe;
  private final WallClock clock;
  private final RandomSource random;
  private final LinkedHashMap<String, Entry> entries; // guarded by this; access order: LRU first
  private volatile int size; // entries.size(), readable without the lock
  private volatile int quotaOrigins; // entries with a QuotaPacer, readable without the lock

  /**
   * Sends in flight that no quota pacer counts (a first attempt without state, a call to an origin
   * with no pacer yet), by a stripe of their origin: what a quota first heard of may not show yet.
   * Two origins may share a stripe; the count is read only while a window's figures came from such
   * sends alone ({@link QuotaPacer#admit}). Null unless quotas are read.
   */
  private final @Nullable AtomicIntegerArray uncounted;

  /**
   * A gate remembering at most {@code maxOrigins} origins.
   *
   * @param paceQuotas whether calls are paced by the quotas origins publish
   * @param probe whether a crowd's calls to an origin not heard from wait for its first answer
   * @param clock the wall clock an epoch reset without {@code Date} is measured against
   * @param random draws each window's offset past a reset
   */
  public OriginGate(
      int maxOrigins, boolean paceQuotas, boolean probe, WallClock clock, RandomSource random) {
    if (maxOrigins < 1) throw new IllegalArgumentException("maxOrigins < 1: " + maxOrigins);
    if (probe && !paceQuotas) throw new IllegalArgumentException("probe without paceQuotas");
    this.maxOrigins = maxOrigins;
    this.paceQuotas = paceQuotas;
    this.probe = probe;
    this.clock = clock;
    this.random = random;
    this.entries = new LinkedHashMap<>(16, 0.75f, true);
    this.uncounted = paceQuotas ? new AtomicIntegerArray(UNCOUNTED_STRIPES) : null;
  }

  /** Stripes of {@link #uncounted}: a power of two. */
  static final int UNCOUNTED_STRIPES = 64;

  /**
   * A send to {@code url}'s origin that no quota pacer counts leaves: counted in flight until
   * {@link #uncountedEnded}, so that a quota first heard of meanwhile counts it. No lock, no
   * allocation. (Holding a crowd until the origin's first answer would meet a quota sooner, but a
   * first attempt runs at once: that is {@code PROBE}'s, opt-in.)
   */
  public void uncountedSent(HttpUrl url) {
    AtomicIntegerArray u = uncounted;
    if (u != null) u.incrementAndGet(stripe(url));
  }

  /** The outcome of a send {@link #uncountedSent} let go is in hand. */
  public void uncountedEnded(HttpUrl url) {
    AtomicIntegerArray u = uncounted;
    if (u != null) u.decrementAndGet(stripe(url));
  }

  private int uncountedInFlight(HttpUrl url) {
    AtomicIntegerArray u = uncounted;
    return u != null ? Math.max(0, u.get(stripe(url))) : 0;
  }

  private static int stripe(HttpUrl url) {
    int h = url.host().hashCode() * 31 + url.port();
    return (h ^ (h >>> 16)) & (UNCOUNTED_STRIPES - 1);
  }

  /**
   * Whether a call must ask {@link #admitQuota} before it goes: some origin is paced by its quota,
   * or probing is on.
   */
  public boolean pacesQuotas() {
    return probe || quotaOrigins > 0;
  }

  /** Whether every call must be seen (probing is on): none may skip the table. */
  public boolean probes() {
    return probe;
  }

  /** Whether responses are read for the quota they publish. */
  public boolean readsQuotas() {
    return paceQuotas;
  }

  /**
   * Asks the quota pacer of {@code url}'s origin whether a call may go at {@code nowNanos}: see
   * {@link QuotaPacer#admit}. Null if the origin has none (and probing is off): go, uncounted.
   */
  public @Nullable QuotaTurn admitQuota(HttpUrl url, long nowNanos, long maxWaitNanos) {
    if (!pacesQuotas()) return null;
    String key = origin(url);
    synchronized (this) {
      Entry entry = probe ? entryFor(key, nowNanos) : entries.get(key);
      if (entry == null || (entry.quota == null && !probe)) return null;
      QuotaPacer quota = quotaFor(entry, nowNanos);
      long wait = quota.admit(nowNanos, url.encodedPath(), maxWaitNanos, uncountedInFlight(url));
      return new QuotaTurn(key, wait > 0 ? 0 : quota.lastSend(), wait);
    }
  }

  /**
   * An attempt that went with {@code counted} (null: uncounted) ended with {@code response} (null:
   * an exception): its origin's quota pacer hears it and the quota the response publishes ({@code
   * refused}: it turned the call away, with {@code retryAfterNanos} or {@link RetryAfter#ABSENT}).
   * Without a count and without a published quota, takes no lock.
   */
  // Without a response there are no quotas, so a call that gets past the first return without a
  // response was counted: answeredOrigin is never read from a null; answered is null only then.
  @SuppressWarnings("NullAway")
  public void quotaAnswered(
      @Nullable QuotaTurn counted,
      @Nullable Response response,
      boolean refused,
      long retryAfterNanos,
      long nowNanos) {
    if (!paceQuotas) return;
    List<Quota> quotas =
        response != null && QuotaHeaders.mayPublish(response.headers())
            ? QuotaHeaders.parse(response, nowNanos, clock)
            : null;
    if (quotas == null && counted == null) return;
    HttpUrl answered = response != null ? response.request().url() : null;
    String answeredOrigin = answered != null ? origin(answered) : counted.origin;
    long seq = counted != null ? counted.seq : 0; // 0: not counted
    synchronized (this) {
      if (counted != null && !counted.origin.equals(answeredOrigin)) {
        Entry admitted = entries.get(counted.origin);
        if (admitted != null && admitted.quota != null) admitted.quota.failed(seq, nowNanos);
        seq = 0; // counted there; the answer is learned where it came from
      }
      Entry entry =
          quotas != null ? entryFor(answeredOrigin, nowNanos) : entries.get(answeredOrigin);
      if (entry == null || (entry.quota == null && quotas == null)) return;
      QuotaPacer quota = quotaFor(entry, nowNanos);
      if (response == null) {
        quota.failed(seq, nowNanos);
      } else {
        quota.answered(
            seq, answered.encodedPath(), quotas, refused, retryAfterNanos, nowNanos, random);
      }
    }
  }

  /**
   * Closes the origin of {@code answeredUrl} (the URL that actually answered, after redirects)
   * until {@code notBeforeNanos}; a later time wins.
   */
  public void close(HttpUrl answeredUrl, long nowNanos, long notBeforeNanos, int code) {
    String key = origin(answeredUrl);
    synchronized (this) {
      Entry entry = entryFor(key, nowNanos);
      if (entry.closed == null
          || entry.closed.notBeforeNanos - nowNanos <= 0
          || notBeforeNanos - entry.closed.notBeforeNanos > 0) {
        entry.closed = new Closed(notBeforeNanos, code);
      }
    }
  }

  /** The gate in front of {@code url} at {@code nowNanos}, or null if it is open. */
  public @Nullable Closed check(HttpUrl url, long nowNanos) {
    if (size == 0) return null; // the common case, without building a key or locking
    String key = origin(url);
    synchronized (this) {
      Entry entry = entries.get(key);
      if (entry == null || entry.closed == null) return null;
      if (entry.closed.notBeforeNanos - nowNanos <= 0) {
        entry.closed = null;
        if (entry.isEmpty(nowNanos)) remove(key);
        return null;
      }
      return entry.closed;
    }
  }

  /**
   * True if nothing holds back {@code url}'s origin at {@code nowNanos}: no gate closed on it and
   * no crowd paced on it. What hedging asks before it adds a request: never to an origin that is
   * refusing or pacing.
   */
  public boolean quiet(HttpUrl url, long nowNanos) {
    if (size == 0) return true; // the common case, without building a key or locking
    String key = origin(url);
    synchronized (this) {
      Entry entry = entries.get(key);
      return entry == null || entry.isEmpty(nowNanos);
    }
  }

  /**
   * A turn for a retry waiting on {@code origin}: see {@link OriginPacer#reserve}.
   *
   * @param origin a key from {@link #origin(HttpUrl)}
   */
  public synchronized long reserve(
      String origin, long nowNanos, long latestNanos, long ownLatestNanos) {
    return pacerFor(origin, nowNanos).reserve(nowNanos, latestNanos, ownLatestNanos);
  }

  /**
   * The attempt of the turn at {@code slotNanos} left ({@link OriginPacer#used}); nothing if the
   * origin was forgotten meanwhile.
   */
  public synchronized void used(String origin, long slotNanos, long nowNanos) {
    Entry entry = entries.get(origin);
    if (entry != null && entry.pacer != null) entry.pacer.used(slotNanos, nowNanos);
  }

  /**
   * The call holding the turn at {@code slotNanos} ended unsent ({@link OriginPacer#givenBack}); as
   * {@link #used}.
   */
  public synchronized void givenBack(String origin, long slotNanos, long nowNanos) {
    Entry entry = entries.get(origin);
    if (entry != null && entry.pacer != null) entry.pacer.givenBack(slotNanos, nowNanos);
  }

  /**
   * What {@code origin} answered to the attempt of the turn at {@code slotNanos}: see {@link
   * OriginPacer#released}.
   */
  public synchronized void released(
      String origin,
      long slotNanos,
      boolean admitted,
      long retryAfterNanos,
      long waitedNanos,
      long nowNanos) {
    pacerFor(origin, nowNanos)
        .released(slotNanos, admitted, retryAfterNanos, waitedNanos, nowNanos);
  }

  /** A call that is not paced was sent to {@code url}'s origin: see {@link OriginPacer#sent}. */
  public void sent(HttpUrl url, long sentNanos) {
    report(url, sentNanos, false);
  }

  /**
   * {@code answeredUrl}'s origin admitted a call that was not paced: see {@link
   * OriginPacer#admitted}.
   */
  public void admitted(HttpUrl answeredUrl, long sentNanos) {
    report(answeredUrl, sentNanos, true);
  }

  private void report(HttpUrl url, long sentNanos, boolean admitted) {
    if (size == 0) return;
    String key = origin(url);
    synchronized (this) {
      Entry entry = entries.get(key);
      if (entry == null) {
        // Calls to other origins also age the table, so it empties once throttling is over
        // whichever origins are called next, and calls stop paying for reports.
        expireLeastRecentlyUsed(sentNanos);
        return;
      }
      // Once nothing is left to remember, the entry goes, so calls stop paying for reports.
      if (entry.isEmpty(sentNanos)) {
        remove(key);
      } else if (entry.pacer != null) {
        if (admitted) entry.pacer.admitted(sentNanos);
        else entry.pacer.sent(sentNanos);
      }
    }
  }

  /** Origins remembered now; at most the bound. */
  public int size() {
    return size;
  }

  /** The key of {@code url}'s origin: {@code scheme://host:port}. */
  public static String origin(HttpUrl url) {
    return url.scheme() + "://" + url.host() + ":" + url.port();
  }

  /** The entry's quota pacer, added if missing. Holds the lock. */
  // Written under the lock; volatile only for the reads without it.
  @SuppressWarnings("NonAtomicVolatileUpdate")
  private QuotaPacer quotaFor(Entry entry, long nowNanos) {
    if (entry.quota == null) {
      entry.quota = new QuotaPacer(probe, nowNanos);
      quotaOrigins++;
    }
    return entry.quota;
  }

  private OriginPacer pacerFor(String key, long nowNanos) {
    Entry entry = entryFor(key, nowNanos);
    if (entry.pacer == null) entry.pacer = new OriginPacer();
    return entry.pacer;
  }

  /** The entry for {@code key}, added if missing. Holds the lock. */
  private Entry entryFor(String key, long nowNanos) {
    Entry entry = entries.get(key);
    if (entry != null) return entry;
    expireLeastRecentlyUsed(nowNanos);
    entry = new Entry();
    entries.put(key, entry);
    if (entries.size() > maxOrigins) {
      // The bound: forget the least recently used origin, whatever its state.
      Iterator<Map.Entry<String, Entry>> eldest = entries.entrySet().iterator();
      forgotten(eldest.next().getValue());
      eldest.remove();
    }
    size = entries.size();
    return entry;
  }

  /** Removes up to {@link #EXPIRE_PER_INSERT} empty entries from the least recently used end. */
  private void expireLeastRecentlyUsed(long nowNanos) {
    Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator();
    for (int i = 0; i < EXPIRE_PER_INSERT && it.hasNext(); i++) {
      Entry e = it.next().getValue();
      if (!e.isEmpty(nowNanos)) break;
      forgotten(e);
      it.remove();
    }
    size = entries.size();
  }

  private void remove(String key) {
    Entry e = entries.remove(key);
    if (e != null) forgotten(e);
    size = entries.size();
  }

  // Written under the lock; volatile only for the reads without it.
  @SuppressWarnings("NonAtomicVolatileUpdate")
  private void forgotten(Entry e) {
    if (e.quota != null) quotaOrigins--;
  }
}
