package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Spark SQL's own sorts with the extension (io.gpusort.spark.GpuSortExtensions): the same queries
 * with the replacement on and off give identical results, and the plan shows the engine's node
 * where the keys are supported and Spark's SortExec where they are not or where it is off.
 */
class SqlExtensionTest {
  private static final int ROWS = 4_000;
  /** Spark's SortExec in a plan string ("Sort [...]", not the engine's "GpuSort [...]"). */
  private static final String SPARK_SORT = "(?<![A-Za-z])Sort \\[";
  /** The engine's nodes: the sort, and the exchange that sorts, cuts and merges (ORDER BY). */
  private static final String GPU_SORT = "(GpuSort|GpuRangeSortExchange) \\[";

  private SparkSession spark;

  @BeforeEach
  void data() {
    spark = SparkTestSession.get();
    // Doubles with NaN, -0.0, infinities and nulls; strings with nulls and shared prefixes.
    spark.range(0, ROWS, 1, 3).selectExpr("id",
        "CAST(id % 37 AS INT) AS g",
        "CASE WHEN id % 11 = 0 THEN NULL WHEN id % 13 = 0 THEN CAST('NaN' AS DOUBLE) "
            + "WHEN id % 17 = 0 THEN -0.0 WHEN id % 19 = 0 THEN CAST('-Infinity' AS DOUBLE) "
            + "ELSE (id * 7919 % 1000) / 7.0 - 70 END AS d",
        "CASE WHEN id % 23 = 0 THEN NULL ELSE concat('key-', CAST(id * 31 % 97 AS STRING)) END AS s",
        "array(id % 5, id % 3) AS a")
        .createOrReplaceTempView("t");
  }

  @AfterEach
  void reset() {
    SparkTestSession.resetGpuSortConf();
    spark.conf().unset("spark.sql.autoBroadcastJoinThreshold");
    spark.catalog().dropTempView("t");
  }

  @Test
  void orderByRunsOnTheEngineWithSparksResult() {
    String query = "SELECT * FROM t ORDER BY d DESC NULLS LAST, s, id";
    List<Row> spark0 = run(false, () -> spark.sql(query), SPARK_SORT, GPU_SORT);
    List<Row> ours = run(true, () -> spark.sql(query), GPU_SORT, SPARK_SORT);
    assertEquals(spark0, ours);
  }

  @Test
  void datasetSortAndSortWithinPartitions() {
    Supplier<Dataset<Row>> sorted = () -> spark.table("t").sort(col("s").asc_nulls_last(),
        col("d"), col("id"));
    assertEquals(run(false, sorted, SPARK_SORT, GPU_SORT), run(true, sorted, GPU_SORT, SPARK_SORT));

    // Rows tagged with their partition: the same rows in the same order in every partition.
    Supplier<Dataset<Row>> within = () -> spark.table("t").repartition(4, col("g"))
        .sortWithinPartitions(col("d").desc(), col("id"))
        .selectExpr("spark_partition_id() AS p", "id", "d");
    assertEquals(run(false, within, SPARK_SORT, GPU_SORT), run(true, within, GPU_SORT, SPARK_SORT));
  }

  @Test
  void sortMergeJoinSortsRunOnTheEngine() {
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    Supplier<Dataset<Row>> join = () -> spark.sql(
        "SELECT l.id, r.id AS rid, l.s FROM t l JOIN t r ON l.s = r.s AND l.g = r.g");
    List<Row> spark0 = sortedOnHost(run(false, join, "SortMergeJoin", GPU_SORT));
    List<Row> ours = sortedOnHost(run(true, join, GPU_SORT, SPARK_SORT));
    assertTrue(ours.size() > ROWS, "join rows: " + ours.size());
    assertEquals(spark0, ours);
    // The join's sorts ran the row path's stages: both sides' rows (but those with null join
    // keys, filtered out first) taken in, sorted, handed on.
    long sorted = SortResources.metric(lastQuery, "numOutputRows");
    assertTrue(sorted > ROWS && sorted <= 2L * ROWS, "rows through the join's sorts: " + sorted);
    assertTrue(SortResources.metric(lastQuery, "engineChunks") >= 2);
    assertTrue(SortResources.metric(lastQuery, "deviceSortTime") > 0);
  }

  @Test
  void windowSortsRunOnTheEngine() {
    Supplier<Dataset<Row>> window = () -> spark.sql("SELECT id, g, "
        + "row_number() OVER (PARTITION BY g ORDER BY d, id) AS rn, "
        + "sum(id) OVER (PARTITION BY g ORDER BY s NULLS LAST, id) AS running FROM t");
    List<Row> spark0 = sortedOnHost(run(false, window, "Window", GPU_SORT));
    List<Row> ours = sortedOnHost(run(true, window, GPU_SORT, SPARK_SORT));
    assertEquals(spark0, ours);
  }

  @Test
  void unsupportedKeysStayOnSparksSort() {
    String query = "SELECT id, a FROM t ORDER BY a, id";
    List<Row> spark0 = run(false, () -> spark.sql(query), SPARK_SORT, GPU_SORT);
    List<Row> ours = run(true, () -> spark.sql(query), SPARK_SORT, GPU_SORT);
    assertEquals(spark0, ours);
  }

  @Test
  void explainShowsWhichSortRunsWhere() {
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    String on = explain("SELECT * FROM t ORDER BY d, id");
    assertTrue(contains(on, GPU_SORT), on);
    assertFalse(contains(on, SPARK_SORT), on);
    spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    String off = explain("SELECT * FROM t ORDER BY d, id");
    assertTrue(contains(off, SPARK_SORT), off);
    assertFalse(contains(off, GPU_SORT), off);
  }

  /** The query {@link #run} ran last, for its metrics. */
  private Dataset<Row> lastQuery;

  private String explain(String query) {
    StringBuilder text = new StringBuilder();
    for (Row row : spark.sql("EXPLAIN " + query).collectAsList()) {
      text.append(row.getString(0));
    }
    return text.toString();
  }

  /**
   * Runs the query with the replacement on or off and returns its rows; the executed plan (after
   * adaptive execution) must match the pattern {@code present} and not {@code absent}.
   */
  private List<Row> run(boolean enabled, Supplier<Dataset<Row>> query, String present,
      String absent) {
    spark.conf().set(SparkTestSession.SQL_ENABLED, Boolean.toString(enabled));
    Dataset<Row> ds = query.get();
    lastQuery = ds;
    List<Row> rows = ds.collectAsList();
    String plan = ds.queryExecution().executedPlan().toString();
    assertTrue(contains(plan, present), "enabled=" + enabled + ", no " + present + " in\n" + plan);
    assertFalse(contains(plan, absent), "enabled=" + enabled + ", " + absent + " in\n" + plan);
    return rows;
  }

  private static boolean contains(String text, String regex) {
    return Pattern.compile(regex).matcher(text).find();
  }

  private static List<Row> sortedOnHost(List<Row> rows) {
    List<Row> copy = new ArrayList<>(rows);
    copy.sort(Comparator.comparing(Row::toString));
    return copy;
  }
}
