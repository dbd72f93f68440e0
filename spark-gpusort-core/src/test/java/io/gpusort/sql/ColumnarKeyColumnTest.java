package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The columnar intake's key encoding from the column vector itself, taken where the key is one
 * fixed-width column: for each type, ascending and descending, the keys come out in Spark's order
 * (NaN, -0.0 and infinities included) and every partition holds the same rows as Spark's sort of
 * it (equal keys may come in another order: the key is all that is sorted on). Nullable columns
 * (as every column read from Parquet is) with nulls in them: ascending with nulls first,
 * descending with nulls last.
 */
class ColumnarKeyColumnTest {
  private static final int ROWS = 40_000;
  private static Dataset<Row> cached;

  @BeforeAll
  static void cacheInput() {
    cached = SparkTestSession.get().range(0, ROWS, 1, 3).selectExpr(
        "id",
        // pmod is nullable (a zero divisor): coalesce makes the columns non-null.
        "cast(coalesce(pmod(xxhash64(id, 3L), 256), 0) - 128 AS tinyint) AS n_byte",
        "cast(coalesce(pmod(xxhash64(id, 4L), 65536), 0) - 32768 AS smallint) AS n_short",
        "cast(coalesce(pmod(xxhash64(id, 5L), 4294967296), 0) - 2147483648 AS int) AS n_int",
        "xxhash64(id, 6L) AS n_long",
        "coalesce(CASE coalesce(pmod(id, 40), 5) WHEN 0 THEN cast('NaN' AS float) WHEN 1 THEN cast(-0.0 AS float) "
            + "WHEN 2 THEN cast(0.0 AS float) WHEN 3 THEN cast('-Infinity' AS float) "
            + "ELSE cast(xxhash64(id, 7L) / 1e12 AS float) END, cast(1.5 AS float)) AS n_float",
        "coalesce(CASE coalesce(pmod(id, 40), 5) WHEN 0 THEN cast('NaN' AS double) WHEN 1 THEN -0.0D WHEN 2 THEN 0.0D "
            + "WHEN 3 THEN cast('Infinity' AS double) ELSE xxhash64(id, 8L) / 1e9 END, 1.5D) "
            + "AS n_double")
        // Every seventh value null, the first row of each partition's batches among them.
        .selectExpr("*", nullable("n_byte"), nullable("n_short"), nullable("n_int"),
            nullable("n_long"), nullable("n_float"), nullable("n_double"))
        .cache();
    cached.count();
    for (String c : List.of("n_byte", "n_short", "n_int", "n_long", "n_float", "n_double")) {
      assertTrue(!cached.schema().apply(c).nullable(), c + " is nullable: the test needs non-null");
      assertTrue(cached.schema().apply(c.replace("n_", "o_")).nullable(), c + "'s twin: nullable");
    }
  }

  /** {@code column} with every seventh row's value null, as o_ and the type. */
  private static String nullable(String column) {
    return "CASE WHEN pmod(id, 7) = 0 THEN NULL ELSE " + column + " END AS "
        + column.replace("n_", "o_");
  }

  @AfterAll
  static void uncache() {
    cached.unpersist();
  }

  @Test
  void soleNonNullKeysAreEncodedFromTheirColumns() {
    for (String key : List.of("n_byte", "n_short", "n_int", "n_long", "n_float", "n_double")) {
      check(key + " asc", col(key).asc(), key);
      check(key + " desc", col(key).desc(), key);
    }
  }

  @Test
  void soleNullableKeysAreEncodedFromTheirColumns() {
    // The null flag follows nulls first or last and the value's bits the direction, each on its
    // own: two orders take both ways of each.
    for (String key : List.of("o_byte", "o_short", "o_int", "o_long", "o_float", "o_double")) {
      check(key + " asc nulls first", col(key).asc_nulls_first(), key);
      check(key + " desc nulls last", col(key).desc_nulls_last(), key);
    }
  }

  private static void check(String what, Column order, String key) {
    List<List<Row>> expected = cached.sortWithinPartitions(order).javaRDD().glom().collect();
    long before = RunBuilder.keysEncodedFromColumns();
    List<List<Row>> actual =
        cached.transform(GpuSort.withinPartitions(order)).javaRDD().glom().collect();
    assertEquals(ROWS, RunBuilder.keysEncodedFromColumns() - before,
        what + ": keys not encoded from the column");
    assertEquals(expected.size(), actual.size(), what + ": partitions");
    int index = cached.schema().fieldIndex(key);
    for (int p = 0; p < expected.size(); p++) {
      assertEquals(keys(expected.get(p), index), keys(actual.get(p), index),
          what + ": keys of partition " + p);
      assertEquals(sortedText(expected.get(p)), sortedText(actual.get(p)),
          what + ": rows of partition " + p);
    }
  }

  /**
   * The keys of {@code rows} as text, -0.0 written as 0.0: Spark's ordering holds the two equal, so
   * either sort may put them in any order among themselves.
   */
  private static List<String> keys(List<Row> rows, int index) {
    return rows.stream().map(r -> {
      Object key = r.get(index);
      boolean zero = (key instanceof Double d && d == 0.0) || (key instanceof Float f && f == 0.0f);
      return zero ? "0.0" : String.valueOf(key);
    }).toList();
  }

  private static List<String> sortedText(List<Row> rows) {
    List<String> text = new ArrayList<>(rows.stream().map(Row::toString).toList());
    text.sort(null);
    return text;
  }
}
