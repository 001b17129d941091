package io.github.okretry.bench;

import io.github.okretry.internal.TimeSource;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import okhttp3.Request;

/**
 * Issue 5.4, follow-up: what it costs the client's CPU to have many calls waiting to retry at once,
 * as in an overload where every rejected call waits out a {@code Retry-After}. Compares okretry's
 * {@link TimeSource#SYSTEM} sleep (which wakes every {@link TimeSource#CANCEL_POLL_NANOS} to look
 * for a cancel) with one plain park per waiter.
 *
 * <p>Arguments: {@code [waiters] [seconds]}, default 1000 and 3.
 */
public final class WaitingCost {

  public static void main(String[] args) throws Exception {
    int waiters = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    StubChain.StubCall call =
        new StubChain.StubCall(new Request.Builder().url("http://127.0.0.1/").build());
    long nanos = TimeUnit.SECONDS.toNanos(seconds);
    for (String mode : new String[] {"plain park", "okretry TimeSource.SYSTEM.sleep"}) {
      double cpuMillis =
          measure(
              waiters,
              () -> {
                if (mode.equals("plain park")) {
                  long end = System.nanoTime() + nanos;
                  for (long left = nanos; left > 0; left = end - System.nanoTime()) {
                    LockSupport.parkNanos(left);
                  }
                } else {
                  try {
                    TimeSource.SYSTEM.sleep(nanos, call);
                  } catch (java.io.IOException e) {
                    throw new RuntimeException(e);
                  }
                }
              });
      System.out.printf(
          "| %s | %d waiters x %d s | %.0f ms CPU | %.1f%% of one core |%n",
          mode, waiters, seconds, cpuMillis, 100 * cpuMillis / (seconds * 1000.0));
    }
  }

  private static double measure(int waiters, Runnable wait) throws InterruptedException {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    CountDownLatch ready = new CountDownLatch(waiters);
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      Thread t =
          new Thread(
              () -> {
                ready.countDown();
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                wait.run();
              });
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }
    ready.await();
    Thread.sleep(200);
    long cpu0 = os.getProcessCpuTime();
    go.countDown();
    for (Thread t : threads) t.join();
    return (os.getProcessCpuTime() - cpu0) / 1e6;
  }
}
