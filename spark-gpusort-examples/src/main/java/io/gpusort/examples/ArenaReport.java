package io.gpusort.examples;

import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.WarmupTime;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.PinnedArena;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.SparkSession;

/**
 * The process's page-locked host arena ({@link HostBuffer#arenaStats}) and the time tasks spent
 * waiting for host memory for the device ({@link HostBuffer#acquireNanos}), per case of a
 * benchmark: the figures of this JVM, which with a local master is the executor. The counters
 * only grow, so each run's share is the difference across it; runs of other cases in between
 * are not counted.
 */
final class ArenaReport {
  private static final double BYTES_PER_GIB = 1L << 30;
  /** The case column is at least as wide as the other tables'. */
  private static final int MIN_NAME_WIDTH = 36;

  /**
   * The growing counters a run's figures are taken the difference of: the arena's refusals, the
   * wait for host memory, the device's allocations, the JIT's compile time, classes loaded and
   * the process's minor page faults (-1 where the system does not say).
   */
  record Mark(long refusedBytes, long refusedPieces, long acquireNanos, long deviceAllocs,
      long deviceAllocNanos, long jitMillis, long classesLoaded, long minorFaults) {
    static Mark now() {
      PinnedArena.Stats stats = HostBuffer.arenaStats();
      CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      return new Mark(stats.refusedBytes(), stats.refusedPieces(), HostBuffer.acquireNanos(),
          EngineStats.deviceAllocs(), EngineStats.deviceAllocNanos(),
          jit == null || !jit.isCompilationTimeMonitoringSupported() ? 0
              : jit.getTotalCompilationTime(),
          ManagementFactory.getClassLoadingMXBean().getTotalLoadedClassCount(),
          processMinorFaults());
    }

    /**
     * The process's minor page faults so far (pages touched for the first time: new heap, new
     * native memory), field 10 of Linux's {@code /proc/self/stat}; -1 elsewhere.
     */
    static long processMinorFaults() {
      try {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        // Fields after the command's name, which is in parentheses and may hold spaces.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Long.parseLong(fields[MINFLT_AFTER_NAME]);
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }

    long[] minus(Mark before) {
      return new long[] {refusedBytes - before.refusedBytes, refusedPieces - before.refusedPieces,
          acquireNanos - before.acquireNanos, deviceAllocs - before.deviceAllocs,
          deviceAllocNanos - before.deviceAllocNanos, jitMillis - before.jitMillis,
          classesLoaded - before.classesLoaded,
          minorFaults < 0 || before.minorFaults < 0 ? -1 : minorFaults - before.minorFaults};
    }
  }

  private static final int FIGURES = 8;
  /** minflt's index among /proc/self/stat's fields after the command's name (state is 0). */
  private static final int MINFLT_AFTER_NAME = 7;

  /** Per case: refused bytes and pieces and acquire nanoseconds of its warm-up run. */
  private final long[][] firstRun;
  /** Per case: the same summed over its timed runs. */
  private final long[][] timedRuns;
  private final int[] timedRunCounts;
  /** Per case: the arena as its last run left it. */
  private final PinnedArena.Stats[] after;

  ArenaReport(int numCases) {
    firstRun = new long[numCases][FIGURES];
    timedRuns = new long[numCases][FIGURES];
    timedRunCounts = new int[numCases];
    after = new PinnedArena.Stats[numCases];
  }

  /** Adds the run of case {@code caseIndex} that began at {@code before} and just ended. */
  void add(int caseIndex, boolean warmUp, Mark before) {
    long[] run = Mark.now().minus(before);
    long[] sums = warmUp ? firstRun[caseIndex] : timedRuns[caseIndex];
    for (int k = 0; k < FIGURES; k++) {
      sums[k] += run[k];
    }
    if (!warmUp) {
      timedRunCounts[caseIndex]++;
    }
    after[caseIndex] = HostBuffer.arenaStats();
  }

  /** A header line: the arena as it is now, before the first case runs. */
  static void printState(SparkSession spark, PrintStream out) {
    PinnedArena.Stats stats = HostBuffer.arenaStats();
    String where = spark.sparkContext().isLocal() ? ""
        : " (this JVM is the driver: its arena is not the executors')";
    if (stats.targetBytes() == 0) {
      out.printf(Locale.ROOT, "  host arena%s: none in this JVM yet (a GPU engine makes it when "
          + "it first opens; the CPU engine never does)%n", where);
    } else {
      out.printf(Locale.ROOT, "  host arena%s: target %.2f GiB, %.2f GiB page-locked, %.2f GiB "
          + "in use, %.2f GiB refused so far%n", where, gib(stats.targetBytes()),
          gib(stats.readyBytes()), gib(stats.inUseBytes()), gib(stats.refusedBytes()));
      out.printf(Locale.ROOT, "  host arena pinning: %s%n", HostBuffer.arenaPinningState());
    }
    out.printf(Locale.ROOT, "  background warm-ups%s still running at %s, before the first "
        + "run: %d%n", where, LocalTime.now().truncatedTo(ChronoUnit.MILLIS),
        Engines.warmupsRunning());
  }

  /** One row per case, {@code names} in the order the cases were added by index. */
  void print(List<String> names, PrintStream out) {
    int width = Math.max(MIN_NAME_WIDTH, names.stream().mapToInt(String::length).max().orElse(0));
    String name = "%-" + width + "s";
    out.println(String.format(Locale.ROOT, "%n" + name + " %8s %8s %8s | %-28s | %-28s",
        "host arena", "target", "ready", "peak", "first run", "per timed run"));
    out.println(String.format(Locale.ROOT, name + " %8s %8s %8s | %11s %8s %7s | %11s %8s %7s",
        "", "GiB", "GiB", "GiB", "refused GiB", "pieces", "wait s", "refused GiB", "pieces",
        "wait s"));
    for (int i = 0; i < names.size(); i++) {
      PinnedArena.Stats stats = after[i] == null ? PinnedArena.Stats.NONE : after[i];
      int runs = Math.max(1, timedRunCounts[i]);
      out.println(String.format(Locale.ROOT,
          name + " %8.2f %8.2f %8.2f | %11.3f %8d %7.3f | %11.3f %8.1f %7.3f", names.get(i),
          gib(stats.targetBytes()), gib(stats.readyBytes()), gib(stats.peakInUseBytes()),
          gib(firstRun[i][0]), firstRun[i][1], ExampleRuntime.seconds(firstRun[i][2]),
          gib(timedRuns[i][0]) / runs, (double) timedRuns[i][1] / runs,
          ExampleRuntime.seconds(timedRuns[i][2]) / runs));
    }
    out.println("host arena: the process's page-locked arena after the case's last run: its "
        + "target, what is page-locked so far, the most in use at once since the process "
        + "started; refused: pieces the arena could not serve (full, or not yet page-locked), "
        + "which went to plain memory; wait s: time the tasks spent waiting for host memory for "
        + "the device (HostBuffer.acquireNanos, summed over tasks); in the case's first run and "
        + "per timed run. This JVM's figures: the executor's with a local master");
    out.printf(Locale.ROOT, "host arena pinning now: %s%n", HostBuffer.arenaPinningState());
  }

  /**
   * One row per case: what its first run paid beside a timed run, in this JVM (every thread's
   * share, the background warm-ups' included): the JIT's compile time, classes loaded, and calls
   * that took or gave back device memory with their time.
   */
  void printFirstRunCosts(List<String> names, PrintStream out) {
    int width = Math.max(MIN_NAME_WIDTH, names.stream().mapToInt(String::length).max().orElse(0));
    String name = "%-" + width + "s";
    out.println(String.format(Locale.ROOT, "%n" + name + " | %-43s | %-43s", "first run's costs",
        "first run", "per timed run"));
    out.println(String.format(Locale.ROOT, name + " | %6s %7s %9s %9s %8s | %6s %7s %9s %9s %8s",
        "", "JIT s", "classes", "dev alloc", "alloc s", "faults", "JIT s", "classes", "dev alloc",
        "alloc s", "faults"));
    for (int i = 0; i < names.size(); i++) {
      double runs = Math.max(1, timedRunCounts[i]);
      long[] f = firstRun[i];
      long[] t = timedRuns[i];
      out.println(String.format(Locale.ROOT,
          name + " | %6.2f %7d %9d %9.3f %8s | %6.2f %7.0f %9.1f %9.3f %8s", names.get(i),
          f[5] / 1e3, f[6], f[3], ExampleRuntime.seconds(f[4]), faults(f[7], 1),
          t[5] / 1e3 / runs, t[6] / runs, t[3] / runs, ExampleRuntime.seconds(t[4]) / runs,
          faults(t[7], runs)));
    }
    out.println("first run's costs: over the run's wall time, this JVM's JIT compile time (all "
        + "compiler threads), classes loaded, calls into the device's driver that took or "
        + "gave back device memory (cuMemAlloc, cuMemFree) with their time summed over threads, "
        + "and the process's minor page faults (memory touched for the first time: each costs "
        + "the toucher a kernel entry and a zeroed page)");
    printWarmups(out);
  }

  /**
   * When each background warm-up of this JVM ran (the engine's own, then the row path's), to set
   * beside the first run's window: a warm-up still running then shared the cores with it.
   */
  static void printWarmups(PrintStream out) {
    List<WarmupTime> ended = Engines.warmupsEnded();
    if (ended.isEmpty()) {
      out.printf(Locale.ROOT, "background warm-ups: none ended in this JVM (%d running)%n",
          Engines.warmupsRunning());
      return;
    }
    StringBuilder line = new StringBuilder("background warm-ups:");
    for (WarmupTime w : ended) {
      line.append(String.format(Locale.ROOT, " %s on %s %s to %s (%.2f s%s);", w.step(),
          w.engine(), clock(w.startMillis()), clock(w.endMillis()), w.seconds(),
          w.completed() ? "" : ", failed"));
    }
    out.println(line.substring(0, line.length() - 1));
  }

  private static LocalTime clock(long epochMillis) {
    return LocalTime.ofInstant(Instant.ofEpochMilli(epochMillis), ZoneId.systemDefault());
  }

  /** {@code count / runs} minor faults, or "-" where the system does not count them. */
  private static String faults(long count, double runs) {
    return count < 0 ? "-" : String.format(Locale.ROOT, "%.0f", count / runs);
  }

  /** Case {@code i}'s figures on one line, for a run of one case. */
  String summary(int i) {
    PinnedArena.Stats stats = after[i] == null ? PinnedArena.Stats.NONE : after[i];
    int runs = Math.max(1, timedRunCounts[i]);
    return String.format(Locale.ROOT, "host arena after the runs: target %.2f GiB, %.2f GiB "
        + "page-locked, peak %.2f GiB in use; refused %.3f GiB in the first run, %.3f GiB per "
        + "timed run; waiting "
        + "for host memory %.3f s in the first run, %.3f s per timed run",
        gib(stats.targetBytes()), gib(stats.readyBytes()), gib(stats.peakInUseBytes()),
        gib(firstRun[i][0]), gib(timedRuns[i][0]) / runs, ExampleRuntime.seconds(firstRun[i][2]),
        ExampleRuntime.seconds(timedRuns[i][2]) / runs);
  }

  private static double gib(long bytes) {
    return bytes / BYTES_PER_GIB;
  }
}
