package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The sort node's metrics, and through them that the paths the oracle tests configure really ran:
 * several engine calls per partition under a tiny chunk budget, host tie-breaks under a one-byte
 * string prefix.
 */
class GpuSortMetricsTest {
  private static final int ROWS = 5_000;

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void tinyRunBudgetSortsEachPartitionInSeveralChunks() {
    SparkSession spark = SparkTestSession.get();
    spark.conf().set("spark.gpusort.run.maxBytes", "4k");
    Dataset<Row> input = spark.range(0, ROWS, 1, 2).select(expr("(id * 7919) % 1000 AS k"), col("id"));
    Dataset<Row> sorted = input.transform(GpuSort.withinPartitions(col("k")));
    long processRowsBefore = io.gpusort.engine.EngineStats.rows();
    List<Row> rows = sorted.collectAsList();
    // The process-wide counts the plugin reports moved too (tests may sort at the same time).
    assertTrue(io.gpusort.engine.EngineStats.rows() - processRowsBefore >= ROWS);

    GpuSortExec node = sortNode(sorted);
    assertEquals(ROWS, metric(node, "numOutputRows"));
    // 5000 rows of 24 bytes plus key and index overhead against 4 KiB: far more than 2 chunks.
    assertTrue(metric(node, "engineChunks") > 20, "engine calls: " + metric(node, "engineChunks"));
    assertEquals(0, metric(node, "tieBrokenRows"));
    assertTrue(metric(node, "sortTime") > 0);
    // Stage times: the CPU engine's calls, the intake and the output (both timed on 1 row in 64).
    assertTrue(metric(node, "deviceSortTime") > 0);
    assertTrue(metric(node, "intakeTime") > 0);
    assertTrue(metric(node, "outputTime") > 0);
    assertEquals(0, metric(node, "toDeviceTime") + metric(node, "fromDeviceTime"));
    assertEquals(0, metric(node, "rowsGatheredOnDevice"));
    // The CPU engine sorted every row here: no bytes crossed to a device.
    assertEquals(ROWS, metric(node, "cpuRows"));
    assertEquals(0, metric(node, "cudaRows") + metric(node, "vulkanRows"));
    assertEquals(0, metric(node, "bytesToDevice") + metric(node, "bytesFromDevice"));
    assertSortedWithinPartitions(sorted, rows);
  }

  @Test
  void oneBytePrefixBreaksTiesOnTheHost() {
    SparkSession spark = SparkTestSession.get();
    spark.conf().set("spark.gpusort.key.stringPrefixBytes", "1");
    Dataset<Row> input = spark.range(0, ROWS, 1, 2)
        .select(expr("concat('s', cast(id % 97 AS string)) AS s"), col("id"));
    Dataset<Row> sorted = input.transform(GpuSort.byKey(col("s").desc(), col("id")));
    List<Row> ours = sorted.collectAsList();
    List<Row> spark0 = input.orderBy(col("s").desc(), col("id")).collectAsList();

    assertEquals(spark0, ours, "keys (s, id) are unique, so the order is fully determined");
    GpuSortExec node = sortNode(sorted);
    assertEquals(ROWS, metric(node, "numOutputRows"));
    // Every string starts with 's': the whole input ties on its one-byte prefix.
    assertEquals(ROWS, metric(node, "tieBrokenRows"));
  }

  private static void assertSortedWithinPartitions(Dataset<Row> sorted, List<Row> rows) {
    List<List<Row>> partitions = sorted.javaRDD().glom().collect();
    int total = 0;
    for (List<Row> partition : partitions) {
      for (int i = 1; i < partition.size(); i++) {
        assertTrue(partition.get(i - 1).getLong(0) <= partition.get(i).getLong(0),
            "unsorted at " + i + ": " + partition.get(i - 1) + " then " + partition.get(i));
      }
      total += partition.size();
    }
    assertEquals(rows.size(), total);
  }

  private static GpuSortExec sortNode(Dataset<Row> executed) {
    GpuSortExec node = find(executed.queryExecution().executedPlan());
    assertNotNull(node, "no GpuSort node in\n" + executed.queryExecution().executedPlan());
    return node;
  }

  private static GpuSortExec find(SparkPlan plan) {
    if (plan instanceof GpuSortExec node) {
      return node;
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      return find(adaptive.executedPlan());
    }
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
      GpuSortExec found = find(child);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  private static long metric(GpuSortExec node, String key) {
    SQLMetric metric = CollectionConverters.asJava(node.metrics()).get(key);
    assertNotNull(metric, "no metric " + key);
    return metric.value();
  }
}
