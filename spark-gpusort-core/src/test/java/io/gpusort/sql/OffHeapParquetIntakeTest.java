package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.spark_partition_id;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.GpuSort;
import java.nio.file.Path;
import java.util.List;
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
 * The columnar intake above a Parquet scan of dictionary-encoded columns with nulls (issue 36):
 * the reader leaves a null row's dictionary id as it was (stale from an earlier batch with a
 * larger dictionary, or whatever off-heap memory held), so decoding it fails or gives garbage;
 * a null row's value must never be decoded. Read with Spark's on-heap and off-heap vectors,
 * sorted by the SQL replacement and by {@link GpuSort}, against Spark's own sort.
 */
class OffHeapParquetIntakeTest {
  private static final int ROWS = 12_000;
  private static final String OFF_HEAP = "spark.sql.columnVector.offheap.enabled";
  /** Small row groups: each has its own dictionary, of 50 values or of 7 in turns. */
  private static final String ROW_GROUP_BYTES = "16384";

  @TempDir
  static Path dir;
  private static String path;

  @BeforeAll
  static void writeParquet() {
    SparkSession spark = SparkTestSession.get();
    // Distinct values per stretch of 3000 rows: 50, then 7, in turns; one row in 5 null.
    String distinct = "CASE WHEN pmod(id div 3000, 2) = 0 THEN 50 ELSE 7 END";
    String pick = "pmod(xxhash64(id, 1L), " + distinct + ")";
    path = dir.resolve("dict").toString();
    spark.range(0, ROWS, 1, 1).selectExpr("id",
            nullable(2, pick + " * 1000000007L") + " AS c0",
            nullable(3, "cast(" + pick + " * 7919 - 100000 AS int)") + " AS c1",
            nullable(4, pick + " / 3.0D") + " AS c2",
            nullable(5, "concat('value-', cast(" + pick + " AS string))") + " AS c3")
        .write().option("parquet.block.size", ROW_GROUP_BYTES).parquet(path);
  }

  private static String nullable(int seed, String value) {
    return "CASE WHEN pmod(xxhash64(id, " + seed + "L), 5) = 0 THEN NULL ELSE " + value + " END";
  }

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  @AfterAll
  static void onHeapAgain() {
    SparkTestSession.get().conf().unset(OFF_HEAP);
  }

  @Test
  void offHeapVectors() {
    SparkTestSession.get().conf().set(OFF_HEAP, "true");
    // An expression over the column (the key comes from a projection), and the columns
    // themselves (keys encoded from the vector where the key is one fixed-width column).
    check("off heap, coalesce(c0, 0) desc", "coalesce(c0, 0)", true,
        expr("coalesce(c0, 0)").desc());
    check("off heap, c0", "c0", false, col("c0"));
    check("off heap, c1 desc", "c1", false, col("c1").desc_nulls_first());
    check("off heap, c2", "c2", false, col("c2").asc_nulls_last());
    check("off heap, c3, c0", "concat_ws('|', c3, c0)", false, col("c3"), col("c0").desc());
  }

  /** On heap a null row's id is stale from the batch before, of a larger dictionary. */
  @Test
  void onHeapVectors() {
    SparkTestSession.get().conf().set(OFF_HEAP, "false");
    check("on heap, c2 desc", "c2", false, col("c2").desc());
  }

  /**
   * Sorts the Parquet file's rows within partitions by {@code order} with Spark's sort, with the
   * SQL replacement and with {@link GpuSort#withinPartitions}, and where {@code global} also
   * globally with Spark's and with {@link GpuSort#byKey}; {@code key} is an expression equal for
   * two rows exactly where the order ties them.
   */
  private static void check(String what, String key, boolean global, Column... order) {
    SparkSession spark = SparkTestSession.get();
    Function<Dataset<Row>, Dataset<Row>> keyed =
        sorted -> sorted.select(col("*"), expr(key).as("sort_key"), spark_partition_id().as("p"));
    List<Row> expected = keyed.apply(spark.read().parquet(path).sortWithinPartitions(order))
        .collectAsList();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    List<Row> replaced;
    long before = ExternalRowSorter.columnarRowsTakenIn();
    try {
      replaced = keyed.apply(spark.read().parquet(path).sortWithinPartitions(order))
          .collectAsList();
    } finally {
      spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    }
    assertEquals(ROWS, ExternalRowSorter.columnarRowsTakenIn() - before,
        what + ": rows the replacement took from the scan's batches");
    List<Row> within = keyed.apply(spark.read().parquet(path)
        .transform(GpuSort.withinPartitions(order))).collectAsList();
    Function<Row, String> partitionAndKey = row -> textOf(row, "p") + "|" + textOf(row, "sort_key");
    SortedRowsCheck.assertSameOrder(what + ", SQL", expected, replaced, partitionAndKey,
        Row::toString);
    SortedRowsCheck.assertSameOrder(what + ", withinPartitions", expected, within,
        partitionAndKey, Row::toString);
    if (global) {
      Function<Dataset<Row>, Dataset<Row>> keyOnly =
          sorted -> sorted.select(col("*"), expr(key).as("sort_key"));
      List<Row> all = keyOnly.apply(spark.read().parquet(path).orderBy(order)).collectAsList();
      List<Row> byKey = keyOnly.apply(spark.read().parquet(path)
          .transform(GpuSort.byKey(order))).collectAsList();
      SortedRowsCheck.assertSameOrder(what + ", byKey", all, byKey,
          row -> textOf(row, "sort_key"), Row::toString);
    }
  }

  private static String textOf(Row row, String field) {
    return String.valueOf(row.get(row.fieldIndex(field)));
  }
}
