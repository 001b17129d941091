package io.github.okretry.internal;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Paces one client's calls to one origin by the quotas the origin publishes ({@link Quota}), so a
 * call whose quota is spent waits until more arrives instead of being sent to be refused. Pure:
 * every method takes the time; not thread-safe ({@link OriginGate} guards it with its lock). The
 * rules, each with its why, are docs/semantics.md's table "Pacing by a published quota":
 *
 * <ul>
 *   <li><b>Keys</b>: one state per (policy name or bucket id, partition key). A bucket the server
 *       names covers many paths, so a path not heard from goes by its nearest known path's bucket
 *       ({@link #bucketFor}); a partition may be anything, so a {@code pk} gates only the path that
 *       last reported it.
 *   <li><b>Spent</b>: available = the server's last {@code remaining} − this client's calls in
 *       flight (as nyxx), also those that left uncounted before the quota was first heard of, while
 *       only their answers have told the window's figures. At 0 a call waits until the reset plus a
 *       per-window offset in [0, one quota interval], so processes told the same reset do not
 *       return in the same instant.
 *   <li><b>After the reset</b> one call at a time until an answer tells the new remaining, and <b>a
 *       fresh key</b> grows its calls in flight by one per answer (TCP's slow start): a crowd is
 *       released as the origin's answers allow, not all at once.
 *   <li><b>Shared</b>: a fall faster than this client's sends, or a refusal while some was left,
 *       means others draw on the quota: for {@link Tuning#PACING_MEMORY_NANOS} the key spreads what
 *       is left over the time to its reset, so the processes settle near its refill rate.
 *   <li><b>Probe</b> (opt-in): an origin met for the first time sends one call and holds the rest
 *       until it answers; an answer without a quota frees the origin.
 * </ul>
 *
 * <p>A refusal's {@code Retry-After} becomes the key's reset (the draft's MUST). A wait longer than
 * the caller can afford is not imposed: the call goes and the server decides.
 */
public final class QuotaPacer {

  private static final long MILLI = 1_000_000L;

  /** How often a call held for an answer (a probe, a stale window, slow start) asks again. */
  static final long ANSWER_POLL_NANOS = 5 * MILLI;

  /**
   * A quota with no interval of its own (no {@code q} and {@code w}) is re-tried this often when
   * spent.
   */
  static final long DEFAULT_INTERVAL_NANOS = 50 * MILLI;

  /** Answers that may overtake one another on the way back, beyond what is counted in flight. */
  static final int REORDER_SLACK = 2;

  /** Paths remembered per named bucket, to tell which bucket a path not heard from draws on. */
  static final int PATHS_PER_BUCKET = 4;

  /**
   * A longer path is not remembered (it goes by the nearest known one): bounds memory and each
   * comparison.
   */
  static final int MAX_PATH_CHARS = 256;

  /** Leading segments in common with a bucket that kept no path: fewer than any kept path's. */
  private static final int NO_PATH_KEPT = -1;

  /** One key's state. Sends are numbered from 1: a number 0 is a send that was not counted. */
  private static final class Key {
    final @Nullable String policy;
    final @Nullable String partitionKey;
    final boolean byPath; // a partition key: gates only calls to `path`
    final boolean bucket; // a bucket the server names: gates the paths bucketFor gives it
    @Nullable String path; // byPath: the path that last reported it
    final String[] paths; // bucket: the last paths that reported it, most recent first
    int pathCount;
    boolean heard; // some answer reported it
    long remaining;
    long infoAtNanos;
    boolean hasReset;
    long resetAtNanos;
    long intervalNanos = DEFAULT_INTERVAL_NANOS; // one quota unit's share of the window
    long offsetNanos; // this process's offset past the current reset
    long lastSeq; // the latest send whose answer reported this key
    long baseSeq; // the send whose answer opened the current window's figures
    long baseRemaining;
    int baseInFlight; // this client's sends in flight then
    long sharedUntilNanos;
    boolean shared;

    Key(@Nullable String policy, @Nullable String partitionKey, boolean byPath, boolean bucket) {
      this.policy = policy;
      this.partitionKey = partitionKey;
      this.byPath = byPath;
      this.bucket = bucket;
      this.paths = new String[bucket ? PATHS_PER_BUCKET : 0];
    }

    boolean current(long nowNanos) {
      return !hasReset || nowNanos - resetAtNanos < 0;
    }

    boolean shared(long nowNanos) {
      return shared && nowNanos - sharedUntilNanos < 0;
    }
  }

  private final boolean probe;
  private final Key[] keys = new Key[QuotaHeaders.MAX_QUOTAS];
  private int keyCount;
  private boolean probing; // probe mode: no answer from the origin yet
  private int inFlight; // this client's admitted sends not yet answered
  private long sends; // admitted sends: the number of the latest
  private int answers; // answers that carried a quota: the slow start's window
  private long lastSendNanos;
  private long lastActivityNanos;

  /**
   * @param probe whether to hold a crowd's calls to this origin until its first answer
   */
  public QuotaPacer(boolean probe, long nowNanos) {
    this.probe = probe;
    this.probing = probe;
    this.lastActivityNanos = nowNanos;
  }

  /**
   * Asks to send a call to {@code path} at {@code nowNanos}: 0 means go, counted in flight as send
   * number {@link #lastSend()} until {@link #answered} or {@link #failed} hears how it ended; more
   * means wait that many nanoseconds, then ask again.
   *
   * @param maxWaitNanos the longest this call can wait; a longer wait is not imposed
   */
  public long admit(long nowNanos, String path, long maxWaitNanos) {
    return admit(nowNanos, path, maxWaitNanos, 0);
  }

  /**
   * {@link #admit(long, String, long)}, with {@code uncountedInFlight} sends to the origin in
   * flight that this pacer did not count (they left before it knew the origin): while a key's
   * figures come only from such sends' answers, what it says is left is spent by them too, so a
   * crowd that all left before the first answer does not send more on top of it to be refused.
   */
  public long admit(long nowNanos, String path, long maxWaitNanos, int uncountedInFlight) {
    lastActivityNanos = nowNanos;
    long notBefore = probing && inFlight > 0 ? nowNanos + ANSWER_POLL_NANOS : nowNanos;
    boolean anyShared = false;
    boolean anyKey = false;
    Key bucket = bucketFor(path);
    for (int i = 0; i < keyCount; i++) {
      Key k = keys[i];
      if ((k.byPath && !path.equals(k.path)) || (k.bucket && k != bucket)) continue;
      anyKey = true;
      long t = notBefore(k, nowNanos, uncountedInFlight);
      if (t - notBefore > 0) notBefore = t;
      anyShared |= k.shared(nowNanos) && k.current(nowNanos);
    }
    if (notBefore == nowNanos && anyKey && !anyShared && inFlight >= 1 + answers) {
      // Slow start: more once answers show the quota holds
      notBefore = nowNanos + ANSWER_POLL_NANOS;
    }
    long wait = notBefore - nowNanos;
    if (wait > 0 && wait <= maxWaitNanos) return wait;
    inFlight++;
    sends++;
    lastSendNanos = nowNanos;
    return 0;
  }

  /** The number of the latest send {@link #admit} let go, from 1. */
  public long lastSend() {
    return sends;
  }

  private long notBefore(Key k, long nowNanos, int uncountedInFlight) {
    long available = k.remaining - inFlight;
    // No counted send has answered in this window: its figures may not include the sends that
    // left uncounted (once one has, the sends before it reached the server before it, as a rule).
    if (k.baseSeq == 0) available -= uncountedInFlight;
    if (k.hasReset && nowNanos - k.resetAtNanos >= 0) {
      // The window the figures describe is over: one call at a time until an answer says more.
      long releaseAt = k.resetAtNanos + k.offsetNanos;
      if (nowNanos - releaseAt < 0) return releaseAt;
      return inFlight == 0 ? nowNanos : nowNanos + ANSWER_POLL_NANOS;
    }
    if (available <= 0) {
      if (k.hasReset) return k.resetAtNanos + k.offsetNanos;
      // Spent, and the server did not say when more comes: one call per interval finds out.
      long next = k.infoAtNanos + k.intervalNanos;
      if (inFlight > 0) return Math.max(nowNanos + ANSWER_POLL_NANOS, next);
      return nowNanos - next >= 0 ? nowNanos : next;
    }
    if (k.shared(nowNanos) && sends > 0) {
      long horizon =
          k.hasReset ? k.resetAtNanos - nowNanos : k.intervalNanos * Math.max(1, k.remaining);
      return lastSendNanos + horizon / available;
    }
    return nowNanos;
  }

  /**
   * The origin answered send {@code seq} (0: a send {@link #admit} did not count, such as the first
   * of a stateless call); {@code quotas} is what the answer published (null: nothing); {@code
   * refused} whether it turned the call away, with its {@code Retry-After} or {@link
   * RetryAfter#ABSENT}.
   */
  public void answered(
      long seq,
      @Nullable String path,
      @Nullable List<Quota> quotas,
      boolean refused,
      long retryAfterNanos,
      long nowNanos,
      RandomSource random) {
    failed(seq, nowNanos); // no longer in flight
    if (quotas == null) {
      if (seq > 0) {
        probing = false; // the origin answered without a quota: nothing to pace
        dropStale(nowNanos); // nor any longer for a window that is over
      }
      return;
    }
    probing = false;
    answers = Math.min(answers + 1, 1 << 20);
    for (int i = 0; i < quotas.size(); i++) {
      learn(quotas.get(i), seq, path, refused, retryAfterNanos, nowNanos, random);
    }
  }

  /**
   * Send {@code seq} (0: not counted) ended without an answer (an exception): it is no longer in
   * flight.
   */
  public void failed(long seq, long nowNanos) {
    lastActivityNanos = nowNanos;
    if (seq > 0 && inFlight > 0) inFlight--;
  }

  private void learn(
      Quota q,
      long seq,
      @Nullable String path,
      boolean refused,
      long retryAfterNanos,
      long nowNanos,
      RandomSource random) {
    boolean byPath = q.partitionKey() != null;
    boolean bucket =
        !byPath
            && q.policy() != null
            && (q.form() == Quota.Form.X_RATELIMIT || q.form() == Quota.Form.X_RATE_LIMIT);
    Key k = find(q, byPath, bucket);
    if (byPath) k.path = path;
    if (bucket && path != null) reportedBy(k, path);
    boolean known = k.heard;
    k.heard = true;
    long remaining = q.remaining();
    boolean hasReset = q.hasReset();
    long resetAt = q.resetAtNanos();
    if (refused && retryAfterNanos != RetryAfter.ABSENT) {
      // Retry-After takes precedence (the draft's MUST): it is when this quota returns.
      remaining = 0;
      hasReset = true;
      resetAt = nowNanos + retryAfterNanos;
    }
    if (q.hasLimit() && q.limit() > 0 && q.windowNanos() > 0) {
      // At least 1 ms apart: a quota of millions per second is no reason to pace finer than that.
      k.intervalNanos = Math.max(MILLI, q.windowNanos() / q.limit());
    }
    boolean current = known && k.current(nowNanos);
    // Others draw on it: a refusal while it said some was left, or a fall faster than our sends.
    if (current && refused && k.remaining - inFlight > 0) markShared(k, nowNanos);
    // Every send since the window's first answer, and every one then in flight, may have reached
    // the server in between: only a fall beyond all of them, and a little, is someone else's.
    if (current
        && k.baseSeq > 0
        && seq > k.baseSeq
        && k.baseRemaining - remaining > (sends - k.baseSeq) + k.baseInFlight + REORDER_SLACK) {
      markShared(k, nowNanos);
    }
    if (current && k.baseSeq == 0 && seq > 0) {
      base(k, seq, remaining); // a window first heard of uncounted
    }
    // A key's first counted answer short by more than every send this client made: others drew
    // first.
    if (!known && seq > 0 && q.hasLimit() && q.limit() - remaining > sends) markShared(k, nowNanos);
    boolean newer = seq > k.lastSeq;
    if (newer) k.lastSeq = seq;
    if (!current) {
      // The first figures, or the window the old ones described is over: take these whole.
      base(k, seq, remaining);
      k.remaining = remaining;
      k.infoAtNanos = nowNanos;
      k.hasReset = hasReset;
      k.resetAtNanos = resetAt;
      k.offsetNanos = Backoff.uniform(random, 0, k.intervalNanos);
    } else if (remaining <= k.remaining) {
      k.remaining = remaining;
      k.infoAtNanos = nowNanos;
      // Within one window its first reset stands (an integer t rounds; each later answer would
      // push it on), except for a spent quota, which never goes before the latest it was told.
      if (hasReset && (!k.hasReset || (remaining == 0 && resetAt - k.resetAtNanos > 0))) {
        if (!k.hasReset) k.offsetNanos = Backoff.uniform(random, 0, k.intervalNanos);
        k.hasReset = true;
        k.resetAtNanos = resetAt;
      }
    } else if (newer
        && k.baseSeq > 0
        && remaining > k.baseRemaining + k.baseInFlight + REORDER_SLACK) {
      // Above anything this window showed, even with this client's sends racing: more quota
      // arrived (a refill, a window turned early). Any other rise is an overtaken answer or a
      // loose count (3, 2, 3): the lower count stands until the window is over.
      base(k, seq, remaining);
      k.remaining = remaining;
      k.infoAtNanos = nowNanos;
      if (hasReset) {
        k.hasReset = true;
        k.resetAtNanos = resetAt;
        k.offsetNanos = Backoff.uniform(random, 0, k.intervalNanos);
      }
    }
  }

  // The first answer of a window: what later answers' falls are measured from.
  private void base(Key k, long seq, long remaining) {
    k.baseSeq = seq;
    k.baseRemaining = remaining;
    k.baseInFlight = inFlight;
  }

  // Keys whose window is over gate nothing once the origin no longer publishes them. A key scoped
  // to a bucket or a partition stays until it lapses: another path's answer says nothing of it.
  private void dropStale(long nowNanos) {
    for (int i = keyCount - 1; i >= 0; i--) {
      Key k = keys[i];
      if (k.hasReset && nowNanos - k.resetAtNanos >= 0 && !k.byPath && !k.bucket) {
        keys[i] = keys[--keyCount];
      }
    }
  }

  private void markShared(Key k, long nowNanos) {
    k.shared = true;
    k.sharedUntilNanos = nowNanos + Tuning.PACING_MEMORY_NANOS;
  }

  /**
   * The named bucket a call to {@code path} draws on, or null if none: the one {@code path} last
   * reported; else the one whose paths share the most leading segments with it ({@link
   * #commonSegments}); on a tie the one more paths reported, then the one heard from last.
   */
  private @Nullable Key bucketFor(String path) {
    Key best = null;
    int bestSegments = 0;
    for (int i = 0; i < keyCount; i++) {
      Key k = keys[i];
      if (!k.bucket) continue;
      // A bucket whose paths were all too long to keep still counts, below one that kept any.
      int segments = NO_PATH_KEPT;
      for (int j = 0; j < k.pathCount; j++) {
        String known = k.paths[j];
        if (known.equals(path)) return k;
        segments = Math.max(segments, commonSegments(known, path));
      }
      if (best == null
          || segments > bestSegments
          || (segments == bestSegments
              && (k.pathCount > best.pathCount
                  || (k.pathCount == best.pathCount && k.infoAtNanos - best.infoAtNanos > 0)))) {
        best = k;
        bestSegments = segments;
      }
    }
    return best;
  }

  /**
   * {@code path} reported bucket {@code k}: remembered there first, and no longer under another
   * bucket.
   */
  private void reportedBy(Key k, String path) {
    if (path.length() > MAX_PATH_CHARS) return;
    for (int i = 0; i < keyCount; i++) {
      if (keys[i].bucket) forget(keys[i], path);
    }
    int n = Math.min(k.pathCount, PATHS_PER_BUCKET - 1);
    System.arraycopy(k.paths, 0, k.paths, 1, n);
    k.paths[0] = path;
    k.pathCount = n + 1;
  }

  // Clears the slot past the last path so the string can be collected; a slot below pathCount is
  // never null, which the array's type (String[], read at each slot below pathCount) cannot say.
  @SuppressWarnings("NullAway")
  private static void forget(Key k, String path) {
    for (int j = 0; j < k.pathCount; j++) {
      if (k.paths[j].equals(path)) {
        System.arraycopy(k.paths, j + 1, k.paths, j, k.pathCount - j - 1);
        k.paths[--k.pathCount] = null;
        return;
      }
    }
  }

  /**
   * Leading segments two different paths (each starting with {@code /}) have in common: 1 for
   * {@code /issues/3} and {@code /issues/7}, 0 for {@code /issues/3} and {@code /search/issues}.
   */
  static int commonSegments(String a, String b) {
    int n = Math.min(a.length(), b.length());
    int segments = 0;
    int i = 1;
    for (; i < n; i++) {
      char c = a.charAt(i);
      if (c != b.charAt(i)) return segments;
      if (c == '/') segments++;
    }
    // One is a prefix of the other: its last segment is whole if the other's ends there too.
    String longer = a.length() >= b.length() ? a : b;
    if (n > 1 && (i == longer.length() || longer.charAt(i) == '/')) segments++;
    return segments;
  }

  private Key find(Quota q, boolean byPath, boolean bucket) {
    for (int i = 0; i < keyCount; i++) {
      Key k = keys[i];
      // A name in two forms (an IETF policy, a bucket GitHub names) is two keys: a bucket alone
      // remembers the paths that report it.
      if (Objects.equals(k.policy, q.policy())
          && Objects.equals(k.partitionKey, q.partitionKey())
          && k.bucket == bucket) {
        return k;
      }
    }
    if (keyCount == keys.length) {
      // Full: forget the key heard from longest ago.
      int oldest = 0;
      for (int i = 1; i < keyCount; i++) {
        if (keys[i].infoAtNanos - keys[oldest].infoAtNanos < 0) oldest = i;
      }
      keys[oldest] = keys[--keyCount];
    }
    Key k = new Key(q.policy(), q.partitionKey(), byPath, bucket);
    keys[keyCount++] = k;
    return k;
  }

  /**
   * True if there is nothing to keep: every key lapsed (dropped on the way: {@link
   * Tuning#PACING_MEMORY_NANOS} past its reset, or past when it was heard), and no send is in
   * flight and no probe pending, or nothing happened for that long either (an answer that never
   * came must not keep the entry forever).
   */
  public boolean isIdle(long nowNanos) {
    for (int i = keyCount - 1; i >= 0; i--) {
      Key k = keys[i];
      long end = (k.hasReset ? k.resetAtNanos : k.infoAtNanos) + Tuning.PACING_MEMORY_NANOS;
      if (nowNanos - end >= 0 && !k.shared(nowNanos)) keys[i] = keys[--keyCount];
    }
    if (keyCount > 0) return false;
    return nowNanos - lastActivityNanos >= Tuning.PACING_MEMORY_NANOS
        || (inFlight == 0 && !probing && !probe);
  }

  /** Sends counted in flight (for tests). */
  int inFlight() {
    return inFlight;
  }

  /** Keys remembered (for tests). */
  int keys() {
    return keyCount;
  }
}
