package io.github.okretry.internal;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;

/**
 * Bytes the current thread allocates while it runs an action, from HotSpot's per-thread counter:
 * deterministic enough for an upper bound far from the expected value, not for pinning a number.
 */
final class Allocation {
  private Allocation() {}

  static long ofCurrentThread(Runnable action) {
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    assumeTrue(
        threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
    long before = threads.getCurrentThreadAllocatedBytes();
    action.run();
    return threads.getCurrentThreadAllocatedBytes() - before;
  }
}
