package io.github.okretry.internal;

import java.util.concurrent.atomic.AtomicReferenceArray;
import okhttp3.HttpUrl;
import org.jspecify.annotations.Nullable;

/**
 * What a retry budget knows of each origin's health: its <i>streak</i> (the retries counted since
 * it last answered a call, in halves, and when its failures began) and its <i>failure share</i>
 * (the share of its recent answers that were failures). Both are per origin, so one origin's outage
 * says nothing of another's, and both are forgotten once the origin has not failed for {@code
 * memoryNanos}.
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
   * @param slots the size of the table, a power of two ≥ 1
   * @param memoryNanos how long after an origin's last failure its slot is forgotten, > 0
   * @param commonShare the failure share at or above which failures are common, in (0, 1]
   * @param shareWindow about how many answers the failure share averages over, ≥ 1
   */
  public OriginStreaks(int slots, long memoryNanos, double commonShare, int shareWindow) {
    if (slots < 1 || Integer.bitCount(slots) != 1) {
      throw new IllegalArgumentException("slots not a power of two: " + slots);
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

    /** Forgets what is older than {@code memoryNanos}: the origin has not failed since. */
    void refresh(long nowNanos, long memoryNanos) {
      if (nowNanos - lastFailureNanos > memoryNanos) {
        open = false;
        halves = 0;
        shareMillionths = 0;
      }
    }
  }

  /** An attempt to {@code url}'s origin failed: its streak opens, and its failure share grows. */
  public void failed(HttpUrl url, long nowNanos) {
    Slot s = madeSlot(url);
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      if (!s.open) {
        s.open = true;
        s.startedAtNanos = nowNanos;
        s.halves = 0;
      }
      s.lastFailureNanos = nowNanos;
      s.shareMillionths += (MILLIONTH - s.shareMillionths) / shareWindow;
    }
    latestFailureNanos = nowNanos;
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
   * A call to {@code url}'s origin was answered by a server that works: its streak ends, so a retry
   * that waited on it may go, and its failure share falls.
   */
  public void succeeded(HttpUrl url, long nowNanos) {
    if (!anyFailureWithin(nowNanos)) return;
    Slot s = slot(url);
    if (s == null) return;
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      s.open = false;
      s.halves = 0;
      s.shareMillionths -= s.shareMillionths / shareWindow;
    }
  }

  /** Whether {@code url}'s origin has failed since it last answered a call (within the memory). */
  public boolean isOpen(HttpUrl url, long nowNanos) {
    if (!anyFailureWithin(nowNanos)) return false;
    Slot s = slot(url);
    if (s == null) return false;
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      return s.open;
    }
  }

  /** Whether failures are common among the recent answers of {@code url}'s origin. */
  public boolean failuresAreCommon(HttpUrl url, long nowNanos) {
    if (!anyFailureWithin(nowNanos)) return false;
    Slot s = slot(url);
    if (s == null) return false;
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      return s.shareMillionths >= commonShareMillionths;
    }
  }

  /**
   * Where a retry worth {@code halves} stands on its origin's streak, counted on it if there is
   * room and {@code take}: {@link Standing#ROOM} while the streak's count plus {@code halves} stays
   * within {@code limitHalves} (or the origin answered since, or {@code halves} is 0); else {@link
   * Standing#DOWN} if the streak began more than {@code downAfterNanos} ago, {@link Standing#FULL}
   * if not.
   */
  public Standing count(
      HttpUrl url,
      long halves,
      long limitHalves,
      long downAfterNanos,
      long nowNanos,
      boolean take) {
    if (halves == 0) return Standing.ROOM;
    Slot s = madeSlot(url);
    synchronized (s) {
      s.refresh(nowNanos, memoryNanos);
      if (!s.open) { // the origin answered since: a new streak, begun by this retry
        if (!take) return Standing.ROOM;
        s.open = true;
        s.startedAtNanos = nowNanos;
        s.lastFailureNanos = nowNanos;
        s.halves = 0;
      }
      if (s.halves + halves <= limitHalves) {
        if (take) s.halves += halves;
        return Standing.ROOM;
      }
      return nowNanos - s.startedAtNanos > downAfterNanos ? Standing.DOWN : Standing.FULL;
    }
  }

  private @Nullable Slot slot(HttpUrl url) {
    AtomicReferenceArray<Slot> table = slots;
    return table == null ? null : table.get(index(url));
  }

  private Slot madeSlot(HttpUrl url) {
    AtomicReferenceArray<Slot> table = slots;
    if (table == null) table = table();
    int i = index(url);
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

  // The origin's hash from its parts, with no string made: a success path allocates nothing.
  private int index(HttpUrl url) {
    int h = (url.scheme().hashCode() * 31 + url.host().hashCode()) * 31 + url.port();
    return (h ^ (h >>> 16)) & mask;
  }
}
