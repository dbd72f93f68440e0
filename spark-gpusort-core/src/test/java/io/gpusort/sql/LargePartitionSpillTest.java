package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * One partition five times the heap (about 2.5 GB of rows in a JVM of {@code -Xmx512m}, the
 * surefire execution "small-heap"): sorted correctly, by spilling, under {@code withinPartitions},
 * {@code byKey} in both global modes and the plugin's replacement of Spark's sort. Before spills
 * existed each of these killed the JVM with an OutOfMemoryError where Spark's own sort finished.
 */
@Tag("small-heap")
class LargePartitionSpillTest {
  private static final long ROWS = Long.getLong("gpusort.test.largeRows", 2_500_000L);
  private static final int PAD_CHARS = 1000;

  private static SparkSession spark;
  private static Dataset<Row> input;
  private static long expectedKeySum;
  private static long expectedDigitSum;

  @BeforeAll
  static void start() {
    spark = SparkSession.builder()
        .master("local[1]")
        .appName("spark-gpusort-large-partition")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.extensions", "io.gpusort.spark.GpuSortExtensions")
        .config(SparkTestSession.SQL_ENABLED, "false")
        .config("spark.unsafe.exceptionOnMemoryLeak", "true")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    input = spark.range(0, ROWS, 1, 1).selectExpr("(id * 2654435761) % 1000000007 AS k",
        "repeat(CAST(id % 10 AS STRING), " + PAD_CHARS + ") AS pad");
    for (long id = 0; id < ROWS; id++) {
      expectedKeySum += (id * 2654435761L) % 1000000007L;
      expectedDigitSum += id % 10;
    }
    System.out.printf("LargePartitionSpillTest: %,d rows of about %,d bytes in one partition, "
        + "max heap %,d MiB%n", ROWS, PAD_CHARS + 24, Runtime.getRuntime().maxMemory() >> 20);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void withinPartitions() throws InterruptedException {
    check("withinPartitions", Map.of(), false,
        d -> d.transform(GpuSort.withinPartitions("k")));
  }

  @Test
  void byKeySortMode() throws InterruptedException {
    check("byKey, global.mode=sort", Map.of(GpuSortConf.GLOBAL_MODE.key(), "sort",
        GpuSortConf.OUTPUT_PARTITIONS.key(), "2"), true, d -> d.transform(GpuSort.byKey("k")));
  }

  @Test
  void byKeyMergeMode() throws InterruptedException {
    check("byKey, global.mode=merge", Map.of(GpuSortConf.GLOBAL_MODE.key(), "merge",
        GpuSortConf.OUTPUT_PARTITIONS.key(), "2"), true, d -> d.transform(GpuSort.byKey("k")));
  }

  @Test
  void sqlReplacementOfSparksSort() throws InterruptedException {
    check("sortWithinPartitions through the plugin", Map.of(SparkTestSession.SQL_ENABLED, "true"),
        false, d -> d.sortWithinPartitions("k"));
  }

  /**
   * Runs the sort and checks, in one streaming pass over its output, that each partition is in
   * key order, that partitions follow each other in key order when {@code global}, and that the
   * rows are the input's (count, sum of keys, sum of the padding's digit).
   */
  private static void check(String name, Map<String, String> conf, boolean global,
      UnaryOperator<Dataset<Row>> sort) throws InterruptedException {
    conf.forEach(spark.conf()::set);
    try {
      SortResources.Snapshot before = SortResources.take();
      long start = System.nanoTime();
      Dataset<Row> sorted = sort.apply(input);
      Dataset<long[]> summaries = sorted.selectExpr("k", "CAST(substring(pad, 1, 1) AS INT) AS d",
          "spark_partition_id() AS p").mapPartitions(
              (MapPartitionsFunction<Row, long[]>) LargePartitionSpillTest::summarize,
              Encoders.kryo(long[].class));
      List<long[]> parts = new ArrayList<>(summaries.collectAsList());
      parts.sort((a, b) -> Long.compare(a[0], b[0]));
      long rows = 0;
      long keySum = 0;
      long digitSum = 0;
      long previousMax = Long.MIN_VALUE;
      for (long[] part : parts) {
        assertEquals(0, part[4], name + ": rows out of order in partition " + part[0]);
        rows += part[1];
        keySum += part[2];
        digitSum += part[3];
        if (global && part[1] > 0) {
          assertTrue(part[5] >= previousMax, name + ": partition " + part[0] + " starts below "
              + "the end of the one before");
          previousMax = part[6];
        }
      }
      assertEquals(ROWS, rows, name + ": rows");
      assertEquals(expectedKeySum, keySum, name + ": sum of keys");
      assertEquals(expectedDigitSum, digitSum, name + ": sum of the padding's digit");
      long spills = SortResources.metric(summaries, "numSpills");
      long spillBytes = SortResources.metric(summaries, "spillSize");
      System.out.printf("LargePartitionSpillTest: %s: %.1f s, %d spills, %,d MiB spilled, "
          + "peak %,d MiB%n", name, (System.nanoTime() - start) / 1e9, spills, spillBytes >> 20,
          SortResources.metric(summaries, "peakMemory") >> 20);
      assertTrue(spills > 0, name + ": no spill reported");
      SortResources.assertReleased(before, name);
    } finally {
      conf.keySet().forEach(spark.conf()::unset);
    }
  }

  /** [partition, rows, sum of k, sum of d, rows out of order, first k, last k]. */
  private static java.util.Iterator<long[]> summarize(java.util.Iterator<Row> rows) {
    long[] s = {-1, 0, 0, 0, 0, Long.MIN_VALUE, Long.MIN_VALUE};
    long previous = Long.MIN_VALUE;
    while (rows.hasNext()) {
      Row r = rows.next();
      long k = r.getLong(0);
      s[0] = r.getInt(2);
      if (s[1] == 0) {
        s[5] = k;
      }
      s[1]++;
      s[2] += k;
      s[3] += r.getInt(1);
      s[4] += k < previous ? 1 : 0;
      previous = k;
      s[6] = k;
    }
    return List.of(s).iterator();
  }
}
