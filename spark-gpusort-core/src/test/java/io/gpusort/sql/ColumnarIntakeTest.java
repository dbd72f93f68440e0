package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The columnar intake: a sort within partitions above a cached relation or a Parquet scan of
 * fixed-width columns takes the scan's batches and writes the rows itself. Checked against
 * Spark's own sort of the same input, partition by partition, with nulls, NaN, -0.0 and extremes
 * in every column type it takes, and with spills; a schema it does not take (a string column)
 * goes through rows as before.
 */
class ColumnarIntakeTest {
  private static final int ROWS = 30_000;
  private static Dataset<Row> cached;

  @BeforeAll
  static void cacheInput() {
    // The cache hands out batches for numeric columns only (Spark's DefaultCachedBatchSerializer);
    // dates and timestamps are taken from Parquet below.
    cached = frame().drop("k_date", "k_ts").cache();
    cached.count();
  }

  @AfterAll
  static void uncache() {
    cached.unpersist();
  }

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  /** Columns of every fixed-width type the intake takes, one in 13 null, from the row id. */
  private static Dataset<Row> frame() {
    SparkSession spark = SparkTestSession.get();
    String isNull = "pmod(xxhash64(id, 1L), 13) = 0";
    return spark.range(0, ROWS, 1, 3).selectExpr(
        "id",
        nullable(isNull, "pmod(xxhash64(id, 2L), 2) = 0") + " AS k_bool",
        nullable(isNull, "cast(pmod(xxhash64(id, 3L), 256) - 128 AS tinyint)") + " AS k_byte",
        nullable(isNull, "cast(pmod(xxhash64(id, 4L), 65536) - 32768 AS smallint)") + " AS k_short",
        nullable(isNull, "cast(pmod(xxhash64(id, 5L), 4294967296) - 2147483648 AS int)")
            + " AS k_int",
        nullable(isNull, "xxhash64(id, 6L)") + " AS k_long",
        nullable(isNull, "CASE pmod(id, 40) WHEN 0 THEN cast('NaN' AS float) WHEN 1 THEN "
            + "cast(-0.0 AS float) WHEN 2 THEN cast(0.0 AS float) WHEN 3 THEN "
            + "cast('-Infinity' AS float) ELSE cast(xxhash64(id, 7L) / 1e12 AS float) END")
            + " AS k_float",
        nullable(isNull, "CASE pmod(id, 40) WHEN 0 THEN cast('NaN' AS double) WHEN 1 THEN -0.0D "
            + "WHEN 2 THEN 0.0D WHEN 3 THEN cast('Infinity' AS double) ELSE xxhash64(id, 8L) / 1e9 "
            + "END") + " AS k_double",
        nullable(isNull, "date_add(DATE'1970-01-01', cast(pmod(xxhash64(id, 9L), 80000) - 40000 "
            + "AS int))") + " AS k_date",
        nullable(isNull, "timestamp_micros(xxhash64(id, 10L) div 4096)") + " AS k_ts",
        "pmod(id, 7) AS few");
  }

  private static String nullable(String isNull, String value) {
    return "CASE WHEN " + isNull + " THEN NULL ELSE " + value + " END";
  }

  @Test
  void cachedInputOfEveryFixedWidthType() {
    for (String key : List.of("k_bool", "k_byte", "k_short", "k_int", "k_long", "k_float",
        "k_double")) {
      check("cached " + key, cached, List.of(col(key).asc_nulls_first(), col("id")), Map.of());
    }
    check("cached desc", cached, List.of(col("few").desc(), col("k_double").desc_nulls_last(),
        col("id")), Map.of());
  }

  @Test
  void spillsAndSeveralRuns() {
    check("cached, spilling", cached, List.of(col("k_long"), col("id")),
        Map.of("spark.gpusort.spill.rowsThreshold", "997"));
    check("cached, runs of 4k", cached, List.of(col("k_int").desc(), col("id")),
        Map.of("spark.gpusort.run.maxBytes", "4k", "spark.gpusort.chunk.maxBytes", "1k"));
  }

  @Test
  void parquetInputWithDatesAndTimestamps(@TempDir Path dir) {
    String path = dir.resolve("rows").toString();
    frame().write().parquet(path);
    Dataset<Row> parquet = SparkTestSession.get().read().parquet(path);
    check("parquet k_ts", parquet, List.of(col("k_ts").desc_nulls_first(), col("id")), Map.of());
    check("parquet k_date", parquet, List.of(col("k_date"), col("k_float"), col("id")), Map.of());
  }

  @Test
  void sqlSortWithinPartitionsTakesBatchesToo() {
    SparkSession spark = SparkTestSession.get();
    cached.createOrReplaceTempView("columnar_t");
    String query = "SELECT * FROM columnar_t SORT BY k_double, id";
    spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    List<List<Row>> expected = spark.sql(query).javaRDD().glom().collect();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    try {
      long before = ExternalRowSorter.columnarRowsTakenIn();
      List<List<Row>> actual = spark.sql(query).javaRDD().glom().collect();
      assertEquals(text(expected.stream().flatMap(List::stream).toList()),
          text(actual.stream().flatMap(List::stream).toList()));
      assertEquals(ROWS, ExternalRowSorter.columnarRowsTakenIn() - before);
    } finally {
      spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    }
  }

  @Test
  void stringColumnsGoThroughRows() {
    Dataset<Row> withText = cached.selectExpr("id", "k_long", "cast(id AS string) AS text")
        .cache();
    try {
      long before = ExternalRowSorter.columnarRowsTakenIn();
      Dataset<Row> sorted = withText.transform(GpuSort.withinPartitions(col("k_long")));
      assertEquals(ROWS, sorted.collectAsList().size());
      SparkTestSession.get().conf().set("spark.gpusort.intake.columnar", "false");
      assertEquals(ROWS, cached.transform(GpuSort.withinPartitions(col("k_long")))
          .collectAsList().size());
      assertEquals(0, ExternalRowSorter.columnarRowsTakenIn() - before,
          "rows taken from batches with a string column, or with the intake off");
    } finally {
      withText.unpersist();
    }
  }

  /**
   * GpuSort's sort within partitions of {@code input} under {@code conf} against Spark's: same
   * rows in the same order in every partition (the id as the last key makes the order total),
   * every row taken in from batches.
   */
  private static void check(String what, Dataset<Row> input, List<Column> order,
      Map<String, String> conf) {
    Column[] columns = order.toArray(new Column[0]);
    List<List<Row>> expected = input.sortWithinPartitions(columns).javaRDD().glom().collect();
    SparkSession spark = SparkTestSession.get();
    conf.forEach((k, v) -> spark.conf().set(k, v));
    try {
      long before = ExternalRowSorter.columnarRowsTakenIn();
      Dataset<Row> sorted = input.transform(GpuSort.withinPartitions(columns));
      List<List<Row>> actual = new ArrayList<>(sorted.javaRDD().glom().collect());
      assertTrue(ExternalRowSorter.columnarRowsTakenIn() - before >= ROWS,
          what + ": the rows did not come from the scan's batches");
      assertEquals(expected.size(), actual.size(), what + ": partitions");
      for (int p = 0; p < expected.size(); p++) {
        assertEquals(text(expected.get(p)), text(actual.get(p)), what + ": partition " + p);
      }
    } finally {
      conf.keySet().forEach(k -> spark.conf().unset(k));
    }
  }

  /** Rows as text: NaN and -0.0 print as Spark's rows hold them. */
  private static List<String> text(List<Row> rows) {
    Function<Row, String> show = Row::toString;
    return rows.stream().map(show).toList();
  }
}
