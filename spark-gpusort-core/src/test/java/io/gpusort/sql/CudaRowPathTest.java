package io.gpusort.sql;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.date_add;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.isnan;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;
import static org.apache.spark.sql.functions.xxhash64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.GpuSort;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.cuda.CudaEngine;
import io.gpusort.engine.cuda.DeviceFaults;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The row path on the CUDA engine against Spark's own sort, at a size where every partition is
 * one large run put in order on the device: {@code gpusort.test.gpuRows} rows (1e7 by default) with
 * a key column of every atomic type (nulls, NaN, -0.0, long shared string prefixes) and a payload
 * of varying width (the any-size gather) or of one width (the fixed-size gather). Results are
 * compared by checksums computed in the executors, not collected: per partition the row count,
 * the sum of every row's hash (the same rows) and the sum of each key's hash weighted by its
 * position (the same key at every position; rows of equal keys may come in any order, since
 * Spark's sort is not stable). Global sorts run in both modes: sort (rows range-shuffled one by
 * one, each output partition sorted) and merge (each input partition sorted, cut into blocks,
 * the blocks' keys sorted again on the reduce side). Skipped, visibly, where no CUDA device works.
 *
 * <p>On the GPU host: {@code -Dgpusort.test.master=local[16]}; {@code
 * -Dgpusort.test.rowPathEngine=cpu} runs the same checks on the CPU engine.
 */
@Tag("gpu")
class CudaRowPathTest {
  private static final int ROWS = Integer.getInteger("gpusort.test.gpuRows", 10_000_000);
  private static final int PARTITIONS = 8;
  /** The engine under test; {@code cpu} (with rows put in order on the host) checks the test. */
  private static final String ENGINE = System.getProperty("gpusort.test.rowPathEngine", "cuda");

  /** The inputs, cached once for all cases: every key type with a varying payload, and fixed-width rows. */
  private static Dataset<Row> wide;
  private static Dataset<Row> fixed;
  /** Numbers, strings and binaries only: a cache the node reads from its batches. */
  private static Dataset<Row> texts;

  @BeforeAll
  static void requireCudaAndCacheInputs() {
    if (ENGINE.equals("cuda")) {
      assumeTrue(CudaEngine.available(), "no CUDA device: " + CudaEngine.unavailableReason());
    }
    wide = frame(true).cache();
    // Non-null copies of the long and double keys: without a null flag they fit one 64-bit word,
    // the keys whose sorted blocks the reduce side merges on the device.
    fixed = frame(false).select(col("id"), col("k_long"), col("k_int"), col("k_double"),
        coalesce(col("k_long"), lit(0L)).as("k_long_nn"),
        coalesce(col("k_double"), lit(0.0)).as("k_double_nn")).cache();
    texts = wide.select("id", "k_long", "k_str", "k_bin", "payload").cache();
  }

  @AfterAll
  static void uncache() {
    if (wide != null) {
      wide.unpersist();
      fixed.unpersist();
      texts.unpersist();
    }
  }

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"k_bool", "k_byte", "k_short", "k_int", "k_long", "k_float", "k_double",
      "k_dec", "k_dec38", "k_str", "k_bin", "k_date", "k_ts", "k_ntz", "k_str DESC NULLS LAST"})
  void everyKeyTypeMatchesSpark(String key) {
    String name = key.split(" ")[0];
    Column order = key.contains("DESC") ? col(name).desc_nulls_last() : col(name).asc_nulls_first();
    Column keyHash = keyHash(name);
    compare("within " + key, wide, d -> d.sortWithinPartitions(order),
        d -> d.transform(GpuSort.withinPartitions(order)), keyHash, false);
    SparkTestSession.get().conf().set("spark.gpusort.global.mode", "sort");
    compare("byKey " + key, wide, d -> d.orderBy(order),
        d -> d.transform(GpuSort.byKey(order)), keyHash, true);
    // The merge mode (the exchange that sorts, cuts and merges) sorts each row twice on a GPU:
    // its input partition on the map side, the blocks' keys on the reduce side (on the CPU
    // engine the reduce side merges on the host).
    SparkTestSession.get().conf().set("spark.gpusort.global.mode", "merge");
    compare("byKey merge " + key, wide, d -> d.orderBy(order),
        d -> d.transform(GpuSort.byKey(order)), keyHash, true, ENGINE.equals("cpu") ? 1 : 2);
  }

  /**
   * SQL's ORDER BY through the extension: Spark's range exchange and sort replaced by the
   * exchange that sorts, cuts and merges, each row sorted on the device on both of its sides.
   */
  @ParameterizedTest(name = "SQL ORDER BY, {0}")
  @ValueSource(strings = {"k_long", "k_str DESC NULLS LAST"})
  void sqlOrderByIsTheExchangeOnTheDevice(String key) {
    String name = key.split(" ")[0];
    Column order = key.contains("DESC") ? col(name).desc_nulls_last() : col(name).asc_nulls_first();
    SparkSession session = SparkTestSession.get();
    Dataset<Row> hashed = compare("SQL ORDER BY " + key, wide, d -> d.orderBy(order), d -> {
      session.conf().set(SparkTestSession.SQL_ENABLED, "true");
      return d.orderBy(order);
    }, keyHash(name), true, ENGINE.equals("cpu") ? 1 : 2);
    assertTrue(SortResources.sortNodes(hashed).stream()
        .anyMatch(node -> node instanceof GpuRangeSortExchangeExec),
        hashed.queryExecution().executedPlan().toString());
  }

  /**
   * Fixed-width rows, within partitions and merge mode. On cuda the reduce side hands its blocks'
   * sorted runs to the engine: keys of one word ({@code _nn}: not null) are merged on the device
   * (kernels/cuda/merge.cu); nullable longs and doubles take 65 bits (the null flag) and are
   * sorted there instead.
   */
  @ParameterizedTest(name = "fixed-width rows, {0}")
  @ValueSource(strings = {"k_long", "k_double", "k_long_nn", "k_double_nn"})
  void fixedWidthRowsMatchSpark(String key) {
    Column order = col(key).asc_nulls_first();
    compare("within fixed " + key, fixed, d -> d.sortWithinPartitions(order),
        d -> d.transform(GpuSort.withinPartitions(order)), keyHash(key), false);
    // Rows of one size: the exchange's blocks go packed by column, the bounds are sampled from
    // the cache's batches of the key column alone; the reducer merges runs on the device.
    SparkTestSession.get().conf().set("spark.gpusort.global.deviceMerge", "true");
    SparkTestSession.get().conf().set("spark.gpusort.global.mode", "merge");
    long keySamples = GpuRangeSortExchangeExec.keyColumnSamples();
    long mergedRows = EngineStats.mergedRows();
    compare("byKey merge fixed " + key, fixed, d -> d.orderBy(order),
        d -> d.transform(GpuSort.byKey(order)), keyHash(key), true, ENGINE.equals("cpu") ? 1 : 2);
    assertTrue(GpuRangeSortExchangeExec.keyColumnSamples() > keySamples,
        key + ": bounds sampled from the key column");
    if (ENGINE.equals("cuda") && key.endsWith("_nn")) {
      assertTrue(EngineStats.mergedRows() > mergedRows,
          key + ": the reduce side merged its blocks' runs on the device");
    }
  }

  /**
   * Device memory failures injected in each phase, two of each, met by whichever tasks come first
   * (on both sides of the exchange): the tasks wait for memory, sort in smaller pieces, sort what
   * they would have merged or gather on the host, and the output is Spark's; no partition falls
   * back to the CPU engine's sort.
   */
  @ParameterizedTest(name = "device faults, {0}")
  @EnumSource(DeviceFaults.Phase.class)
  void deviceFaultsLeaveTheOutputAsSparksOne(DeviceFaults.Phase phase) {
    assumeTrue(ENGINE.equals("cuda"), "faults are injected into the CUDA engine");
    Column order = col("k_long_nn").asc_nulls_first();
    SparkTestSession.get().conf().set("spark.gpusort.global.deviceMerge", "true");
    SparkTestSession.get().conf().set("spark.gpusort.global.mode", "merge");
    long injected = DeviceFaults.injected(phase);
    long fallbacks = EngineStats.fallbacks();
    DeviceFaults.failNext(phase, 2);
    try {
      compare("byKey merge, device faults in " + phase, fixed, d -> d.orderBy(order),
          d -> d.transform(GpuSort.byKey(order)), keyHash("k_long_nn"), true, 2, false);
    } finally {
      DeviceFaults.clear();
    }
    assertEquals(injected + 2, DeviceFaults.injected(phase), phase + ": failures met");
    assertEquals(fallbacks, EngineStats.fallbacks(), phase + ": partitions sorted on the CPU");
  }

  /**
   * String keys sent in the exchange's blocks ({@code global.sendKeys}, off by default): the
   * reducer sorts the keys it received without reading the rows' strings again.
   */
  @org.junit.jupiter.api.Test
  void stringKeysSentMatchSpark() {
    Column order = col("k_str").desc_nulls_last();
    SparkSession session = SparkTestSession.get();
    session.conf().set("spark.gpusort.global.mode", "merge");
    session.conf().set("spark.gpusort.global.sendKeys", "true");
    try {
      compare("byKey merge, keys sent, k_str DESC NULLS LAST", wide, d -> d.orderBy(order),
          d -> d.transform(GpuSort.byKey(order)), keyHash("k_str"), true,
          ENGINE.equals("cpu") ? 1 : 2);
    } finally {
      session.conf().unset("spark.gpusort.global.sendKeys");
    }
  }

  /**
   * A cache of numbers, strings and binaries is read from its batches by the node itself
   * ({@code intake.cacheBatches}, on by default): every row taken in from them, put in order on
   * the device, and the same as Spark's sort of the cached rows.
   */
  @ParameterizedTest(name = "cached batches, {0}")
  @ValueSource(strings = {"k_str", "k_bin DESC NULLS LAST"})
  void cachedBatchesOfStringsMatchSpark(String key) {
    String name = key.split(" ")[0];
    Column order = key.contains("DESC") ? col(name).desc_nulls_last() : col(name).asc_nulls_first();
    Dataset<Row> hashed = compare("within cached batches " + key, texts,
        d -> d.sortWithinPartitions(order), d -> d.transform(GpuSort.withinPartitions(order)),
        keyHash(name), false);
    assertEquals(ROWS, SortResources.metric(hashed, "columnarRows"),
        key + ": rows taken in from the cache's batches");
  }

  /**
   * The sorts Spark plans under a sort-merge join, replaced through the SQL extension, take the
   * same path: both sides' rows are put in order on the device, and the join's result is Spark's.
   */
  @org.junit.jupiter.api.Test
  void sortMergeJoinSortsPutRowsInOrderOnTheDevice() {
    SparkSession spark = SparkTestSession.get();
    int rows = 2_000_000;
    spark.range(0, rows, 1, PARTITIONS).selectExpr("id", "pmod(xxhash64(id), 1000003) AS k",
        "repeat('l', cast(pmod(id, 20) as int)) AS pad").createOrReplaceTempView("smj_l");
    spark.range(0, rows, 1, PARTITIONS).selectExpr("id", "pmod(xxhash64(id, 7L), 1000003) AS k")
        .createOrReplaceTempView("smj_r");
    String query = "SELECT count(*) AS n, sum(l.id * 31 + r.id) AS s, sum(length(l.pad)) AS p "
        + "FROM smj_l l JOIN smj_r r ON l.k = r.k";
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    try {
      spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
      Row expected = spark.sql(query).collectAsList().get(0);
      spark.conf().set(SparkTestSession.SQL_ENABLED, "true");
      spark.conf().set("spark.gpusort.engine", ENGINE);
      Dataset<Row> ours = spark.sql(query);
      Row actual = ours.collectAsList().get(0);
      assertEquals(expected, actual, "join result");
      assertEquals(2L * rows, SortResources.metric(ours, ENGINE + "Rows"), "rows sorted");
      if (ENGINE.equals("cuda")) {
        assertEquals(2L * rows, SortResources.metric(ours, "rowsGatheredOnDevice"),
            "rows put in order on the device");
        // The output's waits for rows back from the device are a part of its time.
        long waited = SortResources.metric(ours, "outputWaitTime");
        assertTrue(waited >= 0 && waited <= SortResources.metric(ours, "outputTime"),
            "output wait " + waited);
      }
      System.out.printf("CudaRowPathTest sort-merge join: %s, %,d rows put in order on the device%n",
          actual, SortResources.metric(ours, "rowsGatheredOnDevice"));
    } finally {
      spark.conf().unset("spark.sql.autoBroadcastJoinThreshold");
      spark.conf().set(SparkTestSession.SQL_ENABLED, "false");
    }
  }

  /** Key columns of every type derived from a hash of the row id, one in 17 null. */
  private static Dataset<Row> frame(boolean wide) {
    SparkSession spark = SparkTestSession.get();
    Column h = xxhash64(col("id"), lit(20261201L));
    Column isNull = expr("pmod(xxhash64(id, 7L), 17) = 0");
    Column text = expr("substring(sha2(cast(xxhash64(id, 3L) as string), 256), 1,"
        + " cast(pmod(xxhash64(id, 5L), 40) as int))");
    List<Column> columns = new ArrayList<>(List.of(
        col("id"),
        nullable(isNull, h.bitwiseAND(1).equalTo(0)).as("k_bool"),
        nullable(isNull, expr("cast(pmod(xxhash64(id, 20261201L), 256) - 128 as tinyint)"))
            .as("k_byte"),
        nullable(isNull, expr("cast(pmod(xxhash64(id, 20261201L), 65536) - 32768 as smallint)"))
            .as("k_short"),
        nullable(isNull, expr("cast(pmod(xxhash64(id, 20261201L), 4294967296) - 2147483648 as int)"))
            .as("k_int"),
        nullable(isNull, h).as("k_long"),
        nullable(isNull, floatish(h, "float")).as("k_float"),
        nullable(isNull, floatish(h, "double")).as("k_double"),
        nullable(isNull, expr("cast(pmod(xxhash64(id, 11L), 1000000000000) as decimal(18,3))"))
            .as("k_dec"),
        nullable(isNull, h.cast("decimal(38,0)").multiply(lit(1000003))).as("k_dec38"),
        // A third share a 24-character prefix: their order is decided past the encoded prefix.
        nullable(isNull, when(h.bitwiseAND(3).equalTo(0),
            concat(lit("a-shared-prefix-of-24-ch"), text)).otherwise(text)).as("k_str"),
        nullable(isNull, expr("unhex(substring(sha2(cast(id as string), 256), 1, "
            + "2 * cast(pmod(xxhash64(id, 13L), 20) as int)))")).as("k_bin"),
        nullable(isNull, date_add(lit("1970-01-01").cast("date"),
            expr("cast(pmod(xxhash64(id, 17L), 800000) - 400000 as int)"))).as("k_date"),
        nullable(isNull, expr("timestamp_micros(xxhash64(id, 19L) div 4096)")).as("k_ts"),
        nullable(isNull, expr("cast(timestamp_micros(xxhash64(id, 23L) div 4096) as timestamp_ntz)"))
            .as("k_ntz")));
    if (wide) {
      columns.add(expr("repeat('p', cast(pmod(id, 50) as int))").as("payload"));
    }
    return spark.range(0, ROWS, 1, PARTITIONS).select(columns.toArray(new Column[0]));
  }

  private static Column nullable(Column isNull, Column value) {
    return when(isNull, lit(null)).otherwise(value);
  }

  /** Values with NaN, -0.0, 0.0 and infinities among them. */
  private static Column floatish(Column h, String type) {
    Column special = expr("pmod(xxhash64(id, 29L), 50)");
    return when(special.equalTo(0), lit(Double.NaN).cast(type))
        .when(special.equalTo(1), lit(-0.0).cast(type))
        .when(special.equalTo(2), lit(0.0).cast(type))
        .when(special.equalTo(3), lit(Double.NEGATIVE_INFINITY).cast(type))
        .otherwise(h.cast(type).divide(lit(1e9)).cast(type));
  }

  /** A hash of the key equal for keys Spark orders as equal (-0.0 and 0.0 alike). */
  private static Column keyHash(String key) {
    Column k = col(key);
    if (key.startsWith("k_float") || key.startsWith("k_double")) {
      k = when(isnan(k), k).otherwise(k.plus(lit(0.0)));
    }
    return xxhash64(k.isNull(), k);
  }

  /**
   * Spark's result and GpuSort's on cuda, by checksums; and GpuSort put the rows in order there.
   * Returns the checked query (its plan holds GpuSort's metrics).
   */
  private static Dataset<Row> compare(String what, Dataset<Row> input, UnaryOperator<Dataset<Row>> spark,
      UnaryOperator<Dataset<Row>> ours, Column keyHash, boolean global) {
    return compare(what, input, spark, ours, keyHash, global, 1);
  }

  /** As above, each row sorted {@code sorts} times on the engine (and gathered on the device). */
  private static Dataset<Row> compare(String what, Dataset<Row> input,
      UnaryOperator<Dataset<Row>> spark, UnaryOperator<Dataset<Row>> ours, Column keyHash,
      boolean global, int sorts) {
    return compare(what, input, spark, ours, keyHash, global, sorts, true);
  }

  /** As above; where {@code allOnDevice} is false, some rows may be gathered on the host. */
  private static Dataset<Row> compare(String what, Dataset<Row> input,
      UnaryOperator<Dataset<Row>> spark, UnaryOperator<Dataset<Row>> ours, Column keyHash,
      boolean global, int sorts, boolean allOnDevice) {
    long[][] expected = sums(spark.apply(input), keyHash);
    SparkSession session = SparkTestSession.get();
    session.conf().set("spark.gpusort.engine", ENGINE);
    session.conf().set("spark.gpusort.cpu.gatherRows", "true");
    Dataset<Row> sorted = ours.apply(input);
    Dataset<Row> hashed = hashes(sorted, keyHash);
    long[][] actual = sums(hashed);
    if (global) {
      assertEquals(Arrays.toString(combine(expected)), Arrays.toString(combine(actual)), what);
    } else {
      assertEquals(Arrays.deepToString(expected), Arrays.deepToString(actual), what);
    }
    assertEquals((long) sorts * ROWS, SortResources.metric(hashed, ENGINE + "Rows"),
        what + ": rows sorted on " + ENGINE);
    long gathered = SortResources.metric(hashed, "rowsGatheredOnDevice");
    if (ENGINE.equals("cuda") && allOnDevice) {
      assertEquals((long) sorts * ROWS, gathered, what + ": rows put in order on the device");
    }
    System.out.printf("CudaRowPathTest %s: %,d rows match Spark, %,d put in order on the device%n",
        what, ROWS, gathered);
    return hashed;
  }

  private static Dataset<Row> hashes(Dataset<Row> sorted, Column keyHash) {
    Column[] all = Arrays.stream(sorted.columns()).map(c -> col("`" + c + "`"))
        .toArray(Column[]::new);
    return sorted.select(keyHash.as("kh"), xxhash64(all).as("rh"));
  }

  private static long[][] sums(Dataset<Row> sorted, Column keyHash) {
    return sums(hashes(sorted, keyHash));
  }

  /** Per partition: rows, positional key sum, key sum, row sum. */
  private static long[][] sums(Dataset<Row> hashed) {
    FlatMapFunction<java.util.Iterator<InternalRow>, long[]> perPartition = rows -> {
      long n = 0;
      long positional = 0;
      long keys = 0;
      long all = 0;
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        long kh = row.getLong(0);
        positional += kh * (2 * n + 1);
        keys += kh;
        all += row.getLong(1);
        n++;
      }
      return List.of(new long[] {n, positional, keys, all}).iterator();
    };
    // Through the query's own execution, so that its plan's GpuSort metrics are the ones updated.
    return hashed.queryExecution().toRdd().toJavaRDD().mapPartitions(perPartition).collect()
        .toArray(new long[0][]);
  }

  /** The sums of the partitions' concatenation: positions shift by the rows before each. */
  private static long[] combine(long[][] parts) {
    long rows = 0;
    long positional = 0;
    long all = 0;
    for (long[] p : parts) {
      positional += p[1] + 2 * rows * p[2];
      all += p[3];
      rows += p[0];
    }
    return new long[] {rows, positional, all};
  }
}
