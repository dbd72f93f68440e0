package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sha2;
import static org.apache.spark.sql.functions.substring;
import static org.apache.spark.sql.functions.xxhash64;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.Engines;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

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
 * <p>The input is generated once (per size) and either cached in memory
 * ({@code --input cached}), or written once to Parquet and read back from the files by every
 * case, floors included ({@code --input parquet}): no case reads a cache then.
 *
 * <p>After the main table comes the GpuSort node's stage times of each GpuSort case: every SQL
 * metric of the node whose key ends in {@code Time}, whatever stages the node reports, summed
 * over the node's tasks (task time, not wall time), and its engine calls ({@code engineChunks}),
 * each the median over the timed repetitions.
 *
 * <p>The warm-up run of each case is recorded: the table shows it ({@code first s}), against the
 * case's median ({@code first/med}) and, for GpuSort cases, against its Spark sort's warm-up
 * ({@code 1st ratio}, beside the steady {@code ratio}). At the first size it is the case's first
 * run in the JVM. After the tables comes the process's page-locked host arena per case
 * ({@link ArenaReport}).
 *
 * <p>Each run, first and timed, starts once the writes of the runs before it are on disk ({@link
 * DiskSettle}: a "settle" line says where it waited), so that one case's shuffle files written
 * back do not slow the next case's writes.
 *
 * <pre>{@code
 * spark-submit --driver-memory 8g --class io.gpusort.examples.SortBenchmark \
 *     spark-gpusort-examples_spark<line>_<scala>-<version>.jar \
 *     [--rows 10000000|1e8,3e8,6e8] [--reps 5] [--partitions N] \
 *     [--engine cpu] [--input cached|parquet] [--parquet-dir DIR] [--key long|string] \
 *     [--cases all|within|global|file] [--conf key=value ...] [--variant label:key=value,... ...] \
 *     [--baseline-max-rows N] [--first LABEL]
 * spark-submit --driver-memory 8g --class io.gpusort.examples.SortBenchmark <jar> --session busy \
 *     [--rows N] [--string-rows N] [--alone-jvms true|false] [--alone-warmups 3] [--reps 5] \
 *     [--engine cpu] [--partitions N] [--parquet-dir DIR] [--conf key=value ...] [--skip LABEL ...]
 * }</pre>
 *
 * <p>Options: {@code --rows} (default 10,000,000): a size, or a comma list of sizes
 * ({@code 1e8,3e8,6e8}; whole numbers, digits or powers of ten), run in order in one JVM: each
 * size's input is generated, its cases run and its tables printed, and the input released
 * (unpersisted, or its files deleted) before the next; after the last size a growth table gives
 * each case's median at every size and its growth from one size to the next (time at a size /
 * time at the size before, the row count ratio in the header), beside it for GpuSort cases the
 * growth of its Spark sort. {@code --baseline-max-rows N}: at sizes above N only the floors and
 * GpuSort's cases run, not Spark's sorts (default: every size runs them).
 * {@code --skip LABEL} (repeatable): cases whose label holds LABEL (in any case) do not run.
 * {@code --first LABEL}: the first case whose label holds LABEL (in any case) runs first in the
 * warm-up round, the others after it in their order, so that in a fresh JVM it is the JVM's
 * first sort. {@code --reps} timed repetitions after one
 * warm-up (default 5), {@code --master} (default: spark-submit's, else local[2]),
 * {@code --partitions} of the generated input (default: the master's default parallelism),
 * {@code --engine} of GpuSort's cases ({@code spark.gpusort.engine}: cpu, the default, cuda,
 * vulkan or auto), {@code --input} ({@code cached}, the default, or {@code parquet}),
 * {@code --parquet-dir} where {@code --input parquet} writes the rows (a Hadoop path that must
 * not exist yet; default: a new directory under {@code java.io.tmpdir}, which only a local
 * master can read: on a cluster give a directory on a shared filesystem), deleted after each size
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
 *
 * <p>{@code --session busy} ({@link BusySession}) measures one session that interleaves inputs
 * and shapes: cached long-key rows ({@code --rows}, one size), the same rows from Parquet and
 * cached string-key rows ({@code --string-rows}, default a fifth of {@code --rows}), each sorted
 * by {@code GpuSort.withinPartitions}, {@code GpuSort.byKey} (the global mode as configured) and
 * SQL {@code ORDER BY} with the plugin's replacement on. Every input is generated first; then one
 * warm-up round and {@code --reps} rounds, each running every case once in an order that
 * alternates inputs and shapes; it prints each case's median and first run. Then, unless
 * {@code --alone-jvms false}, each case runs again alone in a child JVM ({@link AloneRuns}: the
 * same java binary, class path, heap and system properties, and the same options, with
 * {@code --session alone --alone-case LABEL}), which generates only that case's input, runs it
 * {@code --alone-warmups} times untimed (default 3, its first run the first of them) and then
 * {@code --reps} times, and prints {@code ALONE\t<label>\t<median ms>\t<first ms>}; the last
 * table gives each case's busy and alone medians, their ratio and whether it is within 15%. Each
 * child gets a register of page-locked memory of its own
 * ({@code spark.gpusort.memory.pinned.registerDir}, unless
 * {@code --conf} sets one), so that its arena is sized as a lone process's while the parent's
 * stays page-locked: the host holds two arenas meanwhile. {@code --skip LABEL} leaves the cases
 * whose label holds it out of the alone JVMs (the busy session runs them all), so that the alone
 * runs can be split over several calls of a limited length. {@code --input}, {@code --key},
 * {@code --cases}, {@code --variant}, {@code --first} and {@code --baseline-max-rows} do not
 * apply to these sessions.
 *
 * <p>The arena figures are read in this JVM ({@code HostBuffer.arenaStats()},
 * {@code HostBuffer.acquireNanos()}): with a local master it is the executor; on a cluster they
 * are the driver's, and say nothing of the executors.
 */
public final class SortBenchmark {
  static final String KEY = "key";

  private static final String SCAN = "scan (no sort)";
  private static final String SHUFFLE = "hash repartition (no sort)";
  private static final String FILE_FLOOR = "Parquet -> Parquet (no sort)";
  private static final String FILE_SPARK = "read, Dataset.orderBy, write";


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

    String description() {
      return description;
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
  record PreparedInput(Dataset<Row> rows, String description, Runnable release)
      implements AutoCloseable {
    @Override
    public void close() {
      release.run();
    }
  }

  /**
   * What the timed repetitions measured: seconds per case and repetition, the seconds of each
   * case's warm-up run, per case one sample of the GpuSort node's stage metrics per repetition
   * (empty for cases of Spark), and the host arena's figures of each case's runs.
   */
  private record Measurements(double[][] seconds, double[] firstSeconds,
      List<List<Map<String, Double>>> stageSamples, double[][][] taskSpans, String[][] slowTasks,
      ArenaReport arena, List<List<Map<String, Double>>> firstStageSamples,
      double[][][] firstTaskSpans) {}

  private static final String SQL_EXTENSIONS = "spark.sql.extensions";
  static final String SQL_CASE = "SQL ORDER BY, plugin";

  private final SortBenchmarkArgs args;

  /** Where the Parquet input of the size being run was written, once it was. */
  private Path parquetPath;
  /** Checksums of Spark's sort of the size's input, once a file case was checked against them. */
  private OrderChecksum expectedFileChecksum;

  /**
   * Which cases run: all, the sorts within partitions (with the scan), the global ones, or the
   * whole Parquet-to-Parquet jobs ({@code file}, which reads Parquet input).
   */
  enum Cases { ALL, WITHIN, GLOBAL, FILE }

  private SortBenchmark(SortBenchmarkArgs args) {
    this.args = args;
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
        benchmark.args.master(), "local[2]");
    try {
      benchmark.run(spark, System.out);
    } catch (FileSortArgs.UsageException e) {
      System.err.println("SortBenchmark: error: " + e.getMessage());
      spark.stop();
      System.exit(FileSort.EXIT_USAGE);
    } finally {
      spark.stop();
    }
  }

  /**
   * The benchmark {@code argv} asks for.
   *
   * @throws IllegalArgumentException naming the option, for an unknown option, a missing or bad
   *     value, {@code --parquet-dir} without {@code --input parquet}, or an option the session
   *     does not read
   */
  static SortBenchmark parse(String[] argv) {
    return new SortBenchmark(SortBenchmarkArgs.parse(argv));
  }

  SortBenchmarkArgs args() {
    return args;
  }

  void run(SparkSession spark, PrintStream out) {
    int numPartitions = args.partitions() > 0 ? args.partitions()
        : spark.sparkContext().defaultParallelism();
    // One engine for every GpuSort case; the global mode is set per case.
    spark.conf().set(GpuSortConf.ENGINE.key(), args.engine());
    args.settings().forEach((key, value) -> spark.conf().set(key, value));
    out.println(ExampleRuntime.keepHeapThroughCollections());
    switch (args.session()) {
      case CASES -> SizeSeries.run(this, spark, numPartitions, out);
      case BUSY -> new BusySession(this, spark, numPartitions).run(out);
      case ALONE -> AloneRuns.runAlone(this, spark, numPartitions, out);
    }
  }

  /**
   * One size of the series: generates {@code numRows} rows, runs the cases on them (Spark's sorts
   * only {@code withSparkSorts}), prints the size's tables and releases the input.
   *
   * @return each case's median seconds
   */
  SizeSeries.SizeResult runSize(SparkSession spark, int numPartitions, long numRows,
      boolean withSparkSorts, PrintStream out) {
    parquetPath = null;
    expectedFileChecksum = null;
    List<Case> cases = cases(FileSort.engineUsed(spark), numPartitions);
    if (args.first() != null && firstCaseIndex(cases) < 0) {
      throw new FileSortArgs.UsageException("--first '" + args.first() + "' is in no case's "
          + "label; the cases are: " + String.join("; ", cases.stream().map(Case::name).toList()));
    }
    if (!withSparkSorts) {
      cases.removeIf(SortBenchmark::isSparkSort);
    }
    int firstCase = Math.max(0, firstCaseIndex(cases));
    Dataset<Row> generated = args.keyShape().generate(spark, numRows, numPartitions);
    long preparing = System.nanoTime();
    try (PreparedInput prepared = prepare(spark, generated, args.input(), args.parquetDir())) {
      // What a job's first query meets in the JVM shows here too: the input's making is one.
      out.printf(Locale.ROOT, "input made in %.2f s, ready %.2f s after the JVM started%n",
          (System.nanoTime() - preparing) / 1e9, (System.currentTimeMillis()
              - java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime()) / 1e3);
      out.printf(Locale.ROOT, "SortBenchmark: %,d rows in %d partitions, master %s, %d "
          + "repetitions after 1 warm-up%n", numRows, numPartitions,
          spark.sparkContext().master(), args.reps());
      args.settings().forEach((key, value) ->
          out.printf(Locale.ROOT, "  --conf %s=%s%n", key, value));
      out.printf(Locale.ROOT, "  --key %s: %s%n", lowerName(args.keyShape()),
          args.keyShape().description());
      out.printf(Locale.ROOT, "  --input %s: %s%n", lowerName(args.input()),
          prepared.description());
      if (!withSparkSorts) {
        out.printf(Locale.ROOT, "  --baseline-max-rows %,d: Spark's sorts do not run at this "
            + "size, only the floors and GpuSort's%n", args.baselineMaxRows());
      }
      if (args.first() != null) {
        out.printf(Locale.ROOT, "  --first %s: %s%n", args.first(), firstCaseIndex(cases) < 0
            ? "its case does not run at this size; the usual order"
            : cases.get(firstCase).name() + " runs first in the warm-up round");
      }
      ArenaReport.printState(spark, out);
      Measurements measured = measure(spark, cases, prepared.rows(), firstCase);
      BenchmarkReport.printTable(cases, measured.seconds(), measured.firstSeconds(), numRows,
          out);
      BenchmarkReport.printStageTable(cases, measured.stageSamples(), out);
      BenchmarkReport.printTaskTable(cases, measured.taskSpans(), out);
      BenchmarkReport.printSlowTasks(cases, measured.slowTasks(), out);
      BenchmarkReport.printStageTable("GpuSort stages, first run", cases,
          measured.firstStageSamples(), out);
      BenchmarkReport.printTaskTable("tasks, first run", cases, measured.firstTaskSpans(), out);
      measured.arena().print(cases.stream().map(Case::name).toList(), out);
      measured.arena().printFirstRunCosts(cases.stream().map(Case::name).toList(), out);
      double[] medians = new double[cases.size()];
      for (int i = 0; i < cases.size(); i++) {
        medians[i] = ExampleRuntime.median(measured.seconds()[i]);
      }
      return new SizeSeries.SizeResult(numRows, cases, medians);
    }
  }

  /** Spark's own sorts: neither a floor nor GpuSort. */
  private static boolean isSparkSort(Case c) {
    return !c.gpuSort() && c.floor() != null;
  }

  /** The first case whose label holds {@code --first} (in any case), or -1. */
  private int firstCaseIndex(List<Case> cases) {
    String wanted = args.first() == null ? null : args.first().toLowerCase(Locale.ROOT);
    for (int i = 0; wanted != null && i < cases.size(); i++) {
      if (cases.get(i).name().toLowerCase(Locale.ROOT).contains(wanted)) {
        return i;
      }
    }
    return -1;
  }

  private static String lowerName(Enum<?> constant) {
    return constant.name().toLowerCase(Locale.ROOT);
  }

  /**
   * {@code generated} as every case reads it: cached, or written to Parquet (at
   * {@code parquetDir}, or a new directory under {@code java.io.tmpdir} when null) and read back.
   */
  PreparedInput prepare(SparkSession spark, Dataset<Row> generated, Input input,
      String parquetDir) {
    return switch (input) {
      case CACHED -> {
        Dataset<Row> cached = ExampleRuntime.cacheUncompressed(spark, generated);
        yield new PreparedInput(cached, "cached once (memory, then disk; uncompressed), every "
            + "case reads the cache", cached::unpersist);
      }
      case PARQUET -> writeParquet(spark, generated, parquetDir);
    };
  }

  /**
   * Writes {@code generated} to {@code --parquet-dir} or a new directory under
   * {@code java.io.tmpdir}, and reads it back; closing deletes the directory.
   *
   * @throws IllegalArgumentException if {@code --parquet-dir} exists already: it is not the
   *     benchmark's to overwrite or delete
   */
  private PreparedInput writeParquet(SparkSession spark, Dataset<Row> generated,
      String parquetDir) {
    Path dir = parquetDir != null ? newDir(spark, new Path(parquetDir)) : newTempDir();
    Runnable delete = () -> deleteDir(spark, dir);
    try {
      // Overwrite: a new temporary directory exists, empty; --parquet-dir was checked absent.
      generated.write().mode(SaveMode.Overwrite).parquet(dir.toString());
      Dataset<Row> rows = spark.read().parquet(dir.toString());
      parquetPath = dir;
      String description = String.format(Locale.ROOT, "written once to %s, every case reads it "
          + "back (%d partitions) with no cache; deleted after its cases", dir,
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
    Map<String, Map<String, String>> variants = args.variants();
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
    Cases which = args.cases();
    List<Case> chosen = new ArrayList<>(switch (which) {
      case ALL -> all;
      case GLOBAL -> all.subList(0, 5);
      case WITHIN -> all.subList(5, 8);
      case FILE -> fileCases(engine);
    });
    // --skip: cases left out to save time; a case whose baseline is skipped shows no ratio.
    chosen.removeIf(c -> args.skip().stream()
        .anyMatch(s -> c.name().toLowerCase(Locale.ROOT).contains(s)));
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
   * One warm-up run of every case (the {@code --first} case first, then the others in their
   * order), then {@code --reps} timed rounds, the cases in a different order each round; after
   * each timed run of a GpuSort case, its node's stage metrics.
   */
  private Measurements measure(SparkSession spark, List<Case> cases, Dataset<Row> rows,
      int firstCase) {
    int reps = args.reps();
    double[][] seconds = new double[cases.size()][reps];
    double[] firstSeconds = new double[cases.size()];
    List<List<Map<String, Double>>> stageSamples = new ArrayList<>();
    cases.forEach(c -> stageSamples.add(new ArrayList<>()));
    List<List<Map<String, Double>>> firstStageSamples = new ArrayList<>();
    cases.forEach(c -> firstStageSamples.add(new ArrayList<>()));
    double[][][] firstTaskSpans = new double[cases.size()][1][];
    double[][][] taskSpans = new double[cases.size()][reps][];
    String[][] slowTasks = new String[cases.size()][reps];
    ArenaReport arena = new ArenaReport(cases.size());
    WriteCapture writes = new WriteCapture();
    TaskCapture tasks = new TaskCapture();
    Capture capture = new Capture(writes, tasks, arena);
    spark.listenerManager().register(writes);
    spark.sparkContext().addSparkListener(tasks);
    try {
      awaitWarmupsIfAsked(System.out);
      for (int k = 0; k < cases.size(); k++) {
        int i = k == 0 ? firstCase : k <= firstCase ? k - 1 : k;
        firstSeconds[i] = runOnce(spark, cases.get(i), i, rows, "first", capture);
        firstTaskSpans[i][0] = tasks.spans();
        if (cases.get(i).gpuSort() && cases.get(i).job() == null) {
          firstStageSamples.get(i).add(
              StageMetrics.sample(writes.next(spark, cases.get(i).name()).executedPlan()));
        }
      }
      for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < cases.size(); k++) {
          int i = (k + rep) % cases.size();
          Case c = cases.get(i);
          seconds[i][rep] = runOnce(spark, c, i, rows, "rep " + (rep + 1), capture);
          taskSpans[i][rep] = tasks.spans();
          slowTasks[i][rep] = tasks.medianAndSlowest();
          if (c.gpuSort()) {
            stageSamples.get(i).add(StageMetrics.sample(writes.next(spark, c.name()).executedPlan()));
          }
        }
      }
    } finally {
      spark.listenerManager().unregister(writes);
      spark.sparkContext().removeSparkListener(tasks);
    }
    return new Measurements(seconds, firstSeconds, stageSamples, taskSpans, slowTasks, arena,
        firstStageSamples, firstTaskSpans);
  }

  /**
   * The system property that makes the first run wait for the background warm-ups to end: a
   * diagnostic, to tell what a first run pays because a warm-up was still running from what it
   * pays anyway. Users' queries never wait for them.
   */
  static final String AWAIT_WARMUPS_PROPERTY = "gpusort.bench.awaitWarmups";

  /**
   * Where {@value #AWAIT_WARMUPS_PROPERTY} is true, waits for the background warm-ups before the
   * first run and prints "await-warmups | waited S s".
   */
  private static void awaitWarmupsIfAsked(PrintStream out) {
    if (!Boolean.getBoolean(AWAIT_WARMUPS_PROPERTY)) {
      return;
    }
    long start = System.nanoTime();
    Engines.awaitWarmups();
    out.printf(Locale.ROOT, "await-warmups | waited %.2f s%n", (System.nanoTime() - start) / 1e9);
  }

  /** What records a run: the writes' plans, the tasks' spans, the arena's figures. */
  private record Capture(WriteCapture writes, TaskCapture tasks, ArenaReport arena) {}

  /**
   * Runs case {@code c} (index {@code i}) once as run {@code run} ("first": the warm-up run, its
   * output checked; else a timed one), after the listeners' reports of earlier runs arrived (they
   * would be taken for this one's) and with the captures cleared, prints its window and adds its
   * arena figures; returns its seconds, its tasks' and writes' reports arrived.
   */
  private double runOnce(SparkSession spark, Case c, int i, Dataset<Row> rows, String run,
      Capture capture) {
    boolean first = run.equals("first");
    WriteCapture.awaitListeners(spark);
    capture.writes().clear();
    capture.tasks().clear();
    DiskSettle.beforeRun(c.name() + " | " + run);
    ArenaReport.Mark before = ArenaReport.Mark.now();
    long from = System.currentTimeMillis();
    double seconds = timeSeconds(spark, c, rows, first);
    printRunWindow(c.name(), run, from);
    capture.arena().add(i, first, before);
    WriteCapture.awaitListeners(spark);
    return seconds;
  }

  /**
   * A line naming run {@code run} of case {@code name} that began at {@code fromMillis} and just
   * ended, with its wall-clock window, for matching a flight recording's samples to runs: "window
   * CASE | RUN | from HH:MM:SS.mmm to HH:MM:SS.mmm".
   */
  static void printRunWindow(String name, String run, long fromMillis) {
    java.time.format.DateTimeFormatter clock =
        java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    java.time.ZoneId zone = java.time.ZoneId.systemDefault();
    System.out.printf(Locale.ROOT, "window %s | %s | from %s to %s%n", name, run,
        clock.format(java.time.Instant.ofEpochMilli(fromMillis).atZone(zone)),
        clock.format(java.time.Instant.now().atZone(zone)));
  }

  /** Keys some case's own settings have set in this session: reset before each run. */
  private final java.util.Set<String> caseKeys = new java.util.HashSet<>();

  /**
   * Runs {@code c} once and returns its seconds; a file case's output is deleted after, and with
   * {@code check} first read back and compared with Spark's sort of the input.
   */
  double timeSeconds(SparkSession spark, Case c, Dataset<Row> input, boolean check) {
    Map<String, String> settings = args.settings();
    // A variant's settings, and a case's own (byKey's global.mode), hold for that case only: the
    // others get the run's settings back. (Until 2026-12-05 a case's own were left set, so the SQL
    // case run after byKey's sort mode ran in that mode: its "first run" 2.6-3.5x its steady one.)
    List<java.util.Set<String>> keySets = new ArrayList<>();
    args.variants().values().forEach(conf -> keySets.add(conf.keySet()));
    keySets.add(caseKeys);
    for (java.util.Set<String> keys : keySets) {
      for (String key : keys) {
        if (settings.containsKey(key)) {
          spark.conf().set(key, settings.get(key));
        } else {
          spark.conf().unset(key);
        }
      }
    }
    caseKeys.addAll(c.conf().keySet());
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
}
