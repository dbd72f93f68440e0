package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tasks' {@code peakExecutionMemory} (the Spark UI's "Peak Execution Memory", event logs,
 * the history server): each path of the plugin reports there what its sorts held, as Spark's own
 * sort does, and the same figure as the node's {@code peakMemory} metric.
 */
class PeakExecutionMemoryTest {
  private static final int ROWS = 20_000;
  private static final int INPUT_PARTITIONS = 2;
  /** An unsafe row of two longs: the null bits' word and the two values. */
  private static final long ROW_BYTES = 24;

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void sparksOwnSortReportsItsPeak() {
    // The baseline the plugin matches: Spark's sort reports a peak in each sorting task.
    Map<Integer, List<Long>> peaks = taskPeaks(input().sortWithinPartitions("k"));
    assertEquals(1, sortingStages(peaks), "stages whose tasks held memory: " + peaks);
  }

  @Test
  void withinPartitionsReportsThePeakOfEachTask() {
    Dataset<Row> sorted = input().transform(GpuSort.withinPartitions(col("k")));
    Map<Integer, List<Long>> peaks = taskPeaks(sorted);
    assertPeaks("withinPartitions", sorted, peaks, 1);
    // Each input partition's task held its own rows.
    for (List<Long> stage : peaks.values()) {
      assertEquals(INPUT_PARTITIONS, stage.stream().filter(p -> p > 0).count(), peaks.toString());
    }
  }

  @Test
  void globalSortReportsThePeakOfBothSides() {
    // The merge mode (the default): the map side sorts and cuts, the reduce side merges the
    // blocks in memory of its own.
    Dataset<Row> sorted = input().transform(GpuSort.byKey(col("k")));
    assertPeaks("byKey, merge mode", sorted, taskPeaks(sorted), 2);
  }

  @Test
  void globalSortModeReportsThePeakOfItsSort() {
    // The sort mode: Spark's shuffle moves the rows (no sort on the map side), the reduce side
    // sorts them.
    SparkTestSession.get().conf().set("spark.gpusort.global.mode", "sort");
    Dataset<Row> sorted = input().transform(GpuSort.byKey(col("k")));
    assertPeaks("byKey, sort mode", sorted, taskPeaks(sorted), 1);
  }

  @Test
  void sqlReplacementReportsThePeak() {
    SparkSession spark = SparkTestSession.get();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    Dataset<Row> within = input().sortWithinPartitions("k");
    assertPeaks("sortWithinPartitions replaced", within, taskPeaks(within), 1);
    Dataset<Row> global = input().orderBy("k");
    assertPeaks("orderBy replaced", global, taskPeaks(global), 2);
  }

  private static Dataset<Row> input() {
    return SparkTestSession.get().range(0, ROWS, 1, INPUT_PARTITIONS)
        .select(expr("(id * 7919) % 10007 AS k"), col("id"));
  }

  /**
   * Checks that {@code sortingStages} stages of the executed {@code sorted} had tasks that held
   * memory, each such stage at least the bytes of the rows it sorted (each sorts every row once,
   * but a spilling sort holds only the rows before a spill), and that the tasks' peaks add up to
   * the GpuSort nodes' metric.
   */
  private static void assertPeaks(String what, Dataset<Row> sorted,
      Map<Integer, List<Long>> peaks, int sortingStages) {
    assertEquals(sortingStages, sortingStages(peaks), what + ": task peaks by stage " + peaks);
    long rowsHeld = SparkTestSession.SPILLING ? SparkTestSession.SPILL_ROWS : ROWS;
    long total = 0;
    for (List<Long> stage : peaks.values()) {
      long stageBytes = stage.stream().mapToLong(Long::longValue).sum();
      assertTrue(stageBytes == 0 || stageBytes >= rowsHeld * ROW_BYTES,
          what + ": a stage's tasks held " + stageBytes + " bytes at most, " + peaks);
      total += stageBytes;
    }
    assertEquals(SortResources.metric(sorted, "peakMemory"), total,
        what + ": the tasks' peaks against the nodes' metric, " + peaks);
  }

  private static long sortingStages(Map<Integer, List<Long>> peaks) {
    return peaks.values().stream().filter(stage -> stage.stream().anyMatch(p -> p > 0)).count();
  }

  /** Runs {@code query}; the {@code peakExecutionMemory} of each of its tasks, by stage. */
  private static Map<Integer, List<Long>> taskPeaks(Dataset<Row> query) {
    SparkSession spark = SparkTestSession.get();
    Map<Integer, List<Long>> peaks = new TreeMap<>();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskMetrics() != null) {
          synchronized (peaks) {
            peaks.computeIfAbsent(end.stageId(), s -> new ArrayList<>())
                .add(end.taskMetrics().peakExecutionMemory());
          }
        }
      }
    };
    spark.sparkContext().addSparkListener(listener);
    try {
      assertEquals(ROWS, query.collectAsList().size());
      // Task ends reach listeners on the bus's thread: drained before they are read.
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("the listener bus did not drain", e);
    } finally {
      spark.sparkContext().removeSparkListener(listener);
    }
    synchronized (peaks) {
      return new TreeMap<>(peaks);
    }
  }
}
