package io.gpusort.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The running tasks the arena's pinning waits for: counted once per attempt id whoever reports
 * them, busy while one runs and for the quiet period after the last ends.
 */
class RunningTasksTest {
  /** Attempt ids no Spark test session hands out in this JVM's lifetime. */
  private static final long FIRST_ID = Long.MAX_VALUE - 10;

  @Test
  void busyWhileATaskRunsAndForTheQuietPeriodAfter() throws InterruptedException {
    int before = RunningTasks.count();
    RunningTasks.started(FIRST_ID);
    RunningTasks.started(FIRST_ID);
    RunningTasks.started(FIRST_ID + 1);
    assertEquals(before + 2, RunningTasks.count(), "a task reported twice counts once");
    assertTrue(RunningTasks.busy());

    RunningTasks.ended(FIRST_ID);
    RunningTasks.ended(FIRST_ID);
    assertEquals(before + 1, RunningTasks.count(), "a second end changes nothing");
    RunningTasks.ended(FIRST_ID + 1);
    assertEquals(before, RunningTasks.count());
    long endedAt = System.nanoTime();
    boolean busyJustAfter = RunningTasks.busy();
    if (System.nanoTime() - endedAt < RunningTasks.QUIET_NANOS / 2) {
      assertTrue(busyJustAfter, "a task just ended: pinning still waits");
    }
    if (before == 0) {
      long deadline = System.nanoTime() + 10 * RunningTasks.QUIET_NANOS;
      while (RunningTasks.busy() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertFalse(RunningTasks.busy(), "idle once the quiet period after the last task passed");
      assertTrue(System.nanoTime() - endedAt >= RunningTasks.QUIET_NANOS,
          "idle before the quiet period passed");
    }
  }

  @Test
  void endingATaskNeverStartedChangesNothing() {
    int before = RunningTasks.count();
    RunningTasks.ended(FIRST_ID + 5);
    assertEquals(before, RunningTasks.count());
  }
}
