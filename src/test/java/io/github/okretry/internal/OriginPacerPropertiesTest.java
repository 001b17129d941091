package io.github.okretry.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The pacer's invariants (docs/semantics.md, "Pacing a crowd") checked on fake time over random
 * seeded histories: crowds of 1 to 1 000 calls separated by random gaps, against a strict limiter
 * of a random rate, refusing with short and long {@code Retry-After}s, with calls canceled while
 * they wait for or hold a turn.
 */
@Tag("unit")
public class OriginPacerPropertiesTest {

  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;
  static final long ABSENT = RetryAfter.ABSENT;
  static final int[] CROWDS = {1, 1, 2, 3, 5, 10, 40, 100, 300, 1_000};
  static final long[] LIMITER_GAPS = {10 * MS, 50 * MS, 200 * MS, 400 * MS, 1 * S};

  /** One history: every reserve, report and answer checked as it happens. */
  static final class History {
    final OriginPacer pacer = new OriginPacer();
    final long limiterGap;
    final boolean paced;
    long lastAdmitted = Long.MIN_VALUE / 2;
    // event: {time, kind, caller, slot}; kinds below
    final PriorityQueue<long[]> events =
        new PriorityQueue<>(
            (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[4], b[4]));
    long sequence;
    final List<long[]> calls = new ArrayList<>(); // {latest, ownLatest, waited, canceled(0/1)}
    final List<SplittableRandom> callerDraws = new ArrayList<>(); // so paced and unpaced draw alike
    final Set<Integer> holding = new HashSet<>(); // calls holding an unsent turn
    boolean anyUsed;
    long lastUsed;
    final ArrayDeque<long[]> refusals = new ArrayDeque<>(); // {time, min(Retry-After, waited)}
    final List<Long> retryArrivals = new ArrayList<>();
    int checks;

    static final int ARRIVE = 0;
    static final int WAKE = 1;
    static final int CANCEL = 2;

    History(long limiterGap, boolean paced) {
      this.limiterGap = limiterGap;
      this.paced = paced;
    }

    void add(long at, int kind, int caller, long slot) {
      events.add(new long[] {at, kind, caller, slot, sequence++});
    }

    /** A crowd of {@code n} first attempts within 30 ms of {@code start}; each may be canceled. */
    void crowd(long start, int n, double cancelShare, SplittableRandom draws) {
      for (int i = 0; i < n; i++) {
        int caller = calls.size();
        calls.add(new long[] {0, 0, 0, draws.nextDouble() < cancelShare ? 1 : 0});
        callerDraws.add(new SplittableRandom(draws.nextLong()));
        add(start + draws.nextLong(30 * MS), ARRIVE, caller, -1);
      }
    }

    void run() {
      while (!events.isEmpty()) {
        long[] e = events.poll();
        long t = e[0];
        int caller = (int) e[2];
        long[] call = calls.get(caller);
        switch ((int) e[1]) {
          case ARRIVE -> arrive(t, caller, e[3], call);
          case WAKE -> wake(t, caller, call);
          case CANCEL -> {
            if (holding.remove(caller)) pacer.givenBack(e[3], t);
          }
          default -> throw new AssertionError();
        }
      }
    }

    private void arrive(long t, int caller, long slot, long[] call) {
      if (slot >= 0) {
        if (!holding.remove(caller)) return; // canceled before it left
        pacer.used(slot, t);
        if (!anyUsed || slot > lastUsed) lastUsed = slot;
        anyUsed = true;
      }
      if (call[2] != 0) retryArrivals.add(t);
      SplittableRandom random = callerDraws.get(caller);
      boolean admitted = t - lastAdmitted >= limiterGap;
      if (admitted) lastAdmitted = t;
      long answered = t + (1 + random.nextInt(3)) * MS;
      // Mostly short refusals, sometimes a long, quota-like one.
      long retryAfter =
          admitted
              ? ABSENT
              : random.nextInt(10) == 0
                  ? (10 + random.nextInt(21)) * S
                  : (1 + random.nextInt(2)) * S;
      if (slot >= 0) {
        pacer.released(slot, admitted, retryAfter, call[2], answered);
        if (!admitted) refusals.add(new long[] {answered, Math.min(retryAfter, call[2])});
        checkLearned(answered);
      }
      if (admitted || retryAfter > 60 * S) return;
      long spread = random.nextLong(retryAfter / 2 + 1);
      long latest = Math.min(5 * S, retryAfter + 10 * S);
      call[0] = answered + latest;
      call[1] = answered + Math.min(latest, retryAfter + retryAfter / 2);
      call[2] = retryAfter;
      add(answered + retryAfter + spread, WAKE, caller, -1);
    }

    private void wake(long t, int caller, long[] call) {
      if (!paced) {
        add(t, ARRIVE, caller, -1);
        return;
      }
      boolean alone = holding.isEmpty();
      long interval = pacer.intervalNanos(t);
      long slot = pacer.reserve(t, call[0], call[1]);
      boolean taken = slot <= Math.max(t, call[0]);
      if (alone) {
        checks++;
        // A retry with no other waiter is never released later than its own Retry-After plus
        // the most its spread could add, and always gets its turn.
        assertThat(taken).as("alone at %d: a turn", t).isTrue();
        assertThat(slot)
            .as("alone at %d: within its own spread", t)
            .isLessThanOrEqualTo(Math.max(t, call[1]));
        // Turns given back delay nobody: the turn counts from the last one used, or now.
        long fromUsed = anyUsed ? Math.max(t, lastUsed + interval) : t;
        assertThat(slot).as("alone at %d: no ghost turns ahead", t).isLessThanOrEqualTo(fromUsed);
      }
      if (!taken) return; // gives up with the origin's answer
      assertThat(slot).isGreaterThanOrEqualTo(t);
      holding.add(caller);
      if (call[3] == 1) {
        // Canceled while it waits for its turn, or just as it comes.
        add(t + callerDraws.get(caller).nextLong(slot - t + 1), CANCEL, caller, slot);
      }
      add(slot, ARRIVE, caller, slot);
    }

    /**
     * A learned interval comes from a refusal within the memory and is at most the shorter
     * Retry-After of such a refusal (the one the origin gave, the one the call had waited).
     */
    private void checkLearned(long now) {
      while (!refusals.isEmpty() && now - refusals.peekFirst()[0] >= Tuning.PACING_MEMORY_NANOS) {
        refusals.pollFirst();
      }
      long learned = pacer.learnedIntervalNanos(now);
      if (learned == 0) return;
      long bound = refusals.stream().mapToLong(r -> r[1]).max().orElse(0);
      assertThat(learned).as("learned at %d", now).isLessThanOrEqualTo(bound);
    }
  }

  @Test
  void randomHistoriesKeepEveryInvariantOfALoneCallAGivenBackTurnAndALearnedInterval() {
    int checks = 0;
    for (long seed = 1; seed <= 60; seed++) {
      SplittableRandom draws = new SplittableRandom(seed);
      History h = new History(LIMITER_GAPS[draws.nextInt(LIMITER_GAPS.length)], true);
      long t = 0;
      for (int crowd = 0; crowd < 6; crowd++) {
        int n = CROWDS[draws.nextInt(CROWDS.length)];
        h.crowd(t, n, draws.nextInt(3) == 0 ? 0.9 : 0.1, draws);
        t += draws.nextLong(60 * S);
      }
      h.run();
      checks += h.checks;
    }
    assertThat(checks).as("calls that asked alone, checked").isGreaterThan(100);
  }

  /** The densest 100 ms of the retries of one crowd, paced and unpaced, on the same draws. */
  static int[] densestRetries(long seed, int n, long limiterGap) {
    int[] densest = new int[2];
    for (int paced = 0; paced < 2; paced++) {
      History h = new History(limiterGap, paced == 1);
      h.crowd(0, n, 0, new SplittableRandom(seed));
      h.run();
      densest[paced] = densest(h.retryArrivals, 100 * MS);
    }
    return densest;
  }

  /** The most of {@code times} within any {@code windowNanos}; also used by the scenario tests. */
  public static int densest(List<Long> times, long windowNanos) {
    long[] t = times.stream().mapToLong(Long::longValue).sorted().toArray();
    int best = 0;
    for (int i = 0, j = 0; i < t.length; i++) {
      while (t[i] - t[j] >= windowNanos) j++;
      best = Math.max(best, i - j + 1);
    }
    return best;
  }

  @Test
  void aPacedCrowdIsNeverDenserThanTheSameCrowdUnpaced() {
    for (long seed = 1; seed <= 40; seed++) {
      SplittableRandom draws = new SplittableRandom(seed);
      int n = CROWDS[draws.nextInt(CROWDS.length)];
      long gap = LIMITER_GAPS[draws.nextInt(LIMITER_GAPS.length)];
      int[] d = densestRetries(seed, n, gap);
      assertThat(d[1])
          .as("seed %d, %d calls, limiter gap %d ms: paced vs unpaced", seed, n, gap / MS)
          .isLessThanOrEqualTo(d[0]);
    }
  }
}
