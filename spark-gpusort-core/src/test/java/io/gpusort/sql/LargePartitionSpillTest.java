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
import org.junit.jupiter.api.TestInstance;

/**
 * One partition five times the heap (about 2.5 GB of rows in a JVM of {@code -Xmx512m}, the
 * surefire execution "small-heap"): sorted correctly, by spilling, under {@code withinPartitions},
 * {@code byKey} in both global modes and the plugin's replacement of Spark's sort. Before spills
 * existed each of these killed the JVM with an OutOfMemoryError where Spark's own sort finished.
 */
@Tag("small-heap")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargePartitionSpillTest {
  private static final int PAD_CHARS = 1000;

  private long rows;
  private SparkSession spark;
  private Dataset<Row> input;
  private long expectedKeySum;
  private long expectedDigitSum;

  /** Rows of the one partition. */
  long rows() {
    return Long.getLong("gpusort.test.largeRows", 2_500_000L);
  }

  /** Settings of the session beyond the common ones. */
  void configure(SparkSession.Builder builder) {}

  @BeforeAll
  void start() {
    rows = rows();
    SparkSession.Builder builder = SparkSession.builder();
    configure(builder);
    spark = builder
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
    input = spark.range(0, rows, 1, 1).selectExpr("(id * 2654435761) % 1000000007 AS k",
        "repeat(CAST(id % 10 AS STRING), " + PAD_CHARS + ") AS pad");
    for (long id = 0; id < rows; id++) {
      expectedKeySum += (id * 2654435761L) % 1000000007L;
      expectedDigitSum += id % 10;
    }
    System.out.printf("%s: %,d rows of about %,d bytes in one partition, max heap %,d MiB, "
        + "engine %s%n", getClass().getSimpleName(), rows, PAD_CHARS + 24,
        Runtime.getRuntime().maxMemory() >> 20, io.gpusort.GpuSort.engineName(spark));
  }

  @AfterAll
  void stop() {
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
  void check(String name, Map<String, String> conf, boolean global,
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
      assertEquals(this.rows, rows, name + ": rows");
      assertEquals(expectedKeySum, keySum, name + ": sum of keys");
      assertEquals(expectedDigitSum, digitSum, name + ": sum of the padding's digit");
      long spills = SortResources.metric(summaries, "numSpills");
      long spillBytes = SortResources.metric(summaries, "spillSize");
      long peakBytes = SortResources.metric(summaries, "peakMemory");
      System.out.printf("%s: %s: %.1f s, %d spills, %,d MiB spilled, peak %,d MiB%n",
          getClass().getSimpleName(), name, (System.nanoTime() - start) / 1e9, spills,
          spillBytes >> 20, peakBytes >> 20);
      assertTrue(spills > 0, name + ": no spill reported");
      checkPeak(name, peakBytes);
      SortResources.assertReleased(before, name);
    } finally {
      conf.keySet().forEach(spark.conf()::unset);
    }
  }

  /** Checks the sorts' peak memory (the sum over their tasks). */
  void checkPeak(String name, long peakBytes) {}

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
