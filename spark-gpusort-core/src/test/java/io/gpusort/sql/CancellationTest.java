package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A sort cancelled mid-way (a job group cancelled with interruption, or every job cancelled
 * without it) stops within a second: its task threads leave the sort, all its memory and spill
 * files are released, and the next sort is right.
 */
class CancellationTest {
  /** Enough rows that the sort still runs seconds after it has started on two cores. */
  private static final long ROWS = 40_000_000L;
  /** Classes whose frames on a thread's stack mean the thread is still sorting. */
  private static final Set<String> SORT_CLASSES = Set.of(
      ExternalRowSorter.class.getName(), RunBuilder.class.getName(), RowStore.class.getName(),
      EngineStage.class.getName(), SortOutput.class.getName(), MemoryRunCursor.class.getName(),
      FileRunCursor.class.getName());

  @AfterEach
  void reset() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void cancelledJobGroupStopsTheSortWithinASecond() throws Exception {
    cancelMidSort(true, Map.of());
  }

  @Test
  void cancelAllJobsStopsASpillingSortWithinASecond() throws Exception {
    // Spills every 500,000 rows: the sort holds spill files when it is cancelled.
    cancelMidSort(false, Map.of(GpuSortConf.SPILL_ROWS_THRESHOLD.key(), "500000"));
  }

  private static void cancelMidSort(boolean jobGroupWithInterrupt, Map<String, String> conf)
      throws Exception {
    SparkSession spark = SparkTestSession.get();
    SparkContext sc = spark.sparkContext();
    conf.forEach(spark.conf()::set);
    SortResources.Snapshot before = SortResources.take();
    Dataset<Row> big = spark.range(0, ROWS, 1, 2)
        .selectExpr("id", "(id * 2654435761) % 1000000007 AS k");
    Dataset<Row> sorted = big.transform(GpuSort.withinPartitions("k"));
    String group = "cancel-" + jobGroupWithInterrupt;
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread runner = new Thread(() -> {
      sc.setJobGroup(group, "a sort to cancel", jobGroupWithInterrupt);
      try {
        sorted.write().format("noop").mode("overwrite").save();
      } catch (Throwable t) {
        failure.set(t);
      } finally {
        sc.clearJobGroup();
      }
    }, "cancelled-sort");
    long rowsBefore = ExternalRowSorter.rowsTakenIn();
    runner.start();
    boolean spills = !conf.isEmpty();
    waitFor(() -> ExternalRowSorter.rowsTakenIn() - rowsBefore > (spills ? 1_200_000 : 2_000_000)
        && (!spills || SortResources.spillFiles().size() > before.spillFiles().size()),
        "the sort to be under way");

    long cancelNanos = System.nanoTime();
    if (jobGroupWithInterrupt) {
      sc.cancelJobGroup(group);
    } else {
      sc.cancelAllJobs();
    }
    waitFor(() -> ExternalRowSorter.openSorts() == 0 && threadsInSort().isEmpty(),
        "the task threads to leave the sort");
    long stoppedMillis = (System.nanoTime() - cancelNanos) / 1_000_000;
    System.out.println("CancellationTest: " + (jobGroupWithInterrupt ? "cancelJobGroup"
        : "cancelAllJobs") + " left the sort in " + stoppedMillis + " ms");
    assertTrue(stoppedMillis < 1000, "the sort ran on " + stoppedMillis + " ms after the cancel");

    runner.join(30_000);
    assertNotNull(failure.get(), "the cancelled job reported no failure");
    assertTrue(String.valueOf(failure.get().getMessage()).contains("cancel"),
        String.valueOf(failure.get()));
    SortResources.assertReleased(before, "after the cancel");

    Dataset<Row> small = spark.range(0, 50_000, 1, 2)
        .selectExpr("id", "(id * 2654435761) % 1000003 AS k");
    List<Row> expected = small.orderBy("k", "id").collectAsList();
    assertEquals(expected, small.transform(GpuSort.byKey("k", "id")).collectAsList(),
        "the next sort");
  }

  /** Threads with a frame of the sort's classes on their stack. */
  private static List<String> threadsInSort() {
    return Thread.getAllStackTraces().entrySet().stream()
        .filter(e -> List.of(e.getValue()).stream()
            .anyMatch(f -> SORT_CLASSES.contains(f.getClassName())))
        .map(e -> e.getKey().getName())
        .toList();
  }

  private static void waitFor(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; threads in the sort: "
            + threadsInSort());
      }
      Thread.sleep(1);
    }
  }
}
