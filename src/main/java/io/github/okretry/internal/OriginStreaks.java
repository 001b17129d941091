package io.github.okretry.internal;

import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import okhttp3.HttpUrl;
import org.jspecify.annotations.Nullable;

/**
 * What a retry budget knows of each origin's health: its <i>streak</i> (the retries counted since
 * it last answered a call, in halves, and when its failures began) and its <i>failure share</i>
 * (the share of its recent answers that were failures). Both are per origin, so one origin's outage
 * says nothing of another's, and both are forgotten once the origin has not failed for {@code
 * memoryNanos}. Within that memory it also notes when the origin last answered, for the outcome of
 * a call the budget ends ({@link #sinceAnsweredNanos}).
 *
 * <p>Origins (scheme, host, port) are kept in a fixed table of slots by hash, with no keys: two
 * origins that share a slot share its streak and share, which is more careful for both (a retry of
 * either counts on it) and costs one when the other answers (a success ends it). A fixed table
 * cannot thrash: thousands of failing origins in turn each find what their last failures left. The
 * table is made at the first failure; a budget none of whose calls failed costs nothing.
 *
 * <p>Every method takes the time as an argument, so the same code runs on a real clock and in the
 * fleet simulator. Thread-safe: each slot has its own lock, and a success while nothing failed
 * within {@code memoryNanos} takes none.
 */
public final class OriginStreaks {

  private static final long MILLIONTH = 1_000_000L;

  /** No answer of an origin within the memory ({@link #sinceAnsweredNanos}). */
  public static final long NO_ANSWER = -1L;

  /** Where an origin's streak stands for a retry ({@link #count}). */
  public enum Standing {
    /** Within one failing call's worth since the origin last answered: the retry may go. */
    ROOM,
    /** The count is spent and the origin began failing recently: the retry is not sent now. */
    FULL,
    /**
     * The count is spent and the origin has failed everything for longer than the caller's limit:
     * the call ends at once.
     */
    DOWN
  }

  private final int mask; // slots - 1
  private final long memoryNanos;
  private final long commonShareMillionths;
  private final int shareWindow;

  private volatile @Nullable AtomicReferenceArray<Slot> slots; // made at the first failure
  private volatile long latestFailureNanos; // valid once slots is made

  /**
   * @param slots the size of the table, a power of two ≥ 2
   * @param memoryNanos how long after an origin's last failure its slot is forgotten, > 0
   * @param commonShare the failure share at or above which failures are common, in (0, 1]
   * @param shareWindow about how many answers the failure share averages over, ≥ 1
   */
  public OriginStreaks(int slots, long memoryNanos, double commonShare, int shareWindow) {
    if (slots < 2 || Integer.bitCount(slots) != 1) {
      // Two at least: a path's slot is never its origin's (pathHash)
      throw new IllegalArgumentException("slots not a power of two, 2 or more: " + slots);
    }
    if (memoryNanos <= 0) throw new IllegalArgumentException("memoryNanos <= 0: " + memoryNanos);
    if (!(commonShare > 0 && commonShare <= 1)) {
      throw new IllegalArgumentException("commonShare not in (0, 1]: " + commonShare);
    }
    if (shareWindow < 1) throw new IllegalArgumentException("shareWindow < 1: " + shareWindow);
    this.mask = slots - 1;
    this.memoryNanos = memoryNanos;
    this.commonShareMillionths = Math.round(commonShare * MILLIONTH);
    this.shareWindow = shareWindow;
  }

  /** One slot's state, guarded by the slot. */
  private static final class Slot {
    boolean open; // a failure since the origin last answered a call
    long startedAtNanos; // when open: the first of those failures
    long halves; // when open: the retries counted since, in halves
    long lastFailureNanos;
    long shareMillionths; // failures among recent answers
    // The latest answer noted (succeeded) since the slot was last forgotten, and when. A success is
    // told while any failure is within the memory, and the slot is forgotten once its own failures
    // are further apart than the memory: so while it is kept, no later answer went untold.
    boolean answered;
    long answeredAtNanos;

    /** Forgets what is older than {@code memoryNanos}: the origin has not failed since. */
    void refresh(long nowNanos, long memoryNanos) {
      if (nowNanos - lastFailureNanos > memoryNanos) {
        open = false;
        halves = 0;
        shareMillionths = 0;
        answered = false; // a later answer may have gone untold
      }
    }

    void failed(long nowNanos, long memoryNanos) {
      refresh(nowNanos, memoryNanos);
      if (!open) {
        open = true;
        startedAtNanos = nowNanos;
        halves = 0;
      }
      lastFailureNanos = nowNanos;
    }

    void ended() {
      open = false;
      halves = 0;
    }

    Standing standing(
        long add, long limitHalves, long downAfterNanos, long nowNanos, long memoryNanos) {
      refresh(nowNanos, memoryNanos);
      // Not open: it answered since; the retry will begin a new streak.
      if (!open || halves + add <= limitHalves) return Standing.ROOM;
      return nowNanos - startedAtNanos > downAfterNanos ? Standing.DOWN : Standing.FULL;
    }

    void take(long add, long nowNanos) {
      if (!open) { // a new streak, begun by this retry
        open = true;
        startedAtNanos = nowNanos;
        lastFailureNanos = nowNanos;
        halves = 0;
      }
      halves += add;
    }
  }

  /**
   * An attempt to {@code url} failed: the streaks of its origin and of its path open, and its
   * origin's failure share grows.
   */
  public void failed(HttpUrl url, long nowNanos) {
    int origin = originHash(url);
    Slot o = madeSlot(origin);
    synchronized (o) {
      o.failed(nowNanos, memoryNanos);
      o.shareMillionths += (MILLIONTH - o.shareMillionths) / shareWindow;
    }
    Slot p = madeSlot(pathHash(origin, url));
    synchronized (p) {
      p.failed(nowNanos, memoryNanos);
    }
    noteFailure(nowNanos);
  }

  // The latest failure's time only moves on (two threads failing at once may report out of order):
  // while it is within the memory, a success is told.
  private void noteFailure(long nowNanos) {
    if (nowNanos - latestFailureNanos <= 0) return; // no newer: no lock
    synchronized (this) {
      if (nowNanos - latestFailureNanos > 0) latestFailureNanos = nowNanos;
    }
  }

  /** Whether an attempt of this table's budget has ever failed (read without a lock). */
  public boolean everFailed() {
    return slots != null;
  }

  /**
   * Whether some origin may have a streak or a failure share now: false while nothing failed within
   * the memory, when a success need not be told ({@link #succeeded}).
   */
  public boolean anyFailureWithin(long nowNanos) {
    return slots != null && nowNanos - latestFailureNanos <= memoryNanos;
  }

  /**
   * A call to {@code url} was answered by a server that works: the streaks of its origin and of its
   * path end, so retries that waited on them may go, and its origin's failure share falls.
   */
  public void succeeded(HttpUrl url, long nowNanos) {
    if (!anyFailureWithin(nowNanos)) return;
    int origin = originHash(url);
    Slot o = slot(origin);
    if (o == null) return; // nothing failed there: neither has a streak
    synchronized (o) {
      o.refresh(nowNanos, memoryNanos);
      o.ended();
      o.shareMillionths -= o.shareMillionths / shareWindow;
      o.answered = true;
      o.answeredAtNanos = nowNanos;
    }
    Slot p = slot(pathHash(origin, url));
    if (p == null) return;
    synchronized (p) {
      p.ended();
    }
  }

  /**
   * How long before {@code nowNanos} {@code url}'s origin last answered a call ({@link
   * #succeeded}), in nanoseconds, ≥ 0; {@link #NO_ANSWER} if this table does not know: answers are
   * noted only from the origin's first failure on (a success while nothing failed is not told), and
   * forgotten once the origin has not failed for {@code memoryNanos}, when a later one may have
   * gone unnoted. An origin that shares its slot shares this too.
   */
  public long sinceAnsweredNanos(HttpUrl url, long nowNanos) {
    Slot s = slot(originHash(url));
    if (s == null) return NO_ANSWER;
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      return s.answered ? Math.max(0, nowNanos - s.answeredAtNanos) : NO_ANSWER;
    }
  }

  /** Whether {@code url}'s origin has failed since it last answered a call (within the memory). */
  public boolean isOpen(HttpUrl url, long nowNanos) {
    if (!anyFailureWithin(nowNanos)) return false;
    Slot s = slot(originHash(url));
    if (s == null) return false;
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      return s.open;
    }
  }

  /** Whether failures are common among the recent answers of {@code url}'s origin. */
  public boolean failuresAreCommon(HttpUrl url, long nowNanos) {
    if (!anyFailureWithin(nowNanos)) return false;
    Slot s = slot(originHash(url));
    if (s == null) return false;
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      return s.shareMillionths >= commonShareMillionths;
    }
  }

  /**
   * Where a retry worth {@code halves} stands on the streaks of {@code url}'s origin and of its
   * path, counted on both if {@code take} and both have room: {@link Standing#ROOM} while each
   * streak's count plus {@code halves} stays within {@code limitHalves} (or it answered since, or
   * {@code halves} is 0); else {@link Standing#DOWN} if a full streak began more than {@code
   * downAfterNanos} ago, {@link Standing#FULL} if not. The origin's streak bounds a failure that
   * hits many calls (a blip on every path); the path's, a dead path beside live ones, whose
   * successes end the origin's.
   */
  public Standing count(
      HttpUrl url,
      long halves,
      long limitHalves,
      long downAfterNanos,
      long nowNanos,
      boolean take) {
    if (halves == 0) return Standing.ROOM;
    int origin = originHash(url);
    Slot o = madeSlot(origin);
    Slot p = madeSlot(pathHash(origin, url));
    Standing byOrigin;
    synchronized (o) {
      byOrigin = o.standing(halves, limitHalves, downAfterNanos, nowNanos, memoryNanos);
    }
    Standing byPath;
    synchronized (p) {
      byPath = p.standing(halves, limitHalves, downAfterNanos, nowNanos, memoryNanos);
    }
    if (byOrigin != Standing.ROOM || byPath != Standing.ROOM) {
      return byOrigin == Standing.DOWN || byPath == Standing.DOWN ? Standing.DOWN : Standing.FULL;
    }
    if (take) {
      // Two locks, one after the other: two calls may each count the last half, about.
      synchronized (o) {
        o.take(halves, nowNanos);
      }
      synchronized (p) {
        p.take(halves, nowNanos);
      }
      noteFailure(nowNanos); // a streak this retry opened must hear the success that ends it
    }
    return Standing.ROOM;
  }

  private @Nullable Slot slot(int hash) {
    AtomicReferenceArray<Slot> table = slots;
    return table == null ? null : table.get(index(hash));
  }

  private Slot madeSlot(int hash) {
    AtomicReferenceArray<Slot> table = slots;
    if (table == null) table = table();
    int i = index(hash);
    Slot s = table.get(i);
    if (s != null) return s;
    Slot made = new Slot();
    if (table.compareAndSet(i, null, made)) return made;
    Slot other = table.get(i); // another thread made it first; slots are never removed
    return other != null ? other : made;
  }

  private synchronized AtomicReferenceArray<Slot> table() {
    AtomicReferenceArray<Slot> table = slots;
    if (table == null) slots = table = new AtomicReferenceArray<>(mask + 1);
    return table;
  }

  private int index(int hash) {
    return (hash ^ (hash >>> 16)) & mask;
  }

  // Hashes from the URL's parts, with no string made: a success path allocates nothing.
  private static int originHash(HttpUrl url) {
    return (url.scheme().hashCode() * 31 + url.host().hashCode()) * 31 + url.port();
  }

  // Never in the origin's own slot: counted on one slot twice, a path's retries would get half
  // the count (found by a review: 1 path in 4096).
  private int pathHash(int originHash, HttpUrl url) {
    List<String> segments = url.pathSegments();
    int h = originHash * 0x9E3779B1 + 1;
    for (int i = 0; i < segments.size(); i++) h = 31 * h + segments.get(i).hashCode();
    h *= 0x85EBCA6B;
    return index(h) == index(originHash) ? h ^ 1 : h; // bit 0 of h is bit 0 of its index
  }
}
