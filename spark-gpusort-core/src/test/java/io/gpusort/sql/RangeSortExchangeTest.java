package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The global sort as one exchange ({@link GpuRangeSortExchangeExec}, {@code global.mode=merge}):
 * SQL {@code ORDER BY} through the extension and {@code GpuSort.byKey} are planned as it, with
 * adaptive execution on and off; adaptive execution sees it as a query stage (coalesces its small
 * partitions, reuses it) and the result is Spark's every time. The keys {@code (k, id)} are unique,
 * so Spark's order is the only right one and results compare as lists.
 */
class RangeSortExchangeTest {
  private static final int ROWS = 20_000;
  private static final String EXCHANGE = "GpuRangeSortExchange [";
  private static final String ADAPTIVE = "spark.sql.adaptive.enabled";
  private static final String COALESCE = "spark.sql.adaptive.coalescePartitions.enabled";

  private SparkSession spark;

  @BeforeEach
  void data() {
    spark = SparkTestSession.get();
    // k: 1000 values, each on 20 rows; s: strings with nulls and a shared prefix.
    spark.range(0, ROWS, 1, 4).selectExpr("id", "(id * 7919) % 1000 AS k",
        "CASE WHEN id % 29 = 0 THEN NULL ELSE concat('row-', CAST(id % 97 AS STRING)) END AS s")
        .createOrReplaceTempView("r");
  }

  @AfterEach
  void reset() {
    SparkTestSession.resetGpuSortConf();
    for (String key : List.of(ADAPTIVE, COALESCE, "spark.sql.adaptive.advisoryPartitionSizeInBytes",
        "spark.sql.adaptive.coalescePartitions.parallelismFirst")) {
      spark.conf().unset(key);
    }
    spark.conf().set("spark.sql.shuffle.partitions",
        String.valueOf(SparkTestSession.SHUFFLE_PARTITIONS));
    spark.catalog().dropTempView("r");
  }

  @ParameterizedTest(name = "adaptive={0}")
  @ValueSource(booleans = {true, false})
  void orderByIsOneExchangeWithSparksResult(boolean adaptive) {
    spark.conf().set(ADAPTIVE, Boolean.toString(adaptive));
    String query = "SELECT * FROM r ORDER BY s DESC NULLS LAST, k, id";
    List<Row> expected = sparks(() -> spark.sql(query));

    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    Dataset<Row> sorted = spark.sql(query);
    List<Row> rows = sorted.collectAsList();
    assertEquals(expected, rows);
    String plan = plan(sorted);
    assertTrue(plan.contains(EXCHANGE), plan);
    // Spark's range exchange and its sort are both gone: one shuffle, of sorted blocks.
    assertFalse(plan.contains("rangepartitioning"), plan);
    assertFalse(Pattern.compile("(?<![A-Za-z])Sort \\[").matcher(plan).find(), plan);
    assertEquals(adaptive, plan.contains("ShuffleQueryStage"), plan);
    // Every row went through the shuffle once, and was handed on once by the merge.
    assertEquals(ROWS, SortResources.metric(sorted, "rowsWritten"));
    assertEquals(ROWS, SortResources.metric(sorted, "numOutputRows"));
    assertTrue(SortResources.metric(sorted, "dataSize") >= ROWS * 24L);
  }

  @ParameterizedTest(name = "adaptive={0}")
  @ValueSource(booleans = {true, false})
  void byKeyIsTheSameExchange(boolean adaptive) {
    spark.conf().set(ADAPTIVE, Boolean.toString(adaptive));
    List<Row> expected = sparks(() -> spark.table("r").orderBy(col("k").desc(), col("id")));
    Dataset<Row> sorted = spark.table("r").transform(GpuSort.byKey(col("k").desc(), col("id")));
    assertEquals(expected, sorted.collectAsList());
    String plan = plan(sorted);
    assertTrue(plan.contains(EXCHANGE), plan);
    assertEquals(adaptive, plan.contains("ShuffleQueryStage"), plan);
  }

  @Test
  void adaptiveExecutionCoalescesTheExchangesPartitions() {
    spark.conf().set(ADAPTIVE, "true");
    spark.conf().set(COALESCE, "true");
    spark.conf().set("spark.sql.adaptive.coalescePartitions.parallelismFirst", "false");
    spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64k");
    spark.conf().set("spark.sql.shuffle.partitions", "40");
    // Rows of about 230 bytes that the shuffle's codec shrinks several times: chosen by their
    // size, 40 output partitions; by the bytes the shuffle wrote, a few, which AQE makes them.
    Dataset<Row> wide = spark.table("r").selectExpr("k", "id", "repeat('x', 200) AS pad");
    List<Row> expected = sparks(() -> wide.orderBy("k", "id"));
    Dataset<Row> sorted = wide.transform(GpuSort.byKey("k", "id"));
    List<Row> rows = sorted.collectAsList();
    assertEquals(expected, rows);
    String plan = plan(sorted);
    assertTrue(plan.contains("AQEShuffleRead coalesced"), plan);
    assertTrue(plan.contains(EXCHANGE), plan);
    int partitions = sorted.queryExecution().executedPlan().execute().getNumPartitions();
    assertTrue(partitions < 40, partitions + " partitions after coalescing\n" + plan);

    // A count the user fixed is kept.
    spark.conf().set("spark.gpusort.global.partitions", "40");
    Dataset<Row> fixed = wide.transform(GpuSort.byKey("k", "id"));
    assertEquals(expected, fixed.collectAsList());
    assertEquals(40, fixed.queryExecution().executedPlan().execute().getNumPartitions(),
        plan(fixed));
  }

  @ParameterizedTest(name = "adaptive={0}")
  @ValueSource(booleans = {true, false})
  void anIdenticalExchangeIsReused(boolean adaptive) {
    spark.conf().set(ADAPTIVE, Boolean.toString(adaptive));
    Supplier<Dataset<Row>> twice = () -> {
      Dataset<Row> sorted = spark.sql("SELECT k, id FROM r ORDER BY k, id");
      return sorted.union(sorted);
    };
    List<Row> expected = sparks(twice);
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    Dataset<Row> both = twice.get();
    assertEquals(expected, both.collectAsList());
    String plan = plan(both);
    assertTrue(plan.contains("ReusedExchange"), plan);
    // The reused exchange ran once: its rows went through the shuffle once.
    assertEquals(1, SortResources.sortNodes(both).size(), plan);
    assertEquals(ROWS, SortResources.metric(both, "rowsWritten"));
  }

  @Test
  void sortModeKeepsSparksRangeExchange() {
    spark.conf().set("spark.gpusort.global.mode", "sort");
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    Dataset<Row> sorted = spark.sql("SELECT * FROM r ORDER BY k, id");
    List<Row> rows = sorted.collectAsList();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    assertEquals(spark.sql("SELECT * FROM r ORDER BY k, id").collectAsList(), rows);
    String plan = plan(sorted);
    assertTrue(plan.contains("GpuSort ["), plan);
    assertTrue(plan.contains("rangepartitioning"), plan);
    assertFalse(plan.contains(EXCHANGE), plan);
  }

  @Test
  void emptyAndOnePartitionInputs() {
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    Dataset<Row> none = spark.sql("SELECT * FROM r WHERE id < 0 ORDER BY k, id");
    assertEquals(0, none.collectAsList().size());
    assertTrue(plan(none).contains(EXCHANGE), plan(none));

    spark.conf().set("spark.gpusort.global.partitions", "1");
    Dataset<Row> one = spark.table("r").transform(GpuSort.byKey(col("s"), col("id")));
    List<Row> rows = one.collectAsList();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    assertEquals(spark.table("r").orderBy(col("s"), col("id")).collectAsList(), rows);
  }

  /**
   * Above a cache whose rows are all of one width, the bounds are sampled from a scan of the key
   * columns alone; with a string column among the rows, from the rows. Either way the result is
   * Spark's.
   */
  @Test
  void boundsAboveAColumnarScanAreSampledFromTheKeyColumns() {
    Dataset<Row> numbers = spark.table("r").selectExpr("k", "id", "id * 3 AS p").cache();
    Dataset<Row> withStrings = spark.table("r").cache();
    try {
      numbers.count();
      withStrings.count();
      List<Row> expected = sparks(() -> numbers.orderBy(col("k").desc(), col("id")));
      long before = GpuRangeSortExchangeExec.keyColumnSamples();
      Dataset<Row> sorted = numbers.transform(GpuSort.byKey(col("k").desc(), col("id")));
      assertEquals(expected, sorted.collectAsList());
      assertEquals(before + 1, GpuRangeSortExchangeExec.keyColumnSamples());

      expected = sparks(() -> withStrings.orderBy("k", "id"));
      Dataset<Row> rows = withStrings.transform(GpuSort.byKey("k", "id"));
      assertEquals(expected, rows.collectAsList());
      assertEquals(before + 1, GpuRangeSortExchangeExec.keyColumnSamples());
    } finally {
      numbers.unpersist(true);
      withStrings.unpersist(true);
    }
  }

  /** The same above a Parquet scan: its key columns are read alone for the bounds. */
  @Test
  void boundsAboveAParquetScanAreSampledFromTheKeyColumns(@TempDir Path dir) {
    String path = dir.resolve("numbers").toString();
    spark.table("r").selectExpr("k", "id", "id * 3 AS p").write().parquet(path);
    Dataset<Row> numbers = spark.read().parquet(path);
    List<Row> expected = sparks(() -> numbers.orderBy(col("k"), col("id").desc()));
    long before = GpuRangeSortExchangeExec.keyColumnSamples();
    Dataset<Row> sorted = numbers.transform(GpuSort.byKey(col("k"), col("id").desc()));
    assertEquals(expected, sorted.collectAsList());
    assertEquals(before + 1, GpuRangeSortExchangeExec.keyColumnSamples());
  }

  /** Spark's own result for {@code query}, with the extension off. */
  private List<Row> sparks(Supplier<Dataset<Row>> query) {
    String before = spark.conf().get(SparkTestSession.SQL_ENABLED, "false");
    spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    try {
      return query.get().collectAsList();
    } finally {
      spark.conf().set(SparkTestSession.SQL_ENABLED, before);
    }
  }

  /** The executed plan (after adaptive execution, its final plan) as text. */
  private static String plan(Dataset<Row> query) {
    return query.queryExecution().executedPlan().toString();
  }
}
