package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.spark_partition_id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.GpuSort;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
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
 * The columnar intake: a sort within partitions above a cached relation or a Parquet or ORC scan
 * takes the scan's batches and writes the rows itself. Checked against Spark's own sort of the
 * same input, partition by partition, with nulls, NaN, -0.0 and extremes in every fixed-width
 * column type, with strings (empty, multi-byte, longer than 64 bytes, sharing long prefixes),
 * binaries and decimals compact and wide as keys and as payload, with small pages and spills. The
 * in-memory cache hands out batches of numeric columns only: with intake.cacheBatches on, the node
 * reads the batches of a cache with strings and binaries itself; one with decimals goes through
 * rows.
 */
class ColumnarIntakeTest {
  private static final int ROWS = 30_000;
  private static final String CACHE_BATCHES = "spark.gpusort.intake.cacheBatches";
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

  /**
   * Strings, binaries and decimals, each null for about one row in 13: a string key (empty,
   * multi-byte, 128 characters, a 30-character shared prefix, else 10 characters), a 90-character
   * payload, binaries of 0 to 32 bytes or the key's bytes, decimal(10,2) and decimal(30,5).
   */
  private static Dataset<Row> textFrame() {
    SparkSession spark = SparkTestSession.get();
    String hex = "sha2(cast(id AS string), 256)";
    return spark.range(0, ROWS, 1, 3).selectExpr("id", "pmod(id, 7) AS few",
        nullable(isNull(21), "CASE pmod(id, 37) WHEN 0 THEN '' WHEN 1 THEN repeat('ü', 40) "
            + "WHEN 2 THEN concat('漢字', cast(pmod(id, 100) AS string)) "
            + "WHEN 3 THEN sha2(cast(id AS string), 512) "
            + "WHEN 4 THEN concat(repeat('p', 30), cast(pmod(id, 100) AS string)) "
            + "ELSE substring(" + hex + ", 1, 10) END") + " AS s_key",
        nullable(isNull(22), "concat('é', substring(sha2(cast(id AS string), 512), 1, 89))")
            + " AS payload",
        nullable(isNull(23), "unhex(substring(" + hex + ", 1, 2 * pmod(id, 33)))") + " AS bin",
        nullable(isNull(24), "cast(pmod(xxhash64(id, 11L), 19999999999L) - 9999999999L AS "
            + "decimal(12, 0)) / 100") + " AS d10_raw",
        nullable(isNull(25), "cast(concat(cast(xxhash64(id, 12L) AS string), "
            + "cast(pmod(xxhash64(id, 13L), 100000) AS string), '.', "
            + "lpad(cast(pmod(id, 100000) AS string), 5, '0')) AS decimal(30, 5))") + " AS d30")
        .selectExpr("*", "cast(d10_raw AS decimal(10, 2)) AS d10").drop("d10_raw")
        .selectExpr("*", "CASE WHEN pmod(id, 3) = 0 THEN cast(s_key AS binary) ELSE bin END "
            + "AS bytes").drop("bin");
  }

  private static String isNull(int seed) {
    return "pmod(xxhash64(id, " + seed + "L), 13) = 0";
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

  /**
   * A global sort in merge mode sorts each input partition as a sort within it does: above the
   * cache and a Parquet scan its map side takes the batches, and the whole order is Spark's.
   */
  @Test
  void mergeModesMapSideTakesBatches(@TempDir Path dir) {
    String path = dir.resolve("text").toString();
    textFrame().write().parquet(path);
    Dataset<Row> parquet = SparkTestSession.get().read().parquet(path);
    SparkSession spark = SparkTestSession.get();
    spark.conf().set("spark.gpusort.global.mode", "merge");
    try {
      for (Dataset<Row> input : List.of(cached, parquet)) {
        String key = input == cached ? "k_long" : "s_key";
        Column[] order = {col(key).desc_nulls_first(), col("id")};
        List<Row> expected = input.orderBy(order).collectAsList();
        long before = ExternalRowSorter.columnarRowsTakenIn();
        Dataset<Row> sorted = input.transform(GpuSort.byKey(order));
        List<Row> actual = sorted.collectAsList();
        assertEquals(ROWS, ExternalRowSorter.columnarRowsTakenIn() - before,
            key + ": rows the map side took from batches");
        assertEquals(ROWS, SortResources.metric(sorted, "columnarRows"), key + ": columnarRows");
        assertEquals(text(expected), text(actual), key + " descending, merge mode");
      }
    } finally {
      spark.conf().unset("spark.gpusort.global.mode");
    }
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
  void parquetStringsBinariesAndDecimals(@TempDir Path dir) {
    String path = dir.resolve("text").toString();
    textFrame().write().parquet(path);
    Dataset<Row> parquet = SparkTestSession.get().read().parquet(path);
    check("parquet s_key", parquet, List.of(col("s_key").asc_nulls_first(), col("id")),
        Map.of());
    check("parquet payload desc", parquet, List.of(col("payload").desc(), col("id")), Map.of());
    check("parquet bytes", parquet, List.of(col("bytes"), col("id")), Map.of());
    check("parquet d10 desc", parquet, List.of(col("d10").desc_nulls_last(), col("id")),
        Map.of());
    check("parquet d30", parquet, List.of(col("d30"), col("few"), col("id")), Map.of());
    check("parquet few, s_key desc, pages of 1k", parquet,
        List.of(col("few"), col("s_key").desc(), col("id")),
        Map.of("spark.gpusort.run.maxBytes", "64k", "spark.gpusort.chunk.maxBytes", "1k"));
    check("parquet s_key, spilling", parquet, List.of(col("s_key"), col("id")),
        Map.of("spark.gpusort.spill.rowsThreshold", "997"));
  }

  @Test
  void orcStringsBinariesAndDecimals(@TempDir Path dir) {
    String path = dir.resolve("text").toString();
    textFrame().write().orc(path);
    Dataset<Row> orc = SparkTestSession.get().read().orc(path);
    check("orc d30 desc", orc, List.of(col("d30").desc(), col("id")), Map.of());
    check("orc s_key, bytes", orc, List.of(col("s_key"), col("bytes"), col("id")), Map.of());
  }

  /**
   * A cache of strings and binaries (no decimals) is read from its batches by the node itself
   * where {@code intake.cacheBatches} is on, as it is by default (rows otherwise):
   * values as they are, in runs (a key that changes every 1000 rows) and from a dictionary (one
   * of 50 values), with nulls, and a column of nulls only; the same rows in the same order as
   * Spark's sort of the cached rows.
   */
  @Test
  void cachedStringsAndBinariesAreReadFromTheCachedBatches() {
    Dataset<Row> cachedText = textFrame().drop("d10", "d30")
        .selectExpr("*",
            nullable(isNull(26), "concat('run-', cast(id div 1000 AS string))") + " AS runs",
            nullable(isNull(27), "concat('dict-', cast(pmod(xxhash64(id, 14L), 50) AS string))")
                + " AS dict",
            "cast(NULL AS string) AS nothing")
        .cache();
    try {
      cachedText.count();
      long batches = CachedBatchColumns.batchesRead();
      long[] schemes = new long[3];
      for (int k = 0; k < 3; k++) {
        schemes[k] = CachedBytesVector.columnsDecoded(k);
      }
      Map<String, String> on = Map.of(CACHE_BATCHES, "true");
      check("cached s_key, on by default", cachedText,
          List.of(col("s_key").asc_nulls_first(), col("id")), Map.of());
      check("cached payload desc", cachedText, List.of(col("payload").desc(), col("id")), on);
      check("cached bytes", cachedText, List.of(col("bytes"), col("id")), on);
      check("cached runs desc, dict", cachedText,
          List.of(col("runs").desc_nulls_last(), col("dict"), col("id")), on);
      check("cached dict, pages of 1k", cachedText, List.of(col("dict"), col("id")),
          Map.of(CACHE_BATCHES, "true", "spark.gpusort.run.maxBytes", "64k",
              "spark.gpusort.chunk.maxBytes", "1k"));
      check("cached s_key, spilling", cachedText, List.of(col("s_key"), col("id")),
          Map.of(CACHE_BATCHES, "true", "spark.gpusort.spill.rowsThreshold", "997"));
      check("cached s_key, off", cachedText, List.of(col("s_key"), col("id")),
          Map.of(CACHE_BATCHES, "false"), false);
      assertTrue(CachedBatchColumns.batchesRead() > batches, "no cached batch read");
      for (int k = 0; k < 3; k++) {
        assertTrue(CachedBytesVector.columnsDecoded(k) > schemes[k],
            "no cached column of compression scheme " + k + " read");
      }
    } finally {
      cachedText.unpersist();
    }
  }

  /**
   * A cache of numbers only, which Spark's scan would hand out as batches itself, is read by the
   * node from the cached batches, one set of vectors per task reused batch after batch: batches
   * of 1000 rows (so that each task decodes many into the same vectors), every other one with
   * nulls (a batch after one with nulls must not keep its null flags), columns stored as they
   * are, as deltas (the id) and in runs (a value that changes every 1000 rows); the same rows in
   * the same order as Spark's sort, and with cacheBatches off through Spark's batches.
   */
  @Test
  void cachedNumbersAreReadFromTheCachedBatchesInReusedVectors() {
    SparkSession spark = SparkTestSession.get();
    String batchSizeKey = "spark.sql.inMemoryColumnarStorage.batchSize";
    String before = spark.conf().get(batchSizeKey);
    String nullInOddBatches = "pmod(id div 1000, 2) = 1 AND pmod(xxhash64(id, 31L), 5) = 0";
    Dataset<Row> numbers = spark.range(0, ROWS, 1, 3).selectExpr("id",
        nullable(nullInOddBatches, "xxhash64(id, 32L)") + " AS k_long",
        nullable(nullInOddBatches, "cast(xxhash64(id, 33L) / 1e9 AS double)") + " AS k_double",
        nullable(nullInOddBatches, "cast(pmod(xxhash64(id, 34L), 1000) AS int)") + " AS k_int",
        "cast(id div 1000 AS int) AS runs");
    spark.conf().set(batchSizeKey, "1000");
    Dataset<Row> cachedNumbers;
    try {
      cachedNumbers = numbers.cache();
      cachedNumbers.count();
    } finally {
      spark.conf().set(batchSizeKey, before);
    }
    try {
      long batches = CachedBatchColumns.batchesRead();
      check("cached numbers, k_long", cachedNumbers, List.of(col("k_long"), col("id")), Map.of());
      check("cached numbers, k_double desc", cachedNumbers,
          List.of(col("k_double").desc_nulls_first(), col("id")), Map.of());
      check("cached numbers, runs desc, k_int", cachedNumbers,
          List.of(col("runs").desc(), col("k_int"), col("id")), Map.of());
      long read = CachedBatchColumns.batchesRead() - batches;
      assertTrue(read >= 3L * ROWS / 1000, "the node read " + read + " cached batches, not "
          + "every batch of the three sorts");
      check("cached numbers, cacheBatches off", cachedNumbers,
          List.of(col("k_long"), col("id")), Map.of(CACHE_BATCHES, "false"));
      assertEquals(batches + read, CachedBatchColumns.batchesRead(),
          "with cacheBatches off, Spark's scan hands out the batches");
    } finally {
      cachedNumbers.unpersist();
    }
  }

  @Test
  void cachedDecimalsGoThroughRows() {
    Dataset<Row> cachedText = textFrame().cache();
    try {
      check("cached s_key", cachedText, List.of(col("s_key"), col("id")),
          Map.of(CACHE_BATCHES, "true"), false);
      check("cached, intake off", cached, List.of(col("k_long"), col("id")),
          Map.of("spark.gpusort.intake.columnar", "false"), false);
    } finally {
      cachedText.unpersist();
    }
  }

  private static void check(String what, Dataset<Row> input, List<Column> order,
      Map<String, String> conf) {
    check(what, input, order, conf, true);
  }

  /**
   * GpuSort's sort within partitions of {@code input} under {@code conf} against Spark's: same
   * rows in the same order in every partition (the id as the last key makes the order total; each
   * row carries its partition's id), every row taken in from batches when {@code columnar}, none
   * otherwise (by the process's count and by the node's {@code columnarRows} metric).
   */
  private static void check(String what, Dataset<Row> input, List<Column> order,
      Map<String, String> conf, boolean columnar) {
    Column[] columns = order.toArray(new Column[0]);
    Column partition = spark_partition_id().as("partition");
    List<Row> expected = input.sortWithinPartitions(columns).select(col("*"), partition)
        .collectAsList();
    SparkSession spark = SparkTestSession.get();
    conf.forEach((k, v) -> spark.conf().set(k, v));
    try {
      long before = ExternalRowSorter.columnarRowsTakenIn();
      Dataset<Row> sorted = input.transform(GpuSort.withinPartitions(columns))
          .select(col("*"), partition);
      List<Row> actual = sorted.collectAsList();
      long taken = ExternalRowSorter.columnarRowsTakenIn() - before;
      long metric = SortResources.metric(sorted, "columnarRows");
      if (columnar) {
        assertTrue(taken >= ROWS, what + ": the rows did not come from the scan's batches");
        assertEquals(ROWS, metric, what + ": columnarRows");
      } else {
        assertEquals(0, taken, what + ": rows taken from batches");
        assertEquals(0, metric, what + ": columnarRows");
      }
      assertEquals(text(expected), text(actual), what);
    } finally {
      conf.keySet().forEach(k -> spark.conf().unset(k));
    }
  }

  /** Rows as text: NaN and -0.0 print as Spark's rows hold them, binaries by their bytes. */
  private static List<String> text(List<Row> rows) {
    Function<Row, String> show = row -> {
      StringJoiner fields = new StringJoiner(",", "[", "]");
      for (int i = 0; i < row.length(); i++) {
        Object value = row.get(i);
        fields.add(value instanceof byte[] bytes ? Arrays.toString(bytes) : String.valueOf(value));
      }
      return fields.toString();
    };
    return rows.stream().map(show).toList();
  }
}
