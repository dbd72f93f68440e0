package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.compat.ScalaCollections;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * What a sort holds while it runs, for tests that check it is all given back: the executor's
 * execution memory, native host memory, spill files, open sorters; and the sort nodes' metrics.
 */
final class SortResources {
  /** Resources in use at one moment. */
  record Snapshot(long hostBytes, Set<String> spillFiles) {}

  private SortResources() {}

  static Snapshot take() {
    // A GPU engine opened by the first sort warms up in the background with buffers of its own.
    io.gpusort.engine.Engines.awaitWarmups();
    return new Snapshot(HostMemory.bytesInUse(), spillFiles());
  }

  /** Temporary local blocks of this executor's disk manager: where spills go. */
  static Set<String> spillFiles() {
    Set<String> names = new TreeSet<>();
    for (File f : ScalaCollections.asJava(
        SparkEnv.get().blockManager().diskBlockManager().getAllFiles())) {
      if (f.getName().startsWith("temp_local_")) {
        names.add(f.getPath());
      }
    }
    return names;
  }

  /**
   * Waits (up to 10 s, for tasks still ending after a failed or cancelled job) until no sorter is
   * open and no execution memory is used, then checks that host memory and spill files are back to
   * {@code before} and the pools keep no more than their bound; returns the wait in milliseconds.
   */
  static long assertReleased(Snapshot before, String where) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + 10_000_000_000L;
    while ((ExternalRowSorter.openSorts() > 0 || executionMemoryUsed() > 0)
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    long waitedMillis = (System.nanoTime() - start) / 1_000_000;
    io.gpusort.engine.Engines.awaitWarmups();
    assertEquals(0, ExternalRowSorter.openSorts(), where + ": sorters still open");
    assertEquals(0, executionMemoryUsed(), where + ": execution memory still used");
    assertEquals(before.hostBytes(), HostMemory.bytesInUse(), where + ": native host memory");
    Set<String> left = spillFiles();
    left.removeAll(before.spillFiles());
    assertTrue(left.isEmpty(), where + ": spill files left: " + left);
    assertTrue(HostBuffer.pooledIdleBytes() <= HostBuffer.poolMaxIdleBytes(),
        where + ": pools keep " + HostBuffer.pooledIdleBytes() + " idle bytes, over their bound "
            + HostBuffer.poolMaxIdleBytes());
    return waitedMillis;
  }

  static long executionMemoryUsed() {
    return SparkEnv.get().memoryManager().executionMemoryUsed();
  }

  /**
   * Every GpuSort node of an executed query ({@link GpuSortExec}, {@link GpuRangeSortExchangeExec}),
   * through adaptive execution's stages, a reused exchange counted once.
   */
  static List<SparkPlan> sortNodes(Dataset<?> executed) {
    List<SparkPlan> nodes = new ArrayList<>();
    collect(executed.queryExecution().executedPlan(), nodes);
    return nodes;
  }

  /** The first GpuSort node of {@code query}'s plan (executed or not); fails if there is none. */
  static SparkPlan sortNode(Dataset<?> query) {
    List<SparkPlan> nodes = sortNodes(query);
    assertFalse(nodes.isEmpty(), "no GpuSort node in\n" + query.queryExecution().executedPlan());
    return nodes.get(0);
  }

  private static void collect(SparkPlan plan, List<SparkPlan> nodes) {
    if (plan instanceof GpuSortExec || plan instanceof GpuRangeSortExchangeExec) {
      nodes.add(plan);
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      collect(adaptive.executedPlan(), nodes);
    }
    if (plan instanceof QueryStageExec stage) {
      collect(stage.plan(), nodes);
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      collect(child, nodes);
    }
  }

  /** The sum of metric {@code key} over every GpuSort node of {@code executed}. */
  static long metric(Dataset<?> executed, String key) {
    long sum = 0;
    for (SparkPlan node : sortNodes(executed)) {
      SQLMetric metric = ScalaCollections.asJava(node.metrics()).get(key);
      sum += metric.value();
    }
    return sum;
  }

  /** Rows as strings, for messages. */
  static String head(List<Row> rows) {
    return rows.subList(0, Math.min(5, rows.size())).toString();
  }
}
