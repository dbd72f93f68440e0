package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.spark_partition_id;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.gpusort.GpuSort;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sort moves rows and leaves their values' bits as they are (issue 36): NaNs of every payload
 * and sign, quiet and signalling, and -0.0, as keys and as payload, in doubles and floats, come
 * out of GpuSort with the bits Spark's own sort gives back for the same input (from local rows,
 * from the in-memory cache and from Parquet, whatever each of those does to the bits itself),
 * while the keys order as Spark orders them: every NaN equal to every other and above +Infinity,
 * -0.0 equal to 0.0.
 */
class NanBitsTest {
  private static final int ROWS = 3000;
  private static final long SEED = 36L;

  /** NaNs: quiet, signalling, negative, with payloads; then the other special values. */
  private static final long[] DOUBLE_BITS = {
    0x7ff8000000000000L, 0x7ff0000000000001L, 0xfff8000000000000L, 0xfff0000000000001L,
    0x7ff8000000000abcL, 0x7ff4000000000000L, 0xfffffffffffffffFL,
    Double.doubleToRawLongBits(-0.0d), Double.doubleToRawLongBits(0.0d),
    Double.doubleToRawLongBits(Double.POSITIVE_INFINITY),
    Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY),
    Double.doubleToRawLongBits(Double.MIN_VALUE), Double.doubleToRawLongBits(-Double.MAX_VALUE),
    Double.doubleToRawLongBits(1.5d), Double.doubleToRawLongBits(-2.5d)
  };

  private static final int[] FLOAT_BITS = {
    0x7fc00000, 0x7f800001, 0xffc00000, 0xff800001, 0x7fc00abc, 0x7fa00000, 0xffffffff,
    Float.floatToRawIntBits(-0.0f), Float.floatToRawIntBits(0.0f),
    Float.floatToRawIntBits(Float.POSITIVE_INFINITY),
    Float.floatToRawIntBits(Float.NEGATIVE_INFINITY),
    Float.floatToRawIntBits(Float.MIN_VALUE), Float.floatToRawIntBits(-Float.MAX_VALUE),
    Float.floatToRawIntBits(1.5f), Float.floatToRawIntBits(-2.5f)
  };

  private static Dataset<Row> local;
  private static Dataset<Row> cached;
  private static Dataset<Row> parquet;

  @TempDir
  static Path dir;

  @BeforeAll
  static void inputs() {
    SparkSession spark = SparkTestSession.get();
    StructType schema = new StructType()
        .add("id", DataTypes.LongType, false)
        .add("d", DataTypes.DoubleType)
        .add("f", DataTypes.FloatType)
        .add("dp", DataTypes.DoubleType)
        .add("fp", DataTypes.FloatType);
    Random random = new Random(SEED);
    List<Row> rows = new ArrayList<>();
    for (long id = 0; id < ROWS; id++) {
      rows.add(RowFactory.create(id, someDouble(random), someFloat(random), someDouble(random),
          someFloat(random)));
    }
    local = spark.createDataFrame(rows, schema);
    // A plan of its own: caching the local relation itself would make every scan of it (equal
    // plans) read the cache.
    cached = local.where("id >= 0").cache();
    cached.count();
    assertFalse(local.queryExecution().optimizedPlan().toString().contains("InMemoryRelation"),
        "the local rows read from the cache");
    String path = dir.resolve("nans").toString();
    local.write().parquet(path);
    parquet = spark.read().parquet(path);
  }

  /** One of the special values (most of the time), an ordinary one, or null. */
  private static Double someDouble(Random random) {
    int pick = random.nextInt(DOUBLE_BITS.length + 4);
    if (pick < DOUBLE_BITS.length) {
      return Double.longBitsToDouble(DOUBLE_BITS[pick]);
    }
    return pick == DOUBLE_BITS.length ? null : random.nextInt(100) / 4.0d;
  }

  private static Float someFloat(Random random) {
    int pick = random.nextInt(FLOAT_BITS.length + 4);
    if (pick < FLOAT_BITS.length) {
      return Float.intBitsToFloat(FLOAT_BITS[pick]);
    }
    return pick == FLOAT_BITS.length ? null : random.nextInt(100) / 4.0f;
  }

  @AfterAll
  static void uncache() {
    cached.unpersist();
  }

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  @Test
  void localRows() {
    checkAll("local", local);
  }

  @Test
  void cachedRows() {
    checkAll("cached", cached);
  }

  @Test
  void parquetRows() {
    checkAll("parquet", parquet);
  }

  private static void checkAll(String input, Dataset<Row> rows) {
    rows.createOrReplaceTempView("nan_bits");
    checkSql(input + ", ORDER BY d DESC NULLS LAST",
        "SELECT * FROM nan_bits ORDER BY d DESC NULLS LAST", "d");
    checkSql(input + ", ORDER BY f, dp", "SELECT * FROM nan_bits ORDER BY f, dp", "f", "dp");
    checkSql(input + ", SORT BY fp DESC, d", "SELECT *, spark_partition_id() AS p FROM "
        + "(SELECT * FROM nan_bits SORT BY fp DESC, d)", "p", "fp", "d");
    Column[] within = {col("d")};
    Column partition = spark_partition_id().as("p");
    SortedRowsCheck.assertSameOrder(input + ", withinPartitions(d)",
        rows.sortWithinPartitions(within).select(col("*"), partition).collectAsList(),
        rows.transform(GpuSort.withinPartitions(within)).select(col("*"), partition)
            .collectAsList(),
        keyOf("p", "d"), NanBitsTest::bitsOf);
    Column[] global = {col("f").desc(), col("dp").asc_nulls_last()};
    SortedRowsCheck.assertSameOrder(input + ", byKey(f desc, dp)",
        rows.orderBy(global).collectAsList(),
        rows.transform(GpuSort.byKey(global)).collectAsList(), keyOf("f", "dp"),
        NanBitsTest::bitsOf);
  }

  /** {@code query} with the SQL replacement off and on: the same keys in order, the same bits. */
  private static void checkSql(String what, String query, String... keys) {
    SparkSession spark = SparkTestSession.get();
    List<Row> expected = spark.sql(query).collectAsList();
    spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
    List<Row> actual;
    try {
      Dataset<Row> replaced = spark.sql(query);
      actual = replaced.collectAsList();
      SortResources.sortNode(replaced);
    } finally {
      spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    }
    SortedRowsCheck.assertSameOrder(what, expected, actual, keyOf(keys), NanBitsTest::bitsOf);
  }

  /**
   * The fields {@code names} as Spark's order compares them: every NaN one value, -0.0 the same
   * as 0.0.
   */
  private static Function<Row, String> keyOf(String... names) {
    return row -> {
      StringBuilder key = new StringBuilder();
      for (String name : names) {
        Object value = row.get(row.fieldIndex(name));
        if (value instanceof Double d) {
          value = d.isNaN() ? "NaN" : d == 0.0d ? "0.0" : d.toString();
        } else if (value instanceof Float f) {
          value = f.isNaN() ? "NaN" : f == 0.0f ? "0.0" : f.toString();
        }
        key.append(value).append('|');
      }
      return key.toString();
    };
  }

  /** A row with each floating-point field as its raw bits. */
  private static String bitsOf(Row row) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < row.length(); i++) {
      Object value = row.get(i);
      if (value instanceof Double d) {
        value = Long.toHexString(Double.doubleToRawLongBits(d));
      } else if (value instanceof Float f) {
        value = Integer.toHexString(Float.floatToRawIntBits(f));
      }
      text.append(value).append(',');
    }
    return text.toString();
  }
}
