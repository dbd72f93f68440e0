package io.gpusort.memory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tasks this process runs now, as the Spark side reports them (the executor plugin's task
 * hooks, or a listener in a local session), by task attempt id, so that two reporters of one task
 * count it once. The page-locked arena pins at full speed only while the process is idle by this
 * measure: no task running and none ended in the last {@link #QUIET_NANOS}; beside running tasks
 * one thread pins at a share of its time ({@link PinnedArena#pinWhileBusy}). Pinning at full speed
 * beside running tasks held them back (on the H200 host, TeraSort's 10 GB one-shot job ran 26-32 s
 * with its 32 GiB arena pinned beside its tasks by the driver's allocation, 14.3 s with no arena).
 */
public final class RunningTasks {
  /** How long after a task ends pinning still waits: the gap between two stages of a job. */
  public static final long QUIET_NANOS = 300_000_000L;
  private static final Set<Long> RUNNING = ConcurrentHashMap.newKeySet();
  private static volatile long lastEndNanos = System.nanoTime() - QUIET_NANOS;

  private RunningTasks() {}

  /** Task attempt {@code taskId} started (again: a second report of it changes nothing). */
  public static void started(long taskId) {
    RUNNING.add(taskId);
  }

  /** Task attempt {@code taskId} ended (succeeded, failed or killed). */
  public static void ended(long taskId) {
    if (RUNNING.remove(taskId)) {
      lastEndNanos = System.nanoTime();
    }
  }

  /** Whether task attempt {@code taskId} is reported running. */
  public static boolean isRunning(long taskId) {
    return RUNNING.contains(taskId);
  }

  /** The tasks running now, as reported. */
  public static int count() {
    return RUNNING.size();
  }

  /** Whether a task runs, or one ended less than {@link #QUIET_NANOS} ago. */
  public static boolean busy() {
    return !RUNNING.isEmpty() || System.nanoTime() - lastEndNanos < QUIET_NANOS;
  }
}
