package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.memory.RunningTasks;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * In the shared local session (whose SQL extension made the early start listen to its tasks),
 * the page-locked arena learns which tasks run: each task of a job sees itself counted while it
 * runs, and once the job is over none of them is.
 */
class LocalTaskListenerTest {
  private static final long WAIT_NANOS = 20_000_000_000L;

  @Test
  void tasksOfALocalSessionAreCountedWhileTheyRun() throws InterruptedException {
    SparkSession spark = SparkTestSession.get();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    // The listener hears of a task after it starts: each waits, bounded, until it is counted,
    // and answers its attempt id, negated if it never was.
    List<Long> ids = jsc.parallelize(List.of(1, 2, 3, 4), 4).map(x -> {
      long taskId = TaskContext.get().taskAttemptId();
      long deadline = System.nanoTime() + WAIT_NANOS;
      while (!RunningTasks.isRunning(taskId) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      return RunningTasks.isRunning(taskId) ? taskId : -1 - taskId;
    }).collect();
    assertEquals(4, ids.size());
    for (long id : ids) {
      assertTrue(id >= 0, "task " + (-1 - id) + " was never counted while it ran");
    }
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (ids.stream().anyMatch(RunningTasks::isRunning) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    for (long id : ids) {
      assertFalse(RunningTasks.isRunning(id), "task " + id + " still counted after its job");
    }
  }
}
