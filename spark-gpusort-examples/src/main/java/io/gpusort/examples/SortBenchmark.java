package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sha2;
import static org.apache.spark.sql.functions.substring;
import static org.apache.spark.sql.functions.xxhash64;

import io.gpusort.GpuSort;
import io.gpusort.compat.ScalaCollections;
import io.gpusort.config.GpuSortConf;
import io.gpusort.sql.GpuRangeSortExchangeExec;
import io.gpusort.sql.GpuSortExec;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * An engine of GpuSort (the CPU engine unless {@code --engine} says) against Spark's own sort,
 * measured in the same run on the same input: {@link GpuSort#byKey} (in both
 * {@code spark.gpusort.global.mode}s) and the same {@code orderBy} with the plugin's SQL
 * extension on (Spark's plan, its sort replaced) against {@code Dataset.orderBy}, and
 * {@link GpuSort#withinPartitions} against {@code sortWithinPartitions}, each beside its floor
 * measured in the same run on the same input: a hash shuffle of the rows (global sorts) or a scan
 * of them (within partitions), with no sort. Each run is a noop write (the file cases write
 * Parquet); the cases take turns within
 * each repetition so that drift in the machine's speed spreads over all of them.
 *
 * <p>The input is generated once and either cached in memory ({@code --input cached}), or written
 * once to Parquet and read back from the files by every case, floors included
 * ({@code --input parquet}): no case reads a cache then.
 *
 * <p>After the main table comes the GpuSort node's stage times of each GpuSort case: every SQL
 * metric of the node whose key ends in {@code Time}, whatever stages the node reports, summed
 * over the node's tasks (task time, not wall time), and its engine calls ({@code engineChunks}),
 * each the median over the timed repetitions.
 *
 * <pre>{@code
 * spark-submit --driver-memory 8g --class io.gpusort.examples.SortBenchmark \
 *     spark-gpusort-examples_spark<line>_<scala>-<version>.jar \
 *     [--rows 10000000] [--reps 5] [--partitions N] \
 *     [--engine cpu] [--input cached|parquet] [--parquet-dir DIR] [--key long|string] \
 *     [--cases all|within|global|file] [--conf key=value ...] [--variant label:key=value,... ...]
 * }</pre>
 *
 * <p>Options: {@code --rows} (default 10,000,000), {@code --reps} timed repetitions after one
 * warm-up (default 5), {@code --master} (default: spark-submit's, else local[2]),
 * {@code --partitions} of the generated input (default: the master's default parallelism),
 * {@code --engine} of GpuSort's cases ({@code spark.gpusort.engine}: cpu, the default, cuda,
 * vulkan or auto), {@code --input} ({@code cached}, the default, or {@code parquet}),
 * {@code --parquet-dir} where {@code --input parquet} writes the rows (a Hadoop path that must
 * not exist yet; default: a new directory under {@code java.io.tmpdir}, which only a local
 * master can read: on a cluster give a directory on a shared filesystem), deleted at the end
 * either way, {@code --key} ({@code long}, the default: a random long key and two long payload
 * columns; {@code string}: a random 10-character string key and a 90-character string payload).
 * The sort key column is named {@code key} in both shapes. The Parquet input is read back with
 * Spark's file split settings, so its partitions can differ from {@code --partitions}; the header
 * says how many it has. {@code --cases}: {@code all} (the default), {@code within} (the scan and
 * the two sorts within partitions), {@code global} (the hash shuffle and the four global
 * sorts) or {@code file}: whole jobs that read the input's Parquet files, sort them globally and
 * write Parquet (no sort, the floor; Spark's read-{@code orderBy}-write; {@link FileSort}; the
 * SQL extension's), each output read back once and checked against Spark's sort of the input
 * ({@code file} writes the input to Parquet whatever {@code --input} says). The session loads
 * the plugin's SQL extension (unless {@code spark.sql.extensions} is set), with
 * {@code spark.gpusort.sql.enabled} off but in its SQL case. {@code --conf key=value}
 * (repeatable) sets a session setting before any case runs, such as
 * {@code spark.gpusort.cpu.gatherRows=true}. {@code --variant label:key=value[,key=value...]}
 * (repeatable) adds a {@code GpuSort.withinPartitions} case run with those settings, or with
 * {@code --cases global} a {@code GpuSort.byKey} case (merge mode unless the settings say);
 * settings read once per executor, such as {@code spark.gpusort.cuda.concurrentTasks}, need a
 * run of their own with {@code --conf}.
 */
public final class SortBenchmark {
  private static final String KEY = "key";

  private static final String SCAN = "scan (no sort)";
  private static final String SHUFFLE = "hash repartition (no sort)";
  private static final String FILE_FLOOR = "Parquet -> Parquet (no sort)";
  private static final String FILE_SPARK = "read, Dataset.orderBy, write";

  /** Metric keys of the GpuSort node with this suffix are stage times. */
  private static final String STAGE_TIME_SUFFIX = "Time";
  /** The GpuSort node's count of engine calls, shown beside its stage times. */
  static final String ENGINE_CALLS_METRIC = "engineChunks";
  /** Spark's type of a timing metric in milliseconds (all others are taken as nanoseconds). */
  private static final String MILLIS_TIMING_TYPE = "timing";

  /** Where every case reads the generated rows from. */
  enum Input {
    /** Cached once (memory, then disk), uncompressed. */
    CACHED,
    /** Written once to Parquet, read back from the files by every case. */
    PARQUET
  }

  /** The shape of the generated rows; the sort key column is named {@value #KEY} in each. */
  enum KeyShape {
    LONG("random long key, 2 long payloads"),
    STRING("random 10-character string key, 90-character string payload");

    private final String description;

    KeyShape(String description) {
      this.description = description;
    }

    /** {@code numRows} rows of this shape in {@code numPartitions}, the same on every call. */
    Dataset<Row> generate(SparkSession spark, long numRows, int numPartitions) {
      Dataset<Row> ids = spark.range(0, numRows, 1, numPartitions).toDF();
      Column id = col("id");
      return switch (this) {
        case LONG -> ids.select(xxhash64(id).as(KEY), id.as("p1"), xxhash64(id, lit(1)).as("p2"));
        case STRING -> ids.select(hexDigest(id, "k", 10).as(KEY), hexDigest(id, "p", 90)
            .as("payload"));
      };
    }

    /** The first {@code numChars} (at most 128) hex digits of two SHA-256 digests of the id. */
    private static Column hexDigest(Column id, String salt, int numChars) {
      Column text = id.cast("string");
      return substring(concat(sha2(concat(lit(salt + "1:"), text), 256),
          sha2(concat(lit(salt + "2:"), text), 256)), 1, numChars);
    }
  }

  /**
   * One measured case: what it runs, whether that is GpuSort (whose stage times are read), the
   * Spark case its ratio is taken against and the floor (the same input scanned, or
   * hash-shuffled, with no sort) its time is compared with.
   */
  record Case(String name, String engine, boolean gpuSort, String baseline, String floor,
      Map<String, String> conf, UnaryOperator<Dataset<Row>> sort, FileJob job) {
    /** A case timed as a noop write of {@code sort} applied to the input. */
    Case(String name, String engine, boolean gpuSort, String baseline, String floor,
        Map<String, String> conf, UnaryOperator<Dataset<Row>> sort) {
      this(name, engine, gpuSort, baseline, floor, conf, sort, null);
    }
  }

  /**
   * A whole job of the file cases: reads the input's Parquet files at {@code input} (read into
   * {@code rows}), writes Parquet to the directory {@code output}, which does not exist yet.
   */
  @FunctionalInterface
  private interface FileJob {
    void run(SparkSession spark, Dataset<Row> rows, String input, String output);
  }

  /** The rows every case reads, how the header describes them, and what releases them. */
  private record PreparedInput(Dataset<Row> rows, String description, Runnable release)
      implements AutoCloseable {
    @Override
    public void close() {
      release.run();
    }
  }

  /**
   * What the timed repetitions measured: seconds per case and repetition, and per case one
   * sample of the GpuSort node's stage metrics per repetition (empty for cases of Spark).
   */
  private record Measurements(double[][] seconds, List<List<Map<String, Double>>> stageSamples,
      double[][][] taskSpans, String[][] slowTasks) {}

  private final long numRows;
  private final int reps;
  private final String master;
  private final int partitions;
  private final String engine;
  private final Input input;
  private final String parquetDir;
  private final KeyShape keyShape;
  private final Cases which;
  private static final String SQL_EXTENSIONS = "spark.sql.extensions";
  private static final String SQL_CASE = "SQL ORDER BY, plugin";

  /** Where the Parquet input was written ({@code --input parquet}), once it was. */
  private Path parquetPath;
  /** Checksums of Spark's sort of the input, once a file case was checked against them. */
  private OrderChecksum expectedFileChecksum;

  /** Session settings ({@code --conf key=value}) set before any case runs. */
  private final Map<String, String> settings;
  /**
   * Extra cases ({@code --variant label:key=value,...}) by label: GpuSort.withinPartitions with
   * those settings, or with {@code --cases global} GpuSort.byKey (merge mode unless they say).
   */
  private final Map<String, Map<String, String>> variants;

  /**
   * Which cases run: all, the sorts within partitions (with the scan), the global ones, or the
   * whole Parquet-to-Parquet jobs ({@code file}, which reads Parquet input).
   */
  enum Cases { ALL, WITHIN, GLOBAL, FILE }

  private SortBenchmark(long numRows, int reps, String master, int partitions, String engine,
      Input input, String parquetDir, KeyShape keyShape, Cases which,
      Map<String, String> settings, Map<String, Map<String, String>> variants) {
    this.which = which;
    this.settings = settings;
    this.variants = variants;
    this.numRows = numRows;
    this.reps = reps;
    this.master = master;
    this.partitions = partitions;
    this.engine = engine;
    this.input = input;
    this.parquetDir = parquetDir;
    this.keyShape = keyShape;
  }

  public static void main(String[] argv) {
    SortBenchmark benchmark;
    try {
      benchmark = parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println("SortBenchmark: error: " + e.getMessage());
      System.exit(FileSort.EXIT_USAGE);
      return;
    }
    ExampleRuntime.quietLoggingUnlessConfigured();
    // The plugin's SQL extension, for the SQL case; off for every other case (sql.enabled).
    if (System.getProperty(SQL_EXTENSIONS) == null) {
      System.setProperty(SQL_EXTENSIONS, "io.gpusort.spark.GpuSortExtensions");
    }
    SparkSession spark = ExampleRuntime.createSession("spark-gpusort SortBenchmark",
        benchmark.master, "local[2]");
    try {
      benchmark.run(spark, System.out);
    } finally {
      spark.stop();
    }
  }

  /**
   * The benchmark {@code argv} asks for.
   *
   * @throws IllegalArgumentException naming the option, for an unknown option, a missing or bad
   *     value, or {@code --parquet-dir} without {@code --input parquet}
   */
  static SortBenchmark parse(String[] argv) {
    long rows = 10_000_000L;
    long reps = 5;
    String master = null;
    long partitions = 0;
    String engine = "cpu";
    Input input = Input.CACHED;
    String parquetDir = null;
    KeyShape keyShape = KeyShape.LONG;
    Cases which = Cases.ALL;
    Map<String, String> settings = new TreeMap<>();
    Map<String, Map<String, String>> variants = new java.util.LinkedHashMap<>();
    for (int i = 0; i < argv.length; i += 2) {
      String option = argv[i];
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("option " + option + " needs a value");
      }
      String value = argv[i + 1];
      switch (option) {
        case "--rows" -> rows = ExampleRuntime.wholeNumber(option, value, 1);
        case "--reps" -> reps = ExampleRuntime.wholeNumber(option, value, 1);
        case "--partitions" -> partitions = ExampleRuntime.wholeNumber(option, value, 1);
        case "--master" -> master = value;
        case "--engine" -> engine = GpuSortConf.ENGINE.parse(value).name().toLowerCase(Locale.ROOT);
        case "--input" -> input = choice(option, value, Input.class);
        case "--parquet-dir" -> parquetDir = value;
        case "--key" -> keyShape = choice(option, value, KeyShape.class);
        case "--cases" -> which = choice(option, value, Cases.class);
        case "--conf" -> {
          int eq = value.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--conf needs key=value, not '" + value + "'");
          }
          settings.put(value.substring(0, eq).trim(), value.substring(eq + 1).trim());
        }
        case "--variant" -> {
          int colon = value.indexOf(':');
          Map<String, String> conf = new TreeMap<>();
          for (String pair : value.substring(colon + 1).split(",")) {
            int eq = pair.indexOf('=');
            if (colon <= 0 || eq <= 0) {
              throw new IllegalArgumentException(
                  "--variant needs label:key=value[,key=value...], not '" + value + "'");
            }
            conf.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
          }
          variants.put(value.substring(0, colon), conf);
        }
        default -> throw new IllegalArgumentException("unknown option '" + option
            + "'; options are --rows, --reps, --master, --partitions, --engine, --input, "
            + "--parquet-dir, --key, --cases, --conf, --variant");
      }
    }
    if (which == Cases.FILE) {
      // The jobs read files: the input is written to Parquet once, whatever --input says.
      input = Input.PARQUET;
    }
    if (parquetDir != null && input != Input.PARQUET) {
      throw new IllegalArgumentException("--parquet-dir needs --input parquet");
    }
    return new SortBenchmark(rows, (int) Math.min(reps, 1000), master,
        (int) Math.min(partitions, Integer.MAX_VALUE), engine, input, parquetDir, keyShape, which,
        settings, variants);
  }

  /** The constant of {@code type} that {@code value} names, in any case. */
  private static <E extends Enum<E>> E choice(String option, String value, Class<E> type) {
    List<String> names = new ArrayList<>();
    for (E constant : type.getEnumConstants()) {
      String name = constant.name().toLowerCase(Locale.ROOT);
      if (name.equals(value.toLowerCase(Locale.ROOT))) {
        return constant;
      }
      names.add(name);
    }
    throw new IllegalArgumentException(option + " needs one of " + String.join(", ", names)
        + ", not '" + value + "'");
  }

  void run(SparkSession spark, PrintStream out) {
    int numPartitions = partitions > 0 ? partitions : spark.sparkContext().defaultParallelism();
    // One engine for every GpuSort case; the global mode is set per case.
    spark.conf().set(GpuSortConf.ENGINE.key(), engine);
    settings.forEach((key, value) -> spark.conf().set(key, value));
    Dataset<Row> generated = keyShape.generate(spark, numRows, numPartitions);
    try (PreparedInput prepared = prepare(spark, generated)) {
      out.printf(Locale.ROOT, "SortBenchmark: %,d rows in %d partitions, master %s, %d "
          + "repetitions after 1 warm-up%n", numRows, numPartitions,
          spark.sparkContext().master(), reps);
      settings.forEach((key, value) -> out.printf(Locale.ROOT, "  --conf %s=%s%n", key, value));
      out.printf(Locale.ROOT, "  --key %s: %s%n", lowerName(keyShape), keyShape.description);
      out.printf(Locale.ROOT, "  --input %s: %s%n", lowerName(input), prepared.description());
      List<Case> cases = cases(FileSort.engineUsed(spark), numPartitions);
      Measurements measured = measure(spark, cases, prepared.rows());
      BenchmarkReport.printTable(cases, measured.seconds(), numRows, out);
      BenchmarkReport.printStageTable(cases, measured.stageSamples(), out);
      BenchmarkReport.printTaskTable(cases, measured.taskSpans(), out);
      BenchmarkReport.printSlowTasks(cases, measured.slowTasks(), out);
    }
  }

  private static String lowerName(Enum<?> constant) {
    return constant.name().toLowerCase(Locale.ROOT);
  }

  private PreparedInput prepare(SparkSession spark, Dataset<Row> generated) {
    return switch (input) {
      case CACHED -> {
        Dataset<Row> cached = ExampleRuntime.cacheUncompressed(spark, generated);
        yield new PreparedInput(cached, "cached once (memory, then disk; uncompressed), every "
            + "case reads the cache", cached::unpersist);
      }
      case PARQUET -> writeParquet(spark, generated);
    };
  }

  /**
   * Writes {@code generated} to {@code --parquet-dir} or a new directory under
   * {@code java.io.tmpdir}, and reads it back; closing deletes the directory.
   *
   * @throws IllegalArgumentException if {@code --parquet-dir} exists already: it is not the
   *     benchmark's to overwrite or delete
   */
  private PreparedInput writeParquet(SparkSession spark, Dataset<Row> generated) {
    Path dir = parquetDir != null ? newDir(spark, new Path(parquetDir)) : newTempDir();
    Runnable delete = () -> deleteDir(spark, dir);
    try {
      // Overwrite: a new temporary directory exists, empty; --parquet-dir was checked absent.
      generated.write().mode(SaveMode.Overwrite).parquet(dir.toString());
      Dataset<Row> rows = spark.read().parquet(dir.toString());
      parquetPath = dir;
      String description = String.format(Locale.ROOT, "written once to %s, every case reads it "
          + "back (%d partitions) with no cache; deleted at the end", dir,
          rows.javaRDD().getNumPartitions());
      return new PreparedInput(rows, description, delete);
    } catch (RuntimeException e) {
      delete.run();
      throw e;
    }
  }

  private static Path newDir(SparkSession spark, Path dir) {
    try {
      if (dir.getFileSystem(spark.sparkContext().hadoopConfiguration()).exists(dir)) {
        throw new IllegalArgumentException("--parquet-dir " + dir + " exists already; give one "
            + "that does not (the benchmark deletes it at the end)");
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot check --parquet-dir " + dir, e);
    }
  }

  private static Path newTempDir() {
    try {
      java.nio.file.Path dir = Files.createTempDirectory("sort-benchmark-").toAbsolutePath();
      return new Path("file", null, dir.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory under java.io.tmpdir", e);
    }
  }

  /** Deletes {@code dir} and what it holds; a failure is reported, not thrown. */
  private static void deleteDir(SparkSession spark, Path dir) {
    try {
      dir.getFileSystem(spark.sparkContext().hadoopConfiguration()).delete(dir, true);
    } catch (IOException e) {
      System.err.println("SortBenchmark: warning: could not delete " + dir + ": " + e);
    }
  }

  private List<Case> cases(String engine, int numPartitions) {
    String mode = GpuSortConf.GLOBAL_MODE.key();
    List<Case> all = List.of(
        new Case(SHUFFLE, "-", false, null, null, Map.of(),
            ds -> ds.repartition(numPartitions, ds.col(KEY))),
        new Case("Dataset.orderBy", "spark", false, null, SHUFFLE, Map.of(),
            ds -> ds.orderBy(KEY)),
        new Case("GpuSort.byKey, global.mode=sort", engine, true, "Dataset.orderBy", SHUFFLE,
            Map.of(mode, "sort"), ds -> ds.transform(GpuSort.<Row>byKey(KEY))),
        new Case("GpuSort.byKey, global.mode=merge", engine, true, "Dataset.orderBy", SHUFFLE,
            Map.of(mode, "merge"), ds -> ds.transform(GpuSort.<Row>byKey(KEY))),
        // Spark's plan with the plugin's replacement: its range exchange and sort become one
        // GpuRangeSortExchange (the default global mode, merge).
        new Case(SQL_CASE, engine, true, "Dataset.orderBy", SHUFFLE,
            Map.of(GpuSortConf.SQL_ENABLED.key(), "true"), ds -> ds.orderBy(KEY)),
        new Case(SCAN, "-", false, null, null, Map.of(), ds -> ds),
        new Case("Dataset.sortWithinPartitions", "spark", false, null, SCAN, Map.of(),
            ds -> ds.sortWithinPartitions(KEY)),
        new Case("GpuSort.withinPartitions", engine, true, "Dataset.sortWithinPartitions", SCAN,
            Map.of(), ds -> ds.transform(GpuSort.<Row>withinPartitions(KEY))));
    List<Case> chosen = new ArrayList<>(switch (which) {
      case ALL -> all;
      case GLOBAL -> all.subList(0, 5);
      case WITHIN -> all.subList(5, 8);
      case FILE -> fileCases(engine);
    });
    if (which == Cases.GLOBAL) {
      variants.forEach((label, conf) -> {
        Map<String, String> merge = new java.util.LinkedHashMap<>(conf);
        merge.putIfAbsent(mode, "merge");
        chosen.add(new Case("GpuSort.byKey " + label, engine, true, "Dataset.orderBy", SHUFFLE,
            merge, ds -> ds.transform(GpuSort.<Row>byKey(KEY))));
      });
    } else if (which != Cases.FILE) {
      variants.forEach((label, conf) -> chosen.add(new Case("GpuSort.withinPartitions " + label,
          engine, true, "Dataset.sortWithinPartitions", SCAN, conf,
          ds -> ds.transform(GpuSort.<Row>withinPartitions(KEY)))));
    }
    return chosen;
  }

  /**
   * The whole job of sorting a Parquet file into Parquet: read and write with no sort (the
   * floor), Spark's read-{@code orderBy}-write (the baseline), {@link FileSort} as its users run
   * it ({@code GpuSort.byKey}, the default global mode), and Spark's job with the plugin's SQL
   * extension on.
   */
  private List<Case> fileCases(String engine) {
    String sql = GpuSortConf.SQL_ENABLED.key();
    return List.of(
        new Case(FILE_FLOOR, "-", false, null, null, Map.of(), null,
            (spark, rows, in, out) -> rows.write().parquet(out)),
        new Case(FILE_SPARK, "spark", false, null, FILE_FLOOR, Map.of(), null,
            (spark, rows, in, out) -> rows.orderBy(KEY).write().parquet(out)),
        new Case("FileSort (GpuSort.byKey)", engine, true, FILE_SPARK, FILE_FLOOR, Map.of(), null,
            SortBenchmark::runFileSort),
        new Case("read, SQL ORDER BY, write, plugin", engine, true, FILE_SPARK, FILE_FLOOR,
            Map.of(sql, "true"), null,
            (spark, rows, in, out) -> rows.orderBy(KEY).write().parquet(out)));
  }

  /** FileSort's own code path, in this session: {@code --input in --key key --output out}. */
  private static void runFileSort(SparkSession spark, Dataset<Row> rows, String in, String out) {
    java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
    PrintStream err = new PrintStream(errors, true, java.nio.charset.StandardCharsets.UTF_8);
    int code = FileSort.execute(spark, FileSortArgs.parse(new String[] {"--input", in,
        "--format", "parquet", "--key", KEY, "--output", out}),
        new PrintStream(java.io.OutputStream.nullOutputStream()), err);
    if (code != FileSort.EXIT_OK) {
      throw new IllegalStateException("FileSort exited with " + code + ": " + errors);
    }
  }

  /**
   * One warm-up run of every case, then {@link #reps} timed rounds, the cases in a different
   * order each round; after each timed run of a GpuSort case, its node's stage metrics.
   */
  private Measurements measure(SparkSession spark, List<Case> cases, Dataset<Row> rows) {
    double[][] seconds = new double[cases.size()][reps];
    List<List<Map<String, Double>>> stageSamples = new ArrayList<>();
    cases.forEach(c -> stageSamples.add(new ArrayList<>()));
    double[][][] taskSpans = new double[cases.size()][reps][];
    String[][] slowTasks = new String[cases.size()][reps];
    WriteCapture writes = new WriteCapture();
    TaskCapture tasks = new TaskCapture();
    spark.listenerManager().register(writes);
    spark.sparkContext().addSparkListener(tasks);
    try {
      for (Case c : cases) {
        timeSeconds(spark, c, rows, true);
      }
      for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < cases.size(); k++) {
          int i = (k + rep) % cases.size();
          Case c = cases.get(i);
          // Reports of earlier runs still on the way would be taken for this one's.
          WriteCapture.awaitListeners(spark);
          writes.clear();
          tasks.clear();
          seconds[i][rep] = timeSeconds(spark, c, rows, false);
          WriteCapture.awaitListeners(spark);
          taskSpans[i][rep] = tasks.spans();
          slowTasks[i][rep] = tasks.medianAndSlowest();
          if (c.gpuSort()) {
            stageSamples.get(i).add(stageSample(writes.next(spark, c.name()).executedPlan()));
          }
        }
      }
    } finally {
      spark.listenerManager().unregister(writes);
      spark.sparkContext().removeSparkListener(tasks);
    }
    return new Measurements(seconds, stageSamples, taskSpans, slowTasks);
  }

  /**
   * Runs {@code c} once and returns its seconds; a file case's output is deleted after, and with
   * {@code check} first read back and compared with Spark's sort of the input.
   */
  private double timeSeconds(SparkSession spark, Case c, Dataset<Row> input, boolean check) {
    // A variant's settings hold for its own case only: the others get the run's settings back.
    for (Map<String, String> conf : variants.values()) {
      for (String key : conf.keySet()) {
        if (settings.containsKey(key)) {
          spark.conf().set(key, settings.get(key));
        } else {
          spark.conf().unset(key);
        }
      }
    }
    // The plugin's replacement of Spark's sorts only in the SQL case (unless --conf asks).
    String sqlEnabled = GpuSortConf.SQL_ENABLED.key();
    spark.conf().set(sqlEnabled, settings.getOrDefault(sqlEnabled, "false"));
    c.conf().forEach((key, value) -> spark.conf().set(key, value));
    if (c.job() != null) {
      return timeFileJob(spark, c, input, check);
    }
    // GpuSort reads its configuration when the transform is applied, so build it after setting.
    Dataset<Row> sorted = c.sort().apply(input);
    System.gc();
    return ExampleRuntime.seconds(ExampleRuntime.timeNoopWriteNanos(sorted));
  }

  private double timeFileJob(SparkSession spark, Case c, Dataset<Row> input, boolean check) {
    Path output = new Path(parquetPath.getParent(), parquetPath.getName() + "-out-"
        + java.util.UUID.randomUUID());
    try {
      System.gc();
      long start = System.nanoTime();
      c.job().run(spark, input, parquetPath.toString(), output.toString());
      long nanos = System.nanoTime() - start;
      if (check && c.floor() != null) {
        checkSortedOutput(spark, c.name(), input, output);
      }
      return ExampleRuntime.seconds(nanos);
    } finally {
      deleteDir(spark, output);
    }
  }

  /**
   * Fails unless the Parquet files at {@code output}, read one by one in name order (the order a
   * sorted output's part files carry), hold the rows of {@code input} sorted by the key: the same
   * checksums ({@link OrderChecksum}) as Spark's sort of the input.
   */
  private void checkSortedOutput(SparkSession spark, String caseName, Dataset<Row> input,
      Path output) {
    if (expectedFileChecksum == null) {
      String sqlEnabled = GpuSortConf.SQL_ENABLED.key();
      String before = spark.conf().get(sqlEnabled);
      spark.conf().set(sqlEnabled, "false");
      expectedFileChecksum = OrderChecksum.of(input.orderBy(KEY), List.of(KEY));
      spark.conf().set(sqlEnabled, before);
    }
    List<OrderChecksum> parts = new ArrayList<>();
    try {
      org.apache.hadoop.fs.FileSystem fs =
          output.getFileSystem(spark.sparkContext().hadoopConfiguration());
      List<String> files = new ArrayList<>();
      for (org.apache.hadoop.fs.FileStatus f : fs.listStatus(output)) {
        if (f.getPath().getName().startsWith("part-")) {
          files.add(f.getPath().toString());
        }
      }
      java.util.Collections.sort(files);
      for (String file : files) {
        parts.add(OrderChecksum.of(spark.read().parquet(file), List.of(KEY)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + output, e);
    }
    String difference = OrderChecksum.concat(parts).differenceFrom(expectedFileChecksum);
    if (difference != null) {
      throw new IllegalStateException(caseName + ": its output and Spark's sort of the input: "
          + difference);
    }
  }

  /**
   * The stage metrics of the GpuSort nodes in {@code plan}, each summed over the nodes: stage
   * times ({@value #STAGE_TIME_SUFFIX} keys) in seconds, engine calls as a count. Empty if the
   * plan has no GpuSort node.
   */
  private static Map<String, Double> stageSample(SparkPlan plan) {
    Map<String, Double> sample = new TreeMap<>();
    for (SparkPlan node : gpuSortNodes(plan, new ArrayList<>())) {
      ScalaCollections.asJava(node.metrics()).forEach((key, metric) -> {
        if (key.endsWith(STAGE_TIME_SUFFIX)) {
          sample.merge(key, ExampleRuntime.seconds(nanos(metric)), Double::sum);
        } else if (key.equals(ENGINE_CALLS_METRIC)) {
          sample.merge(key, (double) Math.max(0, metric.value()), Double::sum);
        }
      });
    }
    return sample;
  }

  /** A timing metric's value in nanoseconds; Spark's "not set" (negative) counts as 0. */
  private static long nanos(SQLMetric metric) {
    long value = Math.max(0, metric.value());
    return MILLIS_TIMING_TYPE.equals(metric.metricType()) ? value * 1_000_000 : value;
  }

  /**
   * Adds the GpuSort nodes (the sort, the exchange that sorts, cuts and merges) of an executed
   * {@code plan} to {@code found}, looking into adaptive plans (their final plan) and query stages
   * as well as children; returns {@code found}.
   */
  private static List<SparkPlan> gpuSortNodes(SparkPlan plan, List<SparkPlan> found) {
    if (plan instanceof GpuSortExec || plan instanceof GpuRangeSortExchangeExec) {
      found.add(plan);
    }
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      gpuSortNodes(adaptive.executedPlan(), found);
    } else if (plan instanceof QueryStageExec stage) {
      gpuSortNodes(stage.plan(), found);
    }
    for (SparkPlan child : ScalaCollections.asJava(plan.children())) {
      gpuSortNodes(child, found);
    }
    return found;
  }
}
