package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import io.gpusort.compat.ScalaCollections;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

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
    // The CPU engine's metrics are checked here, wherever the suite runs (on the GPU host, auto
    // would pick cuda; CudaRowPathTest checks the device's counts there).
    spark.conf().set("spark.gpusort.engine", "cpu");
    Dataset<Row> input = spark.range(0, ROWS, 1, 2).select(expr("(id * 7919) % 1000 AS k"), col("id"));
    Dataset<Row> sorted = input.transform(GpuSort.withinPartitions(col("k")));
    long processRowsBefore = io.gpusort.engine.EngineStats.rows();
    List<Row> rows = sorted.collectAsList();
    // The process-wide counts the plugin reports moved too (tests may sort at the same time).
    assertTrue(io.gpusort.engine.EngineStats.rows() - processRowsBefore >= ROWS);

    SparkPlan node = SortResources.sortNode(sorted);
    assertEquals(ROWS, metric(node, "numOutputRows"));
    // 5000 rows of 24 bytes plus key and index overhead against 4 KiB: far more than 2 chunks.
    assertTrue(metric(node, "engineChunks") > 20, "engine calls: " + metric(node, "engineChunks"));
    assertEquals(0, metric(node, "tieBrokenRows"));
    assertTrue(metric(node, "sortTime") > 0);
    // Stage times: the CPU engine's calls, the intake (the loop timed whole), the child's rows
    // (timed on 1 row in 64, as the output is).
    assertTrue(metric(node, "deviceSortTime") > 0);
    assertTrue(metric(node, "intakeTime") > 0);
    assertTrue(metric(node, "inputTime") > 0, "the child's rows were not timed");
    assertTrue(metric(node, "outputTime") > 0);
    // No rows came back from a device: the output never waited for one.
    assertEquals(0, metric(node, "outputWaitTime"));
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
    SparkPlan node = SortResources.sortNode(sorted);
    assertEquals(ROWS, metric(node, "numOutputRows"));
    // Every string starts with 's': the whole input ties on its one-byte prefix, on both sides of
    // the exchange (the map side's sort and the merge of its blocks).
    assertEquals(2L * ROWS, metric(node, "tieBrokenRows"));
  }

  /**
   * The host tie-break is skipped for a run whose string or binary keys all fit their prefix with
   * no trailing zero byte, and runs otherwise; either way the order is Spark's.
   */
  @Test
  void tieBreakRunsOnlyWhereAPrefixCanHideADifference() {
    SparkSession spark = SparkTestSession.get();
    spark.conf().set("spark.gpusort.key.stringPrefixBytes", "4");
    List<Object> shortStrings = Arrays.asList("", "a", "ab", "abcd", "b", "a\u0001", "a\u0000b",
        "\u00e9\u00e9", null);
    List<Object> shortBinaries = Arrays.asList(new byte[0], new byte[] {1}, new byte[] {1, 0, 1},
        new byte[] {(byte) 0xff, 0, 0, 2}, new byte[] {0, 1}, null);
    Column k = col("k");
    Column x = col("x");
    // Cases whose runs are exact: no row reaches the tie-break.
    checkTieBreak("short strings", shortStrings, false, k);
    checkTieBreak("short strings desc nulls first", shortStrings, false, k.desc_nulls_first());
    checkTieBreak("short strings asc nulls last", shortStrings, false, k.asc_nulls_last());
    checkTieBreak("short binaries", shortBinaries, false, k.desc());
    // Cases where equal prefixes may hide different values.
    checkTieBreak("longer than the prefix", Arrays.asList("abcdX", "abcdY", "abcd", "abc", "", null),
        true, k);
    checkTieBreak("longer than the prefix, desc", Arrays.asList("abcdX", "abcd", "abcdXY", null),
        true, k.desc_nulls_last());
    checkTieBreak("trailing NUL", Arrays.asList("a", "a\u0000", "a\u0000\u0000", "", "\u0000"),
        true, k);
    checkTieBreak("trailing NUL, desc", Arrays.asList("a", "a\u0000", "", "\u0000", null), true,
        k.desc_nulls_first());
    checkTieBreak("binary trailing zeros", Arrays.asList(new byte[] {1}, new byte[] {1, 0},
        new byte[] {1, 0, 0}, new byte[0], new byte[] {0}, null), true, k.asc_nulls_last());
    checkTieBreak("a column after the string", shortStrings, true, k, x.desc());
  }

  /**
   * Sorts rows {@code (k, x, id)}, {@code k} cycling through {@code values}, in one partition by
   * {@code orders}; compares with Spark's {@code sortWithinPartitions} and checks whether rows went
   * through the host tie-break.
   */
  private static void checkTieBreak(String name, List<Object> values, boolean tiesBroken,
      Column... orders) {
    SparkSession spark = SparkTestSession.get();
    boolean binary = values.stream().anyMatch(v -> v instanceof byte[]);
    StructType schema = new StructType()
        .add("k", binary ? DataTypes.BinaryType : DataTypes.StringType, true)
        .add("x", DataTypes.IntegerType, false)
        .add("id", DataTypes.LongType, false);
    List<Row> data = new ArrayList<>();
    for (int i = 0; i < ROWS / 10; i++) {
      data.add(RowFactory.create(values.get(i % values.size()), (i * 7919) % 13, (long) i));
    }
    Dataset<Row> input = spark.createDataFrame(data, schema).coalesce(1);
    List<Row> expected = input.sortWithinPartitions(orders).collectAsList();
    Dataset<Row> sorted = input.transform(GpuSort.withinPartitions(orders));
    List<Row> actual = sorted.collectAsList();

    List<Function<Row, Object>> keys = List.of(row -> row.get(0), row -> row.get(1));
    GpuSortOracleTest.assertSameSortedRows(name, expected, actual, keys.subList(0, orders.length));
    long tieBrokenRows = metric(SortResources.sortNode(sorted), "tieBrokenRows");
    if (tiesBroken) {
      assertTrue(tieBrokenRows > 0, name + ": no row was tie-broken");
    } else {
      assertEquals(0, tieBrokenRows, name + ": rows tie-broken");
    }
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

  private static long metric(SparkPlan node, String key) {
    SQLMetric metric = ScalaCollections.asJava(node.metrics()).get(key);
    assertNotNull(metric, "no metric " + key);
    return metric.value();
  }
}
