package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.xxhash64;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * An engine of GpuSort (the CPU engine unless {@code --engine} says) against Spark's own sort, measured in the same run on the same cached
 * input: {@link GpuSort#byKey} (in both {@code spark.gpusort.global.mode}s) against
 * {@code Dataset.orderBy}, and {@link GpuSort#withinPartitions} against
 * {@code sortWithinPartitions}, each beside its floor measured in the same run on the same input:
 * a hash shuffle of the rows (global sorts) or a scan of them (within partitions), with no sort.
 * Each run is a noop write; the cases take turns within each repetition so that drift in the
 * machine's speed spreads over all of them.
 *
 * <pre>{@code
 * spark-submit --driver-memory 8g --class io.gpusort.examples.SortBenchmark \
 *     spark-gpusort-examples-<version>.jar [--rows 10000000] [--reps 5] [--partitions N] \
 *     [--engine cpu]
 * }</pre>
 *
 * <p>Options: {@code --rows} (default 10,000,000), {@code --reps} timed repetitions after one
 * warm-up (default 5), {@code --master} (default: spark-submit's, else local[2]),
 * {@code --partitions} of the generated input (default: the master's default parallelism),
 * {@code --engine} of GpuSort's cases ({@code spark.gpusort.engine}: cpu, the default, cuda,
 * vulkan or auto).
 * Rows are a random long key and two long payload columns.
 */
public final class SortBenchmark {
  private static final String KEY = "key";

  private static final String SCAN = "scan (no sort)";
  private static final String SHUFFLE = "hash repartition (no sort)";

  /**
   * One measured case: what it runs, the Spark case its ratio is taken against and the floor
   * (the same input scanned, or hash-shuffled, with no sort) its time is compared with.
   */
  private record Case(String name, String engine, String baseline, String floor,
      Map<String, String> conf, UnaryOperator<Dataset<Row>> sort) {}

  private final long numRows;
  private final int reps;
  private final String master;
  private final int partitions;
  private final String engine;

  private SortBenchmark(long numRows, int reps, String master, int partitions, String engine) {
    this.numRows = numRows;
    this.reps = reps;
    this.master = master;
    this.partitions = partitions;
    this.engine = engine;
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
    SparkSession spark = ExampleRuntime.createSession("spark-gpusort SortBenchmark",
        benchmark.master, "local[2]");
    try {
      benchmark.run(spark, System.out);
    } finally {
      spark.stop();
    }
  }

  static SortBenchmark parse(String[] argv) {
    long rows = 10_000_000L;
    long reps = 5;
    String master = null;
    long partitions = 0;
    String engine = "cpu";
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
        default -> throw new IllegalArgumentException("unknown option '" + option
            + "'; options are --rows, --reps, --master, --partitions, --engine");
      }
    }
    return new SortBenchmark(rows, (int) Math.min(reps, 1000), master,
        (int) Math.min(partitions, Integer.MAX_VALUE), engine);
  }

  void run(SparkSession spark, PrintStream out) {
    int numPartitions = partitions > 0 ? partitions : spark.sparkContext().defaultParallelism();
    // One engine for every GpuSort case; the global mode is set per case.
    spark.conf().set(GpuSortConf.ENGINE.key(), engine);
    Dataset<Row> input = ExampleRuntime.cacheUncompressed(spark, spark.range(0, numRows, 1,
        numPartitions).select(xxhash64(col("id")).as(KEY), col("id").as("p1"),
            xxhash64(col("id"), lit(1)).as("p2")));
    out.printf(Locale.ROOT, "SortBenchmark: %,d rows (random long key, 2 long payloads) in %d "
        + "partitions, master %s, %d repetitions after 1 warm-up%n",
        numRows, numPartitions, spark.sparkContext().master(), reps);

    List<Case> cases = cases(FileSort.engineUsed(spark), numPartitions);
    double[][] seconds = new double[cases.size()][reps];
    for (Case c : cases) {
      measure(spark, c, input);
    }
    for (int rep = 0; rep < reps; rep++) {
      for (int k = 0; k < cases.size(); k++) {
        int i = (k + rep) % cases.size();
        seconds[i][rep] = measure(spark, cases.get(i), input);
      }
    }
    printTable(cases, seconds, out);
    input.unpersist();
  }

  private List<Case> cases(String engine, int numPartitions) {
    String mode = GpuSortConf.GLOBAL_MODE.key();
    return List.of(
        new Case(SHUFFLE, "-", null, null, Map.of(),
            ds -> ds.repartition(numPartitions, ds.col(KEY))),
        new Case("Dataset.orderBy", "spark", null, SHUFFLE, Map.of(), ds -> ds.orderBy(KEY)),
        new Case("GpuSort.byKey, global.mode=sort", engine, "Dataset.orderBy", SHUFFLE,
            Map.of(mode, "sort"), ds -> ds.transform(GpuSort.<Row>byKey(KEY))),
        new Case("GpuSort.byKey, global.mode=merge", engine, "Dataset.orderBy", SHUFFLE,
            Map.of(mode, "merge"), ds -> ds.transform(GpuSort.<Row>byKey(KEY))),
        new Case(SCAN, "-", null, null, Map.of(), ds -> ds),
        new Case("Dataset.sortWithinPartitions", "spark", null, SCAN, Map.of(),
            ds -> ds.sortWithinPartitions(KEY)),
        new Case("GpuSort.withinPartitions", engine, "Dataset.sortWithinPartitions", SCAN,
            Map.of(), ds -> ds.transform(GpuSort.<Row>withinPartitions(KEY))));
  }

  private static double measure(SparkSession spark, Case c, Dataset<Row> input) {
    c.conf().forEach((key, value) -> spark.conf().set(key, value));
    // GpuSort reads its configuration when the transform is applied, so build it after setting.
    Dataset<Row> sorted = c.sort().apply(input);
    System.gc();
    return ExampleRuntime.seconds(ExampleRuntime.timeNoopWriteNanos(sorted));
  }

  private void printTable(List<Case> cases, double[][] seconds, PrintStream out) {
    double[] medians = new double[cases.size()];
    for (int i = 0; i < cases.size(); i++) {
      medians[i] = ExampleRuntime.median(seconds[i]);
    }
    out.printf(Locale.ROOT, "%-36s %-7s %9s %9s %9s %9s %7s %8s%n",
        "case", "engine", "median s", "min s", "max s", "Mrows/s", "ratio", "x floor");
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      String ratio = c.baseline() == null ? ""
          : String.format(Locale.ROOT, "%.2f", medians[i] / medians[indexOf(cases, c.baseline())]);
      String floor = c.floor() == null ? ""
          : String.format(Locale.ROOT, "%.2f", medians[i] / medians[indexOf(cases, c.floor())]);
      double[] s = seconds[i];
      out.printf(Locale.ROOT, "%-36s %-7s %9.3f %9.3f %9.3f %9.2f %7s %8s%n", c.name(),
          c.engine(), medians[i], Arrays.stream(s).min().orElse(0),
          Arrays.stream(s).max().orElse(0), numRows / medians[i] / 1e6, ratio, floor);
    }
    out.println("ratio: median of the case / median of Spark's own sort of the same kind; "
        + "x floor: / median of the same rows hash-shuffled (global sorts) or scanned "
        + "(within partitions), with no sort, in the same run");
  }

  private static int indexOf(List<Case> cases, String name) {
    List<String> names = new ArrayList<>();
    cases.forEach(c -> names.add(c.name()));
    return names.indexOf(name);
  }
}
