package io.gpusort.sql;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.gpusort.GpuSort;
import io.gpusort.compat.Collations;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.sql.TestData.Distribution;
import io.gpusort.sql.TestData.KeyColumn;
import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.Period;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Function1;

/**
 * Randomized reference tests of {@link GpuSort}: every result is compared with Spark's own
 * {@code orderBy} (for {@code byKey}) or {@code sortWithinPartitions} (for
 * {@code withinPartitions}) on the same data and sort orders. Spark's sort is not stable, so the
 * key sequence must match exactly (keys compared as Spark compares them) and the rows only as
 * multisets within each run of equal keys.
 *
 * <p>Every failure message starts with {@code [seed=S case=...]}; rerun with
 * {@code -Dgpusort.test.seed=S} to get the same data.
 */
class GpuSortOracleTest {
  private static final long BASE_SEED = baseSeed();
  private static final int MEDIUM_ROWS = 3000;
  /** The system property naming the part of each generated family a run takes ({@link #share}). */
  static final String SHARE_PROPERTY = "gpusort.test.oracleShare";
  private static final String JAVA8_API = "spark.sql.datetime.java8API.enabled";

  private static final String ENGINE = GpuSortConf.ENGINE.key();
  private static final String STRICT = GpuSortConf.STRICT.key();
  private static final String MODE = GpuSortConf.GLOBAL_MODE.key();
  private static final String PARTITIONS = GpuSortConf.OUTPUT_PARTITIONS.key();
  private static final String CHUNK = GpuSortConf.CHUNK_BYTES.key();
  private static final String RUN = GpuSortConf.RUN_BYTES.key();
  private static final String GATHER = GpuSortConf.GATHER_ROWS_ON_HOST.key();
  private static final String PREFIX = GpuSortConf.STRING_PREFIX_BYTES.key();
  private static final String SAMPLE = GpuSortConf.SAMPLE_ROWS_PER_PARTITION.key();
  private static final String PACK = GpuSortConf.PACK_ROWS.key();
  private static final String SEND_KEYS = GpuSortConf.SEND_KEYS.key();

  private static final Map<String, String> SORT = Map.of(MODE, "sort");
  private static final Map<String, String> MERGE = Map.of(MODE, "merge");
  /** Settings rotated over the cases so that each global mode meets each of them. */
  private static final List<Map<String, String>> EXTRAS = List.of(
      Map.of(),
      Map.of(RUN, "1k"),
      Map.of(PREFIX, "1", GATHER, "true", CHUNK, "1k"),
      Map.of(RUN, "4k", PREFIX, "2", GATHER, "true"),
      Map.of(PARTITIONS, "3"),
      Map.of(PARTITIONS, "17", ENGINE, "CPU", GATHER, "true"),
      Map.of(PARTITIONS, "1", PREFIX, "1"),
      Map.of(ENGINE, "auto", RUN, "1k", CHUNK, "1k", PREFIX, "1"),
      Map.of(SAMPLE, "1", PARTITIONS, "5"),
      Map.of(SEND_KEYS, "true", CHUNK, "1k"),
      Map.of(PACK, "false", PREFIX, "1"));

  private static SparkSession spark;
  private static String savedJava8Api;

  static {
    System.out.println("GpuSortOracleTest: seed=" + BASE_SEED
        + " (rerun with -Dgpusort.test.seed=" + BASE_SEED + ")");
  }

  @BeforeAll
  static void useJavaTimeTypes() {
    spark = SparkTestSession.get();
    savedJava8Api = spark.conf().get(JAVA8_API, "false");
    // LocalDate/Instant round-trip proleptic dates exactly; java.sql.Date would rebase pre-1582 days.
    spark.conf().set(JAVA8_API, "true");
  }

  @AfterAll
  static void restoreTimeTypes() {
    spark.conf().set(JAVA8_API, savedJava8Api);
  }

  @AfterEach
  void resetConf() {
    SparkTestSession.resetGpuSortConf();
  }

  // ---------------------------------------------------------------- randomized oracle cases

  /**
   * The part of a family of generated cases this run takes: all of them where the system property
   * {@value #SHARE_PROPERTY} is unset or empty, else, for "k/n", those whose place in the family
   * is k modulo n. The build's plain run takes one half and its run with every sort spilling the
   * other (the pom), so a verify runs each case once; CI's other Spark lines take a half each.
   */
  private static List<DynamicTest> share(List<DynamicTest> family) {
    String share = System.getProperty(SHARE_PROPERTY, "");
    if (share.isEmpty()) {
      return family;
    }
    String[] parts = share.split("/");
    int k = Integer.parseInt(parts[0].trim());
    int n = Integer.parseInt(parts[1].trim());
    if (n < 1 || k < 0 || k >= n) {
      throw new IllegalArgumentException(
          SHARE_PROPERTY + "=" + share + ": expected k/n with 0 <= k < n");
    }
    List<DynamicTest> taken = new ArrayList<>();
    for (int i = k; i < family.size(); i += n) {
      taken.add(family.get(i));
    }
    return taken;
  }

  @TestFactory
  List<DynamicTest> byKeyEveryTypeAndDirection() {
    List<DynamicTest> tests = new ArrayList<>();
    for (KeyColumn key : KeyColumn.values()) {
      for (Dir dir : Dir.SORT_ORDERS) {
        int index = tests.size();
        // Half the directions of each type run in each mode, each direction in both across types.
        Map<String, String> mode = (key.ordinal() + dir.ordinal()) % 2 == 0 ? SORT : MERGE;
        String name = "byKey " + key.name + " " + dir + " " + mode.get(MODE);
        tests.add(dynamicTest(name, () -> {
          Random r = caseRandom(name);
          int numRows = index % 3 == 0 ? MEDIUM_ROWS : r.nextInt(51);
          Distribution dist = index % 5 == 4 ? Distribution.FEW_DISTINCT
              : index % 7 == 3 ? Distribution.SKEWED : Distribution.MIXED;
          Layout layout = Layout.ROTATION.get(index % Layout.ROTATION.size());
          Dataset<Row> df = layout.apply(TestData.narrowFrame(r, numRows, dist, key));
          checkByKey(ctx(name, numRows, dist, layout), df, List.of(new SortKey(key.name, dir)),
              List.of(with(mode, EXTRAS.get(index % EXTRAS.size()))));
        }));
      }
    }
    return share(tests);
  }

  @TestFactory
  List<DynamicTest> withinPartitionsEveryType() {
    List<DynamicTest> tests = new ArrayList<>();
    for (KeyColumn key : KeyColumn.values()) {
      int index = tests.size();
      Dir dir = Dir.SORT_ORDERS.get(index % Dir.SORT_ORDERS.size());
      String name = "withinPartitions " + key.name + " " + dir;
      tests.add(dynamicTest(name, () -> {
        Random r = caseRandom(name);
        int numRows = index % 2 == 0 ? MEDIUM_ROWS : r.nextInt(51);
        Distribution dist = index % 3 == 2 ? Distribution.FEW_DISTINCT : Distribution.MIXED;
        Layout layout = Layout.ROTATION.get((index + 1) % Layout.ROTATION.size());
        Dataset<Row> df = layout.apply(TestData.narrowFrame(r, numRows, dist, key));
        checkWithinPartitions(ctx(name, numRows, dist, layout), df,
            List.of(new SortKey(key.name, dir)), List.of(EXTRAS.get(index % EXTRAS.size())));
      }));
    }
    return share(tests);
  }

  @TestFactory
  List<DynamicTest> multiColumnKeys() {
    List<DynamicTest> tests = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      int index = i;
      boolean global = i < 10;
      String name = (global ? "byKey" : "withinPartitions") + " multi-column #" + i;
      tests.add(dynamicTest(name, () -> {
        Random r = caseRandom(name);
        List<SortKey> keys = randomKeys(r, 2 + index % 2);
        Distribution dist = index % 4 == 3 ? Distribution.MIXED
            : index % 4 == 1 ? Distribution.SKEWED : Distribution.FEW_DISTINCT;
        int numRows = index % 2 == 0 ? MEDIUM_ROWS : r.nextInt(51);
        Layout layout = index % 3 == 0 ? Layout.HASH_4 : Layout.LOCAL;
        Dataset<Row> df = layout.apply(TestData.frame(r, numRows, dist));
        String where = ctx(name, numRows, dist, layout);
        if (global) {
          checkByKey(where, df, keys, List.of(with(SORT, EXTRAS.get(index % EXTRAS.size())),
              with(MERGE, EXTRAS.get((index + 5) % EXTRAS.size()))));
        } else {
          checkWithinPartitions(where, df, keys, List.of(EXTRAS.get(index % EXTRAS.size())));
        }
      }));
    }
    return share(tests);
  }

  @Test
  void stringOverloadsMatchSparkStringOverloads() {
    Random r = caseRandom("string overloads");
    Dataset<Row> df = Layout.HASH_4.apply(TestData.frame(r, MEDIUM_ROWS, Distribution.FEW_DISTINCT));
    String where = ctx("string overloads", MEDIUM_ROWS, Distribution.FEW_DISTINCT, Layout.HASH_4);
    List<Function<Row, Object>> strInt = List.of(field("k_str"), field("k_int"));
    checkGlobal(where + " byKey(k_str, k_int)", df, d -> d.orderBy("k_str", "k_int"),
        () -> GpuSort.byKey("k_str", "k_int"), strInt, List.of(with(SORT, Map.of(PREFIX, "1")), MERGE));
    checkGlobal(where + " byKey(k_bin)", df, d -> d.orderBy("k_bin"), () -> GpuSort.byKey("k_bin"),
        List.of(field("k_bin")), List.of(SORT, with(MERGE, Map.of(PREFIX, "2", CHUNK, "1k"))));
    checkLocal(where + " withinPartitions(k_double, k_dec38)", df,
        d -> d.sortWithinPartitions("k_double", "k_dec38"),
        () -> GpuSort.withinPartitions("k_double", "k_dec38"),
        List.of(field("k_double"), field("k_dec38")), List.of(Map.of(CHUNK, "1k")));
  }

  @TestFactory
  List<DynamicTest> edgeCaseInputs() {
    List<SortKey> three = List.of(new SortKey("k_str", Dir.DESC), new SortKey("k_double", Dir.ASC),
        new SortKey("k_bin", Dir.ASC_NULLS_LAST));
    List<DynamicTest> tests = new ArrayList<>();
    edge(tests, "empty input", 0, Distribution.MIXED, Layout.LOCAL, three, UnaryOperator.identity());
    edge(tests, "empty after filter", 40, Distribution.MIXED, Layout.HASH_4, three,
        d -> d.filter(lit(false)));
    edge(tests, "one row", 1, Distribution.MIXED, Layout.LOCAL, three, UnaryOperator.identity());
    edge(tests, "empty partitions, small", 30, Distribution.MIXED, Layout.EMPTY_PARTS, three,
        UnaryOperator.identity());
    edge(tests, "empty partitions, medium", MEDIUM_ROWS, Distribution.MIXED, Layout.EMPTY_PARTS,
        three, UnaryOperator.identity());
    edge(tests, "filtered partitions", MEDIUM_ROWS, Distribution.MIXED, Layout.FILTERED, three,
        UnaryOperator.identity());
    edge(tests, "one input partition", MEDIUM_ROWS, Distribution.MIXED, Layout.ONE, three,
        UnaryOperator.identity());
    edge(tests, "200 input partitions", 300, Distribution.FEW_DISTINCT, Layout.HASH_200, three,
        UnaryOperator.identity());
    edge(tests, "all keys equal", MEDIUM_ROWS, Distribution.ALL_EQUAL, Layout.HASH_4, three,
        UnaryOperator.identity());
    // Sorted inputs come from sortWithinPartitions: orderBy's range bounds depend on a sample
    // seeded by RDD id, so its partitions could differ between the oracle's run and ours.
    edge(tests, "already sorted", MEDIUM_ROWS, Distribution.MIXED, Layout.ONE, three,
        d -> d.sortWithinPartitions(columns(three)));
    edge(tests, "sorted partitions", MEDIUM_ROWS, Distribution.FEW_DISTINCT, Layout.HASH_4, three,
        d -> d.sortWithinPartitions(columns(three)));
    edge(tests, "reverse sorted", MEDIUM_ROWS, Distribution.MIXED, Layout.ONE, three,
        d -> d.sortWithinPartitions(col("k_str").asc(), col("k_double").desc(),
            col("k_bin").desc_nulls_first()));
    edge(tests, "all-null and void keys", MEDIUM_ROWS, Distribution.FEW_DISTINCT, Layout.HASH_4,
        List.of(new SortKey("k_void", Dir.ASC), new SortKey("k_nulls", Dir.DESC),
            new SortKey("k_int", Dir.DESC_NULLS_LAST)),
        d -> d.withColumn("k_void", lit(null)).withColumn("k_nulls", lit(null).cast("long")));
    edge(tests, "non-nullable keys", MEDIUM_ROWS, Distribution.FEW_DISTINCT, Layout.HASH_4,
        List.of(new SortKey("k_str_nn", Dir.DESC), new SortKey("k_int_nn", Dir.ASC_NULLS_LAST),
            new SortKey("id", Dir.DESC)), UnaryOperator.identity());
    return share(tests);
  }

  @ParameterizedTest(name = "spark.gpusort.global.partitions={0}")
  @ValueSource(ints = {0, 1, 3, 17})
  void globalPartitionsSetsOutputPartitionsAndKeepsOrder(int numPartitions) {
    String name = "global.partitions=" + numPartitions;
    Random r = caseRandom(name);
    Dataset<Row> df = Layout.HASH_4.apply(TestData.frame(r, MEDIUM_ROWS, Distribution.MIXED));
    List<SortKey> keys = List.of(new SortKey("k_long", Dir.DESC), new SortKey("k_str", Dir.ASC));
    List<Row> expected = df.orderBy(columns(keys)).collectAsList();
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      Map<String, String> conf = with(mode, Map.of(PARTITIONS, String.valueOf(numPartitions)));
      String where = ctx(name, MEDIUM_ROWS, Distribution.MIXED, Layout.HASH_4) + " conf=" + conf;
      List<List<Row>> parts = withConf(conf,
          () -> df.transform(GpuSort.byKey(columns(keys))).javaRDD().glom().collect());
      if (numPartitions > 0) {
        assertEquals(numPartitions, parts.size(), where + ": number of output partitions");
      } else {
        assertTrue(parts.size() >= 1 && parts.size() <= SparkTestSession.SHUFFLE_PARTITIONS,
            where + ": automatic output partitions " + parts.size() + " not in [1, "
                + SparkTestSession.SHUFFLE_PARTITIONS + "]");
      }
      List<Row> actual = parts.stream().flatMap(List::stream).collect(Collectors.toList());
      assertSameSortedRows(where, expected, actual, extractors(keys));
    }
  }

  @Test
  void configurationMatrix() {
    List<SortKey> keys = List.of(new SortKey("k_str", Dir.ASC), new SortKey("k_bin", Dir.DESC_NULLS_LAST),
        new SortKey("k_double", Dir.ASC_NULLS_LAST));
    List<Map<String, String>> confs = new ArrayList<>();
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      for (String run : List.of("256m", "1k")) {
        for (String prefix : List.of("16", "1")) {
          // Rows put in order on the host in pages of 1k (records continue across pages) half the
          // time.
          String gather = String.valueOf(prefix.equals("1"));
          confs.add(with(mode, Map.of(RUN, run, PREFIX, prefix, GATHER, gather, CHUNK, "1k")));
        }
      }
    }
    confs.add(Map.of(STRICT, "true", ENGINE, "cpu"));
    confs.add(Map.of(ENGINE, "auto", PREFIX, "256"));
    confs.add(Map.of(MODE, "merge", "spark.sql.adaptive.enabled", "false"));
    confs.add(Map.of(MODE, "merge", SEND_KEYS, "true", PREFIX, "1"));
    confs.add(Map.of(MODE, "merge", PACK, "false", SEND_KEYS, "true"));
    confs.add(Map.of(MODE, "sort", "spark.sql.adaptive.enabled", "false", PARTITIONS, "0"));
    for (Distribution dist : List.of(Distribution.MIXED, Distribution.SKEWED)) {
      String name = "configuration matrix " + dist;
      Dataset<Row> df = Layout.HASH_4.apply(TestData.frame(caseRandom(name), MEDIUM_ROWS, dist));
      checkByKey(ctx(name, MEDIUM_ROWS, dist, Layout.HASH_4), df, keys, confs);
    }
  }

  @Test
  void expressionKeysMatchOrderBy() {
    Random r = caseRandom("expression keys");
    Dataset<Row> df = Layout.HASH_4.apply(TestData.frame(r, MEDIUM_ROWS, Distribution.FEW_DISTINCT))
        .withColumn("k_nested", functions.struct(col("k_int"), col("k_str")));
    String where = ctx("expression keys", MEDIUM_ROWS, Distribution.FEW_DISTINCT, Layout.HASH_4);
    Column[] orders = {functions.upper(col("k_str")).desc(), col("k_short").plus(1)};
    List<Function<Row, Object>> keys = List.of(
        row -> row.isNullAt(row.fieldIndex("k_str")) ? null
            : row.<String>getAs("k_str").toUpperCase(Locale.ROOT),
        row -> row.isNullAt(row.fieldIndex("k_short")) ? null : row.<Short>getAs("k_short") + 1);
    checkGlobal(where + " byKey(upper(k_str) desc, k_short + 1)", df, d -> d.orderBy(orders),
        () -> GpuSort.byKey(orders), keys, List.of(with(SORT, Map.of(PREFIX, "1")), MERGE));

    // A literal key, a nested field, and a column repeated in the other direction.
    Column[] mixed = {lit(1), col("k_nested.k_str").desc_nulls_last(), col("k_int"),
        col("k_int").desc()};
    List<Function<Row, Object>> mixedKeys = List.of(row -> 1,
        row -> row.<Row>getAs("k_nested").get(1), field("k_int"), field("k_int"));
    checkGlobal(where + " byKey(1, k_nested.k_str desc nulls last, k_int, k_int desc)", df,
        d -> d.orderBy(mixed), () -> GpuSort.byKey(mixed), mixedKeys,
        List.of(with(MERGE, Map.of(PREFIX, "2"))));

    Column[] mod = {col("k_long").mod(1000).desc_nulls_first()};
    checkLocal(where + " withinPartitions(k_long % 1000)", df, d -> d.sortWithinPartitions(mod),
        () -> GpuSort.withinPartitions(mod),
        List.of(row -> row.isNullAt(row.fieldIndex("k_long")) ? null : row.<Long>getAs("k_long") % 1000),
        List.of(Map.of()));
  }

  /** With a total order (id last), operators after the sort must see exactly orderBy's rows. */
  @Test
  void operatorsAfterTheSortSeeItsOrder() {
    Dataset<Row> df = Layout.HASH_4.apply(
        TestData.frame(caseRandom("downstream"), MEDIUM_ROWS, Distribution.SKEWED));
    Column[] orders = {col("k_double").desc(), col("k_str"), col("id")};
    Dataset<Row> expected = df.orderBy(orders);
    List<Row> expectedTop = expected.limit(25).select("id").collectAsList();
    List<Row> expectedFiltered = expected.filter(col("k_bool")).select("id").collectAsList();
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      String where = "[seed=" + BASE_SEED + " case=downstream] conf=" + mode;
      withConf(mode, () -> {
        Dataset<Row> sorted = df.transform(GpuSort.byKey(orders));
        assertEquals(expectedTop, sorted.limit(25).select("id").collectAsList(), where + ": limit");
        assertEquals(expectedFiltered, sorted.filter(col("k_bool")).select("id").collectAsList(),
            where + ": filter then select");
        assertEquals(MEDIUM_ROWS, sorted.count(), where + ": count");
        return null;
      });
    }
  }

  /**
   * Keys every engine encodes must not be sorted by Spark's SortExec: an implementation that always
   * fell back would pass every oracle test above.
   */
  @Test
  void supportedKeysDoNotPlanSparkSort() {
    Dataset<Row> df = TestData.frame(caseRandom("planning"), 10, Distribution.MIXED);
    List<Column[]> orderLists = new ArrayList<>();
    for (KeyColumn key : KeyColumn.values()) {
      orderLists.add(new Column[] {col(key.name).desc_nulls_last()});
    }
    orderLists.add(Arrays.stream(KeyColumn.values()).map(k -> col(k.name)).toArray(Column[]::new));
    orderLists.add(new Column[] {functions.upper(col("k_str")), col("k_short").plus(1).desc()});
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      for (Column[] orders : orderLists) {
        for (boolean global : new boolean[] {true, false}) {
          String where = "conf=" + mode + " global=" + global + " keys=" + Arrays.toString(orders);
          Dataset<Row> sorted = withConf(mode, () -> df.transform(
              global ? GpuSort.byKey(orders) : GpuSort.withinPartitions(orders)));
          assertFalse(containsSparkSort(sorted.queryExecution().sparkPlan()),
              where + ": planned Spark's own sort:\n" + sorted.queryExecution().sparkPlan());
        }
      }
    }
  }

  // ---------------------------------------------------------------- analysis and laziness

  @Test
  void unknownColumnFailsInTransformBeforeAnyJob() {
    Dataset<Row> df = TestData.frame(caseRandom("unknown column"), 20, Distribution.MIXED);
    List<Supplier<Function1<Dataset<Row>, Dataset<Row>>>> sorts = List.of(
        () -> GpuSort.byKey(col("no_such_column")),
        () -> GpuSort.byKey("k_int", "no_such_column"),
        () -> GpuSort.withinPartitions(col("no_such_column").desc()),
        () -> GpuSort.withinPartitions("no_such_column"));
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      for (Supplier<Function1<Dataset<Row>, Dataset<Row>>> sort : sorts) {
        int jobs = jobsStartedBy(() -> withConf(mode, () -> {
          AnalysisException e = assertThrows(AnalysisException.class, () -> df.transform(sort.get()),
              "[seed=" + BASE_SEED + " case=unknown column] conf=" + mode);
          assertTrue(e.getMessage().contains("no_such_column"), e.getMessage());
          return null;
        }));
        assertEquals(0, jobs, "Spark jobs started by a transform that fails analysis, conf=" + mode);
      }
    }
  }

  @Test
  void transformIsLazy() {
    Dataset<Row> df = Layout.HASH_4.apply(
        TestData.frame(caseRandom("lazy"), MEDIUM_ROWS, Distribution.MIXED));
    List<SortKey> keys = List.of(new SortKey("k_ts", Dir.DESC), new SortKey("k_str", Dir.ASC));
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      for (boolean global : new boolean[] {true, false}) {
        String where = "[seed=" + BASE_SEED + " case=lazy] global=" + global + " conf=" + mode;
        List<Dataset<Row>> sorted = new ArrayList<>();
        int transformJobs = jobsStartedBy(() -> withConf(mode, () -> sorted.add(df.transform(
            global ? GpuSort.byKey(columns(keys)) : GpuSort.withinPartitions(columns(keys))))));
        assertEquals(0, transformJobs, where + ": jobs started by transform itself");
        List<Row> actual = new ArrayList<>();
        int actionJobs = jobsStartedBy(() -> withConf(mode,
            () -> actual.addAll(sorted.get(0).collectAsList())));
        assertTrue(actionJobs > 0, where + ": the action ran no job");
        assertEquals(MEDIUM_ROWS, actual.size(), where + ": rows");
        if (global) {
          assertSameSortedRows(where, df.orderBy(columns(keys)).collectAsList(), actual,
              extractors(keys));
        }
      }
    }
  }

  // ---------------------------------------------------------------- typed datasets

  @Test
  void typedDatasetOfLongsKeepsItsType() {
    Dataset<Long> longs = spark.range(0, 2500, 1, 5).map(
        (MapFunction<Long, Long>) v -> (v * 0x9E3779B97F4A7C15L) >> 40, Encoders.LONG());
    List<Long> expected = longs.orderBy(col("value").desc()).collectAsList();
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      Dataset<Long> sorted = withConf(mode, () -> longs.transform(GpuSort.byKey(col("value").desc())));
      List<Long> actual = withConf(mode, sorted::collectAsList);
      assertEquals(longs.schema(), sorted.schema(), "schema, conf=" + mode);
      assertInstanceOf(Long.class, (Object) actual.get(0), "element type, conf=" + mode);
      // Equal longs are indistinguishable, so the sequences must be identical.
      assertEquals(expected, actual, "[seed=" + BASE_SEED + " case=typed longs] conf=" + mode);
    }
  }

  @Test
  void typedDatasetOfBeansKeepsItsType() {
    Random r = caseRandom("typed beans");
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      items.add(new Item(i, r.nextInt(5) == 0 ? null : "n" + r.nextInt(20), r.nextInt(7)));
    }
    Dataset<Item> ds = spark.createDataset(items, Encoders.bean(Item.class)).repartition(3);
    Column[] orders = {col("name").asc_nulls_last(), col("qty").desc()};
    List<Row> expected = ds.orderBy(orders).toDF().collectAsList();
    for (Map<String, String> mode : List.of(SORT, MERGE)) {
      String where = "[seed=" + BASE_SEED + " case=typed beans] conf=" + mode;
      Dataset<Item> sorted = withConf(mode, () -> ds.transform(GpuSort.byKey(orders)));
      assertEquals(ds.schema(), sorted.schema(), where + ": schema");
      List<Item> typed = withConf(mode, sorted::collectAsList);
      assertInstanceOf(Item.class, (Object) typed.get(0), where + ": element type");
      assertSameSortedRows(where, expected, withConf(mode, () -> sorted.toDF().collectAsList()),
          List.of(field("name"), field("qty")));
    }
  }

  /** A Java bean for the typed-dataset test. */
  public static final class Item implements Serializable {
    private static final long serialVersionUID = 1L;
    private long id;
    private String name;
    private int qty;

    public Item() {}

    Item(long id, String name, int qty) {
      this.id = id;
      this.name = name;
      this.qty = qty;
    }

    public long getId() {
      return id;
    }

    public void setId(long id) {
      this.id = id;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public int getQty() {
      return qty;
    }

    public void setQty(int qty) {
      this.qty = qty;
    }
  }

  // ---------------------------------------------------------------- unsupported key types

  @TestFactory
  List<DynamicTest> unsupportedKeysFallBackToSparkSort() {
    List<DynamicTest> tests = new ArrayList<>();
    for (Unsupported u : Unsupported.onThisLine()) {
      String name = "fallback " + u.column;
      tests.add(dynamicTest(name, () -> {
        Dataset<Row> df = u.frame(caseRandom(name));
        String where = "[seed=" + BASE_SEED + " case=" + name + "]";
        Column[] orders = {col(u.column).desc(), col("id")};
        Dataset<Row> planned = df.transform(GpuSort.byKey(orders));
        assertTrue(containsSparkSort(planned.queryExecution().sparkPlan()),
            where + ": expected a fallback to Spark's sort:\n" + planned.queryExecution().sparkPlan());
        List<Function<Row, Object>> keys = List.of(u.key, field("id"));
        checkGlobal(where, df, d -> d.orderBy(orders), () -> GpuSort.byKey(orders), keys,
            List.of(u.ordinal() % 2 == 0 ? SORT : MERGE));
        checkLocal(where, df, d -> d.sortWithinPartitions(orders),
            () -> GpuSort.withinPartitions(orders), keys, List.of(Map.of()));
      }));
    }
    return tests;
  }

  @Test
  void mapKeyFailsAnalysisLikeOrderBy() {
    Dataset<Row> df = TestData.frame(caseRandom("map key"), 20, Distribution.MIXED)
        .withColumn("k_map", functions.map(col("k_int"), col("k_str")));
    assertThrows(AnalysisException.class, () -> df.orderBy("k_map"));
    assertThrows(AnalysisException.class, () -> df.transform(GpuSort.byKey("k_map")));
    assertThrows(AnalysisException.class, () -> df.transform(GpuSort.withinPartitions("k_map")));
  }

  @TestFactory
  List<DynamicTest> strictModeRejectsUnsupportedKeys() {
    List<DynamicTest> tests = new ArrayList<>();
    for (Unsupported u : Unsupported.onThisLine()) {
      for (boolean global : new boolean[] {true, false}) {
        String name = "strict " + (global ? "byKey " : "withinPartitions ") + u.column;
        tests.add(dynamicTest(name, () -> {
          Dataset<Row> df = u.frame(caseRandom(name));
          Column[] orders = {col("id"), col(u.column)};
          Throwable error = assertThrows(Throwable.class, () -> withConf(Map.of(STRICT, "true"),
              () -> df.transform(global ? GpuSort.byKey(orders) : GpuSort.withinPartitions(orders))
                  .collectAsList()), "[seed=" + BASE_SEED + " case=" + name + "] did not fail");
          assertMentions(error, u.column, u.typeWord);
        }));
      }
    }
    String mapName = "strict byKey k_map";
    tests.add(dynamicTest(mapName, () -> {
      Dataset<Row> df = TestData.frame(caseRandom(mapName), 20, Distribution.MIXED)
          .withColumn("k_map", functions.map(col("k_int"), col("k_str")));
      Throwable error = assertThrows(Throwable.class, () -> withConf(Map.of(STRICT, "true"),
          () -> df.transform(GpuSort.byKey("k_map")).collectAsList()));
      assertMentions(error, "k_map", "map");
    }));
    return tests;
  }

  // ---------------------------------------------------------------- engine selection

  @ParameterizedTest(name = "spark.gpusort.engine={0}")
  @ValueSource(strings = {"cuda", "vulkan"})
  void gpuEngineFailsClearlyWithoutDevice(String engine) {
    boolean devicePresent = engine.equals("cuda") ? cudaDevicePresent() : vulkanDriverPresent();
    String name = "engine=" + engine;
    Dataset<Row> df = TestData.frame(caseRandom(name), 200, Distribution.MIXED);
    List<SortKey> keys = List.of(new SortKey("k_int", Dir.DESC));
    List<Row> expected = df.orderBy(columns(keys)).collectAsList();
    Throwable error = null;
    List<Row> actual = null;
    try {
      actual = withConf(Map.of(ENGINE, engine),
          () -> df.transform(GpuSort.byKey(columns(keys))).collectAsList());
    } catch (RuntimeException e) {
      error = e;
    }
    if (!devicePresent) {
      assertNotNull(error, "engine=" + engine + " sorted although this machine has no "
          + engine + " device; it must fail instead of silently using another engine");
    }
    if (error != null) {
      assertMentions(error, engine);
    } else {
      assertSameSortedRows("[seed=" + BASE_SEED + " case=" + name + "]", expected, actual,
          extractors(keys));
    }
  }

  @TestFactory
  List<DynamicTest> cpuAndAutoEnginesWork() {
    List<DynamicTest> tests = new ArrayList<>();
    for (String engine : List.of("cpu", "auto")) {
      String name = "engine=" + engine;
      tests.add(dynamicTest(name, () -> {
        Dataset<Row> df = Layout.HASH_4.apply(
            TestData.frame(caseRandom(name), MEDIUM_ROWS, Distribution.MIXED));
        List<SortKey> keys = List.of(new SortKey("k_dec19", Dir.ASC), new SortKey("k_ntz", Dir.DESC));
        String where = ctx(name, MEDIUM_ROWS, Distribution.MIXED, Layout.HASH_4);
        checkByKey(where, df, keys, List.of(with(SORT, Map.of(ENGINE, engine)),
            with(MERGE, Map.of(ENGINE, engine))));
        checkWithinPartitions(where, df, keys, List.of(Map.of(ENGINE, engine)));
      }));
    }
    return tests;
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
      "spark.gpusort.engine, tpu",
      "spark.gpusort.global.mode, shuffle",
      "spark.gpusort.chunk.maxBytes, 12",
      "spark.gpusort.run.maxBytes, 1g2",
      "spark.gpusort.cpu.gatherRows, often",
      "spark.gpusort.key.stringPrefixBytes, 0",
      "spark.gpusort.global.partitions, -1",
      "spark.gpusort.strict, maybe"})
  void invalidSettingFailsNamingTheKey(String key, String value) {
    Dataset<Row> df = TestData.frame(caseRandom("invalid " + key), 20, Distribution.MIXED);
    for (boolean global : new boolean[] {true, false}) {
      Throwable error = assertThrows(Throwable.class, () -> withConf(Map.of(key, value),
          () -> df.transform(global ? GpuSort.byKey("k_int") : GpuSort.withinPartitions("k_int"))
              .collectAsList()), key + "=" + value + " was accepted, global=" + global);
      assertMentions(error, key, value);
    }
  }

  // ---------------------------------------------------------------- checking against Spark

  private void edge(List<DynamicTest> tests, String name, int numRows, Distribution dist,
      Layout layout, List<SortKey> keys, UnaryOperator<Dataset<Row>> prepare) {
    int index = tests.size();
    tests.add(dynamicTest(name, () -> {
      Dataset<Row> df = prepare.apply(layout.apply(TestData.frame(caseRandom(name), numRows, dist)));
      String where = ctx(name, numRows, dist, layout);
      checkByKey(where, df, keys, List.of(with(SORT, EXTRAS.get(index % EXTRAS.size())),
          with(MERGE, EXTRAS.get((index + 1) % EXTRAS.size()))));
      checkWithinPartitions(where, df, keys, List.of(EXTRAS.get((index + 2) % EXTRAS.size())));
    }));
  }

  private static void checkByKey(String where, Dataset<Row> df, List<SortKey> keys,
      List<Map<String, String>> confs) {
    Column[] orders = columns(keys);
    checkGlobal(where + " keys=" + keys, df, d -> d.orderBy(orders), () -> GpuSort.byKey(orders),
        extractors(keys), confs);
  }

  private static void checkWithinPartitions(String where, Dataset<Row> df, List<SortKey> keys,
      List<Map<String, String>> confs) {
    Column[] orders = columns(keys);
    checkLocal(where + " keys=" + keys, df, d -> d.sortWithinPartitions(orders),
        () -> GpuSort.withinPartitions(orders), extractors(keys), confs);
  }

  /** Compares {@code sort} (created under each conf) with Spark's global sort {@code oracle}. */
  private static void checkGlobal(String where, Dataset<Row> df, UnaryOperator<Dataset<Row>> oracle,
      Supplier<Function1<Dataset<Row>, Dataset<Row>>> sort, List<Function<Row, Object>> keys,
      List<Map<String, String>> confs) {
    List<Row> expected = oracle.apply(df).collectAsList();
    for (Map<String, String> conf : confs) {
      String at = where + " conf=" + conf;
      List<Row> actual = withConf(conf, () -> {
        Dataset<Row> sorted = df.transform(sort.get());
        assertEquals(df.schema(), sorted.schema(), at + ": schema");
        long spillsBefore = ExternalRowSorter.spills();
        List<Row> rows = sorted.collectAsList();
        // At most 17 output partitions (global.partitions=17 is the most any case asks for).
        assertSpilledIfLarge(at, sorted, spillsBefore, rows.size(), 17);
        return rows;
      });
      assertSameSortedRows(at, expected, actual, keys);
    }
  }

  /**
   * In the spilling run, a GpuSort of more rows than {@link SparkTestSession#SPILL_ROWS} per
   * partition on average must have spilled: some task held more than that many rows.
   */
  private static void assertSpilledIfLarge(String where, Dataset<Row> sorted, long spillsBefore,
      long rows, int partitions) {
    if (SparkTestSession.SPILLING && rows > (long) SparkTestSession.SPILL_ROWS * partitions
        && !SortResources.sortNodes(sorted).isEmpty()) {
      assertTrue(ExternalRowSorter.spills() > spillsBefore,
          where + ": " + rows + " rows in at most " + partitions + " partitions, no spill");
    }
  }

  /** Compares {@code sort} with Spark's per-partition sort {@code oracle}, partition by partition. */
  private static void checkLocal(String where, Dataset<Row> df, UnaryOperator<Dataset<Row>> oracle,
      Supplier<Function1<Dataset<Row>, Dataset<Row>>> sort, List<Function<Row, Object>> keys,
      List<Map<String, String>> confs) {
    List<List<Row>> expected = oracle.apply(df).javaRDD().glom().collect();
    for (Map<String, String> conf : confs) {
      String at = where + " conf=" + conf;
      List<List<Row>> actual = withConf(conf, () -> {
        Dataset<Row> sorted = df.transform(sort.get());
        assertEquals(df.schema(), sorted.schema(), at + ": schema");
        long spillsBefore = ExternalRowSorter.spills();
        List<List<Row>> parts = sorted.javaRDD().glom().collect();
        assertSpilledIfLarge(at, sorted, spillsBefore,
            parts.stream().mapToLong(List::size).sum(), parts.size());
        return parts;
      });
      assertEquals(expected.size(), actual.size(), at + ": number of partitions");
      for (int p = 0; p < expected.size(); p++) {
        assertSameSortedRows(at + " partition " + p, expected.get(p), actual.get(p), keys);
      }
    }
  }

  /** Same rows, same key at every position, same rows within each run of equal keys. */
  static void assertSameSortedRows(String where, List<Row> expected, List<Row> actual,
      List<Function<Row, Object>> keys) {
    assertEquals(expected.size(), actual.size(), where + ": row count");
    assertSameMultiset(where + ": all rows", expected, actual);
    List<List<Object>> expectedKeys = new ArrayList<>();
    for (int i = 0; i < expected.size(); i++) {
      List<Object> e = keyOf(expected.get(i), keys);
      List<Object> a = keyOf(actual.get(i), keys);
      if (!e.equals(a)) {
        fail(where + ": key of row " + i + " of " + expected.size() + " is " + a + ", expected " + e
            + (i > 0 ? " (previous key " + expectedKeys.get(i - 1) + ")" : ""));
      }
      expectedKeys.add(e);
    }
    int runStart = 0;
    for (int i = 1; i <= expected.size(); i++) {
      if (i == expected.size() || !expectedKeys.get(i).equals(expectedKeys.get(runStart))) {
        assertSameMultiset(where + ": rows with key " + expectedKeys.get(runStart) + " at ["
            + runStart + ", " + i + ")", expected.subList(runStart, i), actual.subList(runStart, i));
        runStart = i;
      }
    }
  }

  private static void assertSameMultiset(String where, List<Row> expected, List<Row> actual) {
    Map<String, Integer> counts = new HashMap<>();
    for (Row row : expected) {
      counts.merge(canonical(row), 1, Integer::sum);
    }
    for (Row row : actual) {
      counts.merge(canonical(row), -1, Integer::sum);
    }
    List<String> missing = new ArrayList<>();
    List<String> extra = new ArrayList<>();
    counts.forEach((row, n) -> (n > 0 ? missing : extra).addAll(Collections.nCopies(Math.abs(n), row)));
    if (!missing.isEmpty() || !extra.isEmpty()) {
      fail(where + ": " + missing.size() + " rows missing, e.g. " + first(missing, 5) + "; "
          + extra.size() + " rows unexpected, e.g. " + first(extra, 5));
    }
  }

  private static List<String> first(List<String> list, int n) {
    return list.subList(0, Math.min(n, list.size()));
  }

  private static List<Object> keyOf(Row row, List<Function<Row, Object>> keys) {
    List<Object> key = new ArrayList<>(keys.size());
    for (Function<Row, Object> f : keys) {
      key.add(normalizeKey(f.apply(row)));
    }
    return key;
  }

  /** A value equal to another exactly when Spark's sort compares the two as equal. */
  static Object normalizeKey(Object v) {
    if (v instanceof Double d) {
      return d.isNaN() ? Double.valueOf(Double.NaN) : Double.valueOf(d == 0.0 ? 0.0 : d);
    } else if (v instanceof Float f) {
      return f.isNaN() ? Float.valueOf(Float.NaN) : Float.valueOf(f == 0.0f ? 0.0f : f);
    } else if (v instanceof byte[] b) {
      return "0x" + java.util.HexFormat.of().formatHex(b);
    } else if (v instanceof BigDecimal d) {
      return d.stripTrailingZeros();
    } else if (v instanceof Row row) {
      List<Object> fields = new ArrayList<>();
      for (int i = 0; i < row.length(); i++) {
        fields.add(normalizeKey(row.get(i)));
      }
      return fields;
    } else if (v instanceof scala.collection.Seq<?> seq) {
      List<Object> elements = new ArrayList<>();
      ScalaCollections.asJava(seq).forEach(e -> elements.add(normalizeKey(e)));
      return elements;
    }
    return v;
  }

  /** The row's exact content as a string: distinguishes -0.0 from 0.0, compares byte[] by content. */
  private static String canonical(Row row) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < row.length(); i++) {
      Object v = row.get(i);
      sb.append(i == 0 ? "" : " | ").append(v instanceof byte[] b ? "0x" + java.util.HexFormat.of()
          .formatHex(b) : v instanceof Row r ? "{" + canonical(r) + "}" : String.valueOf(v));
    }
    return sb.toString();
  }

  private static void assertMentions(Throwable error, String... words) {
    StringBuilder chain = new StringBuilder();
    for (Throwable t = error; t != null; t = t.getCause()) {
      chain.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
    }
    String text = chain.toString().toLowerCase(Locale.ROOT);
    for (String word : words) {
      assertTrue(text.contains(word.toLowerCase(Locale.ROOT)),
          "error does not mention '" + word + "':\n" + chain);
    }
  }

  // ---------------------------------------------------------------- Spark plumbing

  /** Runs {@code body} with {@code conf} set; afterwards gpusort keys are unset, others restored. */
  private static <T> T withConf(Map<String, String> conf, Supplier<T> body) {
    Map<String, scala.Option<String>> saved = new HashMap<>();
    conf.forEach((k, v) -> {
      saved.put(k, spark.conf().getOption(k));
      spark.conf().set(k, v);
    });
    try {
      return body.get();
    } finally {
      saved.forEach((k, v) -> {
        if (v.isDefined()) {
          spark.conf().set(k, v.get());
        } else {
          spark.conf().unset(k);
        }
      });
      SparkTestSession.resetGpuSortConf();
    }
  }

  private static Map<String, String> with(Map<String, String> a, Map<String, String> b) {
    Map<String, String> merged = new LinkedHashMap<>(a);
    merged.putAll(b);
    return merged;
  }

  /**
   * Jobs started while {@code action} ran. Job starts reach the status store asynchronously, so
   * this runs a marker job afterwards and waits until it is visible: the listener bus delivers
   * events in order, so every earlier job start is visible too.
   */
  private static int jobsStartedBy(Runnable action) {
    SparkContext sc = spark.sparkContext();
    String group = "gpusort-oracle-" + UUID.randomUUID();
    sc.setJobGroup(group, "counted by GpuSortOracleTest", false);
    try {
      action.run();
    } finally {
      sc.clearJobGroup();
    }
    String marker = group + "-marker";
    sc.setJobGroup(marker, "marker", false);
    try {
      JavaSparkContext.fromSparkContext(sc).parallelize(List.of(1), 1).count();
    } finally {
      sc.clearJobGroup();
    }
    long deadlineNanos = System.nanoTime() + 30_000_000_000L;
    while (sc.statusTracker().getJobIdsForGroup(marker).length == 0) {
      assertTrue(System.nanoTime() < deadlineNanos, "marker job never reached the status store");
      Thread.onSpinWait();
    }
    return sc.statusTracker().getJobIdsForGroup(group).length;
  }

  private static boolean containsSparkSort(SparkPlan plan) {
    if (plan instanceof SortExec) {
      return true;
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      if (containsSparkSort(child)) {
        return true;
      }
    }
    return false;
  }

  private static boolean cudaDevicePresent() {
    return Files.exists(Path.of("/dev/nvidiactl")) || Files.exists(Path.of("/proc/driver/nvidia"));
  }

  private static boolean vulkanDriverPresent() {
    if (System.getenv("VK_ICD_FILENAMES") != null || System.getenv("VK_DRIVER_FILES") != null) {
      return true;
    }
    for (String dir : List.of("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d",
        "/usr/local/share/vulkan/icd.d")) {
      java.io.File[] files = new java.io.File(dir).listFiles();
      if (files != null && files.length > 0) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- cases and data

  private static long baseSeed() {
    String s = System.getProperty("gpusort.test.seed");
    return s == null || s.isBlank() ? ThreadLocalRandom.current().nextLong() : Long.parseLong(s.trim());
  }

  /** A generator that depends only on the base seed and the case name, not on test order. */
  private static Random caseRandom(String name) {
    return new Random(BASE_SEED ^ (name.hashCode() * 0x9E3779B97F4A7C15L));
  }

  private static String ctx(String name, int numRows, Distribution dist, Layout layout) {
    return "[seed=" + BASE_SEED + " case=" + name + "] rows=" + numRows + " " + dist + " input="
        + layout.description;
  }

  private static List<SortKey> randomKeys(Random r, int n) {
    List<KeyColumn> all = new ArrayList<>(Arrays.asList(KeyColumn.values()));
    Collections.shuffle(all, r);
    List<SortKey> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(new SortKey(all.get(i).name, Dir.SORT_ORDERS.get(r.nextInt(Dir.SORT_ORDERS.size()))));
    }
    return keys;
  }

  private static Column[] columns(List<SortKey> keys) {
    return keys.stream().map(SortKey::toColumn).toArray(Column[]::new);
  }

  private static List<Function<Row, Object>> extractors(List<SortKey> keys) {
    return keys.stream().map(k -> field(k.column())).collect(Collectors.toList());
  }

  private static Function<Row, Object> field(String name) {
    return row -> row.get(row.fieldIndex(name));
  }

  /** One sort column and its direction. */
  private record SortKey(String column, Dir dir) {
    Column toColumn() {
      return dir.apply(col(column));
    }

    @Override
    public String toString() {
      return column + " " + dir;
    }
  }

  /** The sort orders of {@link Column}, including the plain asc() and desc(). */
  private enum Dir {
    ASC, DESC, ASC_NULLS_FIRST, ASC_NULLS_LAST, DESC_NULLS_FIRST, DESC_NULLS_LAST;

    static final List<Dir> SORT_ORDERS = List.of(values());

    Column apply(Column c) {
      return switch (this) {
        case ASC -> c.asc();
        case DESC -> c.desc();
        case ASC_NULLS_FIRST -> c.asc_nulls_first();
        case ASC_NULLS_LAST -> c.asc_nulls_last();
        case DESC_NULLS_FIRST -> c.desc_nulls_first();
        case DESC_NULLS_LAST -> c.desc_nulls_last();
      };
    }
  }

  /** How the input's rows are spread over partitions; all deterministic, for withinPartitions. */
  private enum Layout {
    LOCAL("local relation"),
    HASH_4("repartition(4, id)"),
    EMPTY_PARTS("repartition(16, k_bool): at most 3 non-empty"),
    ONE("coalesce(1)"),
    FILTERED("repartition(6, id % 6) where id % 6 < 2"),
    HASH_200("repartition(200, id)");

    /** The layouts the per-type cases cycle through; 200 tasks per stage cost too much for them. */
    static final List<Layout> ROTATION = List.of(LOCAL, HASH_4, EMPTY_PARTS, ONE, FILTERED);

    final String description;

    Layout(String description) {
      this.description = description;
    }

    Dataset<Row> apply(Dataset<Row> df) {
      return switch (this) {
        case LOCAL -> df;
        case HASH_4 -> df.repartition(4, col("id"));
        case EMPTY_PARTS -> df.repartition(16, col("k_bool"));
        case ONE -> df.coalesce(1);
        case FILTERED -> df.repartition(6, col("id").mod(6)).filter(col("id").mod(6).lt(2));
        case HASH_200 -> df.repartition(200, col("id"));
      };
    }
  }

  /** Key types no engine encodes: each with a frame holding it, its key function and type name. */
  private enum Unsupported {
    STRUCT("k_struct", "struct", df -> df.withColumn("k_struct",
        functions.struct(col("k_int"), col("k_str"))), row -> row.get(row.fieldIndex("k_struct"))),
    ARRAY("k_array", "array", df -> df.withColumn("k_array",
        functions.array(col("k_double"), col("k_float").cast("double"))),
        row -> row.get(row.fieldIndex("k_array"))),
    COLLATED("k_lcase", "UTF8_LCASE", df -> df.withColumn("k_lcase",
        LineFeatures.collate(col("k_str"), "UTF8_LCASE")), row -> {
          String s = row.getAs("k_lcase");
          return s == null ? null : s.toLowerCase(Locale.ROOT);
        }),
    DAY_TIME_INTERVAL("k_dt_interval", "interval", df -> df, row -> row.get(row.fieldIndex("k_dt_interval"))),
    YEAR_MONTH_INTERVAL("k_ym_interval", "interval", df -> df, row -> {
      Period p = row.getAs("k_ym_interval");
      return p == null ? null : p.toTotalMonths();
    });

    final String column;
    final String typeWord;
    final UnaryOperator<Dataset<Row>> derive;
    final Function<Row, Object> key;

    Unsupported(String column, String typeWord, UnaryOperator<Dataset<Row>> derive,
        Function<Row, Object> key) {
      this.column = column;
      this.typeWord = typeWord;
      this.derive = derive;
      this.key = key;
    }

    /** The cases this Spark line has: collations are Spark 4's. */
    static List<Unsupported> onThisLine() {
      return Arrays.stream(values())
          .filter(u -> u != COLLATED || Collations.supported()).toList();
    }

    Dataset<Row> frame(Random r) {
      if (this == DAY_TIME_INTERVAL || this == YEAR_MONTH_INTERVAL) {
        return intervalFrame(r).repartition(3, col("id"));
      }
      return derive.apply(TestData.frame(r, 1000, Distribution.FEW_DISTINCT)).repartition(3, col("id"));
    }

    private static Dataset<Row> intervalFrame(Random r) {
      StructType schema = new StructType().add("id", DataTypes.LongType, false)
          .add("k_dt_interval", DataTypes.createDayTimeIntervalType())
          .add("k_ym_interval", DataTypes.createYearMonthIntervalType());
      List<Duration> durations = List.of(Duration.ZERO, Duration.ofNanos(-1000), Duration.ofDays(-1),
          Duration.ofDays(106_751_991L), Duration.ofDays(-106_751_991L), Duration.ofSeconds(1, 5000));
      List<Row> rows = new ArrayList<>();
      for (int i = 0; i < 500; i++) {
        Duration d = r.nextInt(8) == 0 ? null : r.nextBoolean()
            ? durations.get(r.nextInt(durations.size())) : Duration.ofSeconds(r.nextInt(-500, 500));
        Period p = r.nextInt(8) == 0 ? null : Period.ofMonths(r.nextInt(-30, 30));
        rows.add(RowFactory.create((long) i, d, p));
      }
      return SparkTestSession.get().createDataFrame(rows, schema);
    }
  }

}
