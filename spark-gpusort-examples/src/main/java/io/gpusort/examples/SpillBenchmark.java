package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * GpuSort against Spark's own sort when the data does not fit in memory, both under the same
 * executor memory (this JVM's heap, or {@code spark.memory.offHeap.*}): rows with a long key and a
 * wide padding, generated (not cached, so the input costs the same in every case), each case a
 * {@code noop} write. Beside each sort it measures, in the same run, its floor: the scan of the
 * same input (for sorts within partitions) and a hash shuffle of the same rows (for global sorts);
 * and it reports the bytes each case spilled, from the tasks' metrics.
 *
 * <pre>{@code
 * java -Xmx512m <Spark's --add-opens flags> -cp <Spark jars>:<this project's classes> \
 *     io.gpusort.examples.SpillBenchmark --rows 2500000 --pad 1000 --master local[1]
 * }</pre>
 *
 * <p>Options: {@code --rows} (default 2,500,000), {@code --pad} bytes of padding a row (default
 * 1000), {@code --partitions} of the input and of the global sorts' output (default: the master's
 * parallelism), {@code --reps} timed repetitions (default 1), {@code --warmups} (default 1),
 * {@code --engine} of GpuSort's cases (default cpu), {@code --master} (default: spark-submit's,
 * else local[2]).
 */
public final class SpillBenchmark {
  /** One measured case: what it runs, the case its ratio is taken against, its floor. */
  private record Case(String name, String engine, String baseline, String floor,
      UnaryOperator<Dataset<Row>> run) {}

  private final long numRows;
  private final int padBytes;
  private final int partitions;
  private final int reps;
  private final int warmups;
  private final String engine;
  private final String master;

  private SpillBenchmark(long numRows, int padBytes, int partitions, int reps, int warmups,
      String engine, String master) {
    this.numRows = numRows;
    this.padBytes = padBytes;
    this.partitions = partitions;
    this.reps = reps;
    this.warmups = warmups;
    this.engine = engine;
    this.master = master;
  }

  public static void main(String[] argv) throws TimeoutException {
    SpillBenchmark benchmark;
    try {
      benchmark = parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println("SpillBenchmark: error: " + e.getMessage());
      System.exit(FileSort.EXIT_USAGE);
      return;
    }
    ExampleRuntime.quietLoggingUnlessConfigured();
    SparkSession spark = ExampleRuntime.createSession("spark-gpusort SpillBenchmark",
        benchmark.master, "local[2]");
    try {
      benchmark.run(spark, System.out);
    } finally {
      spark.stop();
    }
  }

  static SpillBenchmark parse(String[] argv) {
    long rows = 2_500_000L;
    long pad = 1000;
    long partitions = 0;
    long reps = 1;
    long warmups = 1;
    String engine = "cpu";
    String master = null;
    for (int i = 0; i < argv.length; i += 2) {
      String option = argv[i];
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("option " + option + " needs a value");
      }
      String value = argv[i + 1];
      switch (option) {
        case "--rows" -> rows = ExampleRuntime.wholeNumber(option, value, 1);
        case "--pad" -> pad = ExampleRuntime.wholeNumber(option, value, 0);
        case "--partitions" -> partitions = ExampleRuntime.wholeNumber(option, value, 1);
        case "--reps" -> reps = ExampleRuntime.wholeNumber(option, value, 1);
        case "--warmups" -> warmups = ExampleRuntime.wholeNumber(option, value, 0);
        case "--engine" -> engine = GpuSortConf.ENGINE.parse(value).name().toLowerCase(Locale.ROOT);
        case "--master" -> master = value;
        default -> throw new IllegalArgumentException("unknown option '" + option + "'; options "
            + "are --rows, --pad, --partitions, --reps, --warmups, --engine, --master");
      }
    }
    return new SpillBenchmark(rows, (int) Math.min(pad, 1 << 20),
        (int) Math.min(partitions, GpuSortConf.MAX_OUTPUT_PARTITIONS), (int) Math.min(reps, 100),
        (int) Math.min(warmups, 10), engine, master);
  }

  void run(SparkSession spark, PrintStream out) throws TimeoutException {
    int numPartitions = partitions > 0 ? partitions : spark.sparkContext().defaultParallelism();
    spark.conf().set(GpuSortConf.ENGINE.key(), engine);
    spark.conf().set(GpuSortConf.OUTPUT_PARTITIONS.key(), Integer.toString(numPartitions));
    spark.conf().set("spark.sql.shuffle.partitions", Integer.toString(numPartitions));
    spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "false");
    Dataset<Row> input = spark.range(0, numRows, 1, numPartitions).selectExpr(
        "(id * 2654435761) % 1000000007 AS k",
        "repeat(CAST(id % 10 AS STRING), " + padBytes + ") AS pad");
    Runtime runtime = Runtime.getRuntime();
    out.printf(Locale.ROOT, "SpillBenchmark: %,d rows of a long key and %,d bytes of padding "
        + "(about %,d MiB) in %d partitions, master %s, max heap %,d MiB, off-heap %s, %d "
        + "repetitions after %d warm-up%n", numRows, padBytes,
        numRows * (padBytes + 24) >> 20, numPartitions, spark.sparkContext().master(),
        runtime.maxMemory() >> 20, spark.sparkContext().conf().get("spark.memory.offHeap.size",
            "off"), reps, warmups);
    out.println(ExampleRuntime.keepHeapThroughCollections());

    String used = FileSort.engineUsed(spark);
    List<Case> cases = List.of(
        new Case("scan (no sort)", "-", null, null, d -> d),
        new Case("Dataset.sortWithinPartitions", "spark", null, "scan (no sort)",
            d -> d.sortWithinPartitions("k")),
        new Case("GpuSort.withinPartitions", used, "Dataset.sortWithinPartitions",
            "scan (no sort)", d -> d.transform(GpuSort.<Row>withinPartitions("k"))),
        new Case("hash repartition (no sort)", "-", null, null,
            d -> d.repartition(numPartitions, col("k"))),
        new Case("Dataset.orderBy", "spark", null, "hash repartition (no sort)",
            d -> d.orderBy("k")),
        new Case("GpuSort.byKey", used, "Dataset.orderBy", "hash repartition (no sort)",
            d -> d.transform(GpuSort.<Row>byKey("k"))));

    SpillCounter spills = new SpillCounter();
    spark.sparkContext().addSparkListener(spills);
    double[][] seconds = new double[cases.size()][reps];
    long[][] spilled = new long[cases.size()][2];
    for (int w = 0; w < warmups; w++) {
      for (Case c : cases) {
        time(c, input);
      }
    }
    for (int rep = 0; rep < reps; rep++) {
      for (int k = 0; k < cases.size(); k++) {
        spills.reset();
        seconds[k][rep] = time(cases.get(k), input);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        spilled[k][0] = spills.memoryBytes.get();
        spilled[k][1] = spills.diskBytes.get();
      }
    }
    spark.sparkContext().removeSparkListener(spills);
    printTable(cases, seconds, spilled, out);
  }

  private static double time(Case c, Dataset<Row> input) {
    Dataset<Row> sorted = c.run().apply(input);
    System.gc();
    return ExampleRuntime.seconds(ExampleRuntime.timeNoopWriteNanos(sorted));
  }

  private void printTable(List<Case> cases, double[][] seconds, long[][] spilled,
      PrintStream out) {
    List<String> names = new ArrayList<>();
    cases.forEach(c -> names.add(c.name()));
    double[] medians = Arrays.stream(seconds).mapToDouble(ExampleRuntime::median).toArray();
    out.printf(Locale.ROOT, "%-30s %-7s %9s %9s %9s %12s %12s %7s %8s%n", "case", "engine",
        "median s", "min s", "max s", "spill mem MiB", "spill disk MiB", "ratio", "x floor");
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      String ratio = c.baseline() == null ? "" : String.format(Locale.ROOT, "%.2f",
          medians[i] / medians[names.indexOf(c.baseline())]);
      String floor = c.floor() == null ? "" : String.format(Locale.ROOT, "%.2f",
          medians[i] / medians[names.indexOf(c.floor())]);
      out.printf(Locale.ROOT, "%-30s %-7s %9.3f %9.3f %9.3f %12d %12d %7s %8s%n", c.name(),
          c.engine(), medians[i], Arrays.stream(seconds[i]).min().orElse(0),
          Arrays.stream(seconds[i]).max().orElse(0), spilled[i][0] >> 20, spilled[i][1] >> 20,
          ratio, floor);
    }
    out.println("ratio: median of the case / median of Spark's own sort of the same kind; "
        + "x floor: / median of the same rows scanned (within) or hash-shuffled (global); "
        + "spill: the last repetition's tasks' memory and disk bytes spilled");
  }

  /** Sums the spill metrics of the tasks that end. */
  private static final class SpillCounter extends SparkListener {
    final AtomicLong memoryBytes = new AtomicLong();
    final AtomicLong diskBytes = new AtomicLong();

    void reset() {
      memoryBytes.set(0);
      diskBytes.set(0);
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        memoryBytes.addAndGet(end.taskMetrics().memoryBytesSpilled());
        diskBytes.addAndGet(end.taskMetrics().diskBytesSpilled());
      }
    }
  }
}
