package io.gpusort.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Waits before a timed run until the page cache's writes of the runs before it are on disk, so
 * that a run is not charged for another's. A global sort of 3e8 rows writes 5-7 GB of shuffle
 * files; on the lent GPU host (a 64g heap and a 31 GiB page-locked arena in 126 GiB) the kernel
 * was still writing one case's files back when the next began, and the next case's shuffle writes
 * were throttled behind them: the same exchange's write took 23.2 s of task time run after {@code
 * Dataset.orderBy} and 7.2 s run after {@code GpuSort.byKey} (2026-12-05). A run's own writes
 * stay in its time.
 *
 * <p>Reads Linux's {@code /proc/meminfo} ({@code Dirty} and {@code Writeback}); where there is
 * none, does not wait. The system property {@value #MAX_SECONDS_PROPERTY} bounds the wait (60 s;
 * 0 waits never): on a host whose disk takes its writes back at some tens of MB/s (the lent H100
 * host, 2026-12-05: 26-51 s before every run of a global sort of 1e8 rows) a series of runs
 * otherwise spends more time waiting than sorting.
 */
final class DiskSettle {
  /** Pending writes at which a run may start. */
  static final long QUIET_BYTES = 256L << 20;
  /** The system property of the longest wait, in seconds. */
  static final String MAX_SECONDS_PROPERTY = "gpusort.bench.settleSeconds";
  /** The longest wait, after which the run starts anyway: {@value #MAX_SECONDS_PROPERTY}, 60 s. */
  static final long MAX_MILLIS = Math.max(0, Long.getLong(MAX_SECONDS_PROPERTY, 60)) * 1000;
  private static final Path MEMINFO = Path.of("/proc/meminfo");

  private DiskSettle() {}

  /** What the wait found: bytes pending when it began, and the milliseconds it waited. */
  record Wait(long pendingBytes, long millis) {}

  /**
   * {@link #await}s before the run {@code label} and prints a line saying so where it waited
   * 0.1 s or more: "settle LABEL | waited S s for MB MB of writes pending".
   */
  static void beforeRun(String label) {
    Wait wait = await();
    if (wait.millis() >= 100) {
      System.out.printf(Locale.ROOT, "settle %s | waited %.1f s for %d MB of writes pending%n",
          label, wait.millis() / 1000.0, wait.pendingBytes() >> 20);
    }
  }

  /** Waits until at most {@link #QUIET_BYTES} are pending, or {@link #MAX_MILLIS} have passed. */
  static Wait await() {
    long pending = pendingBytes();
    long start = System.nanoTime();
    long waited = 0;
    long now = pending;
    while (now > QUIET_BYTES && waited < MAX_MILLIS) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      waited = (System.nanoTime() - start) / 1_000_000;
      now = pendingBytes();
    }
    return new Wait(Math.max(0, pending), waited);
  }

  /** The page cache's bytes written but not yet on disk, or -1 where the host does not say. */
  static long pendingBytes() {
    List<String> lines;
    try {
      lines = Files.readAllLines(MEMINFO);
    } catch (IOException | SecurityException e) {
      return -1;
    }
    return pendingBytes(lines);
  }

  /** The {@code Dirty} and {@code Writeback} lines of {@code meminfo}'s lines, in bytes. */
  static long pendingBytes(List<String> meminfo) {
    long bytes = 0;
    boolean found = false;
    for (String line : meminfo) {
      if (line.startsWith("Dirty:") || line.startsWith("Writeback:")) {
        String[] parts = line.trim().split("\\s+");
        bytes += Long.parseLong(parts[1]) * 1024;
        found = true;
      }
    }
    return found ? bytes : -1;
  }
}
