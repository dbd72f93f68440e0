package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;

import io.gpusort.config.GpuSortConf;
import io.gpusort.memory.HostMemory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;

/**
 * TeraSort on local files, FileSort against Spark in the same run: generates the records once
 * ({@link TeraGen}), then sorts them, in turns, with {@code FileSort --format terasort} (GpuSort,
 * the CPU engine unless {@code --engine} says) and with Spark's own {@code Dataset.orderBy}
 * between the same reader and writer ({@link TeraFiles}), into the same number of output
 * partitions; the floor, in the same turns, reads and writes the records without sorting. Every
 * output is validated ({@link TeraValidate}: order, count and checksum against the generator's;
 * the floor's checksum only; untimed) and deleted. Prints one line per case: median, fastest and
 * slowest time, records per second, the ratio to Spark's median and to the floor's, and the
 * bytes the case's tasks spilled to disk and wrote to the shuffle (medians over the timed runs).
 * The header gives the heap and the records' size against it: run with a small {@code -Xmx} (or
 * {@code --driver-memory}) to sort files many times the memory.
 *
 * <pre>{@code
 * spark-submit --driver-memory 8g --class io.gpusort.examples.TeraBenchmark \
 *     spark-gpusort-examples_spark<line>_<scala>-<version>.jar \
 *     [--rows 10000000] [--reps 3] [--warmups 1] \
 *     [--files N] [--partitions N] [--engine cpu] [--seed S] [--dir DIR] [--master URL] \
 *     [--cases floor,spark,filesort]
 * }</pre>
 *
 * <p>Options: {@code --rows} records (default 10,000,000, a gigabyte); {@code --reps} timed runs of
 * each case (default 3) after {@code --warmups} untimed runs of each (default 1); {@code --files}
 * the generator writes (default: {@link TeraGen}'s); {@code --partitions} of the sorted output
 * (default: as many as the input's splits); {@code --engine} of FileSort ({@code
 * spark.gpusort.engine}, default cpu); {@code --seed} of the generator (default 0); {@code --dir} a
 * Hadoop path that does not exist yet, for the input and outputs (default: a new directory under
 * {@code java.io.tmpdir}, which only a local master can use), deleted at the end; {@code --master}
 * (default: spark-submit's, else local[2]); {@code --cases} a comma-separated subset of {@code
 * floor}, {@code spark} and {@code filesort} to run (default all three; without {@code spark} or
 * {@code floor} the ratios against it are left out), for example to profile one case alone.
 */
public final class TeraBenchmark {
  private static final String FLOOR = "read, write (no sort)";
  private static final String SPARK = "read, Dataset.orderBy, write";
  private static final String FILE_SORT = "FileSort --format terasort";

  private final long rows;
  private final int reps;
  private final int warmups;
  private final int files;
  private final int partitions;
  private final String engine;
  private final long seed;
  private final String dir;
  private final String master;
  private final List<String> cases;

  private TeraBenchmark(long rows, int reps, int warmups, int files, int partitions,
      String engine, long seed, String dir, String master, List<String> cases) {
    this.master = master;
    this.cases = cases;
    this.rows = rows;
    this.reps = reps;
    this.warmups = warmups;
    this.files = files;
    this.partitions = partitions;
    this.engine = engine;
    this.seed = seed;
    this.dir = dir;
  }

  public static void main(String[] argv) {
    TeraBenchmark benchmark;
    try {
      benchmark = parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println("TeraBenchmark: error: " + e.getMessage());
      System.exit(FileSort.EXIT_USAGE);
      return;
    }
    ExampleRuntime.quietLoggingUnlessConfigured();
    SparkSession spark = ExampleRuntime.createSession("spark-gpusort TeraBenchmark",
        benchmark.master, "local[2]");
    try {
      benchmark.run(spark, System.out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      spark.stop();
    }
  }

  /**
   * The benchmark {@code argv} asks for.
   *
   * @throws IllegalArgumentException naming the option, for an unknown one or a bad value
   */
  static TeraBenchmark parse(String[] argv) {
    long rows = 10_000_000L;
    long reps = 3;
    long warmups = 1;
    long files = 0;
    long partitions = 0;
    String engine = "cpu";
    long seed = 0;
    String dir = null;
    String master = null;
    List<String> cases = List.of(FLOOR, SPARK, FILE_SORT);
    for (int i = 0; i < argv.length; i += 2) {
      String option = argv[i];
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("option " + option + " needs a value");
      }
      String value = argv[i + 1];
      switch (option) {
        case "--rows" -> rows = ExampleRuntime.wholeNumber(option, value, 1);
        case "--reps" -> reps = ExampleRuntime.wholeNumber(option, value, 1);
        case "--warmups" -> warmups = ExampleRuntime.wholeNumber(option, value, 0);
        case "--files" -> files = ExampleRuntime.wholeNumber(option, value, 1);
        case "--partitions" -> partitions = ExampleRuntime.wholeNumber(option, value, 1);
        case "--engine" -> engine = GpuSortConf.ENGINE.parse(value).name().toLowerCase(Locale.ROOT);
        case "--seed" -> seed = seed(value);
        case "--dir" -> dir = value;
        case "--master" -> master = value;
        case "--cases" -> cases = cases(value);
        default -> throw new IllegalArgumentException("unknown option '" + option
            + "'; options are --rows, --reps, --warmups, --files, --partitions, --engine, --seed, "
            + "--dir, --master, --cases");
      }
    }
    if (files > TeraOutputFormat.MAX_FILES || partitions > TeraOutputFormat.MAX_FILES) {
      throw new IllegalArgumentException("--files and --partitions are at most "
          + TeraOutputFormat.MAX_FILES);
    }
    return new TeraBenchmark(rows, (int) Math.min(reps, 1000), (int) Math.min(warmups, 1000),
        (int) files, (int) partitions, engine, seed, dir, master, cases);
  }

  /** The cases {@code --cases} names, in the benchmark's own order. */
  private static List<String> cases(String value) {
    List<String> names = Arrays.stream(value.split(",")).map(String::strip).toList();
    for (String name : names) {
      if (!List.of("floor", "spark", "filesort").contains(name)) {
        throw new IllegalArgumentException("--cases takes floor, spark and filesort, not '"
            + name + "'");
      }
    }
    List<String> cases = new java.util.ArrayList<>();
    if (names.contains("floor")) {
      cases.add(FLOOR);
    }
    if (names.contains("spark")) {
      cases.add(SPARK);
    }
    if (names.contains("filesort")) {
      cases.add(FILE_SORT);
    }
    return List.copyOf(cases);
  }

  private static long seed(String value) {
    try {
      return Long.parseLong(value.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--seed needs a whole number, not '" + value + "'");
    }
  }

  private void run(SparkSession spark, PrintStream out) throws IOException {
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    Path base = baseDir(conf);
    FileSystem fs = base.getFileSystem(conf);
    try {
      spark.conf().set(GpuSortConf.ENGINE.key(), engine);
      Path input = new Path(base, "input");
      int numFiles = files > 0 ? files
          : TeraGen.defaultPartitions(rows, spark.sparkContext().defaultParallelism());
      long start = System.nanoTime();
      TeraChecksum generated = TeraGen.generate(spark, rows, numFiles, seed, input);
      double generateSeconds = ExampleRuntime.seconds(System.nanoTime() - start);
      int splits = TeraFiles.read(spark, input).rdd().getNumPartitions();
      int outputs = partitions > 0 ? partitions : splits;
      // Spark's sort into as many partitions as FileSort's --partitions gives GpuSort.
      spark.conf().set("spark.sql.shuffle.partitions", Integer.toString(outputs));
      spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "false");

      out.printf(Locale.ROOT, "TeraBenchmark: %,d records (%,d MB) in %d files, %d input splits,"
          + " %d output partitions; engine %s; master %s; %d timed runs after %d warm-up%n",
          rows, rows * TeraRecords.RECORD_BYTES / 1_000_000, numFiles, splits, outputs, engine,
          spark.sparkContext().master(), reps, warmups);
      long heapBytes = Runtime.getRuntime().maxMemory();
      out.printf(Locale.ROOT, "heap %,d MB: the records are %.1fx the heap%n", heapBytes >> 20,
          (double) rows * TeraRecords.RECORD_BYTES / heapBytes);
      out.printf(Locale.ROOT, "generated in %.2f s (%,.0f records/s), checksum %s%n",
          generateSeconds, rows / generateSeconds, generated.sumHex());

      double[][] seconds = new double[cases.size()][reps];
      double[][] spilledMb = new double[cases.size()][reps];
      double[][] shuffleMb = new double[cases.size()][reps];
      double[] validateSeconds = new double[cases.size() * (reps + warmups)];
      SpillCapture capture = new SpillCapture();
      spark.sparkContext().addSparkListener(capture);
      try {
        for (int rep = -warmups; rep < reps; rep++) {
          for (int turn = 0; turn < cases.size(); turn++) {
            // Rotate which case goes first, so that drift in the machine's speed spreads.
            int c = (turn + Math.max(rep, 0)) % cases.size();
            Path output = new Path(base, "sorted-" + c + "-" + (rep + warmups));
            capture.clear();
            // The input's generation, an earlier case's output: on disk before the clock starts.
            DiskSettle.beforeRun(cases.get(c) + " | " + (rep < 0 ? "warm-up" : "run " + (rep + 1)));
            RunCounters before = RunCounters.now();
            double time = runCase(spark, cases.get(c), input, output, outputs);
            awaitListeners(spark);
            printRun(rep, cases.get(c), time, capture, before, out);
            long validateStart = System.nanoTime();
            validate(spark, output, generated, cases.get(c));
            validateSeconds[(rep + warmups) * cases.size() + turn] =
                ExampleRuntime.seconds(System.nanoTime() - validateStart);
            fs.delete(output, true);
            if (rep >= 0) {
              seconds[c][rep] = time;
              spilledMb[c][rep] = capture.diskBytesSpilled.sum() / 1e6;
              shuffleMb[c][rep] = capture.shuffleBytesWritten.sum() / 1e6;
            }
          }
        }
      } finally {
        spark.sparkContext().removeSparkListener(capture);
      }
      printTable(cases, seconds, spilledMb, shuffleMb, ExampleRuntime.median(validateSeconds),
          out);
    } finally {
      fs.delete(base, true);
    }
  }

  /**
   * One line a run, so that a slow first run shows: its time, spill, and the native blocks the
   * sort's pools had to allocate (page-locking a block is slow; a warm pool allocates none).
   */
  private static void printRun(int rep, String name, double seconds, SpillCapture capture,
      RunCounters before, PrintStream out) {
    RunCounters after = RunCounters.now();
    HostMemory.Allocations pinned = after.pinned.since(before.pinned);
    HostMemory.Allocations plain = after.plain.since(before.plain);
    out.printf(Locale.ROOT, "run %s %s: %.2f s, spill %.1f MB; new page-locked blocks %d "
        + "(%,d MB, %.2f s allocating, %.2f s freeing), new plain blocks %d (%,d MB); "
        + "GC %.2f s, JIT %.2f s (threads' sums); from %s to %s%n",
        rep < 0 ? "warm-up" : Integer.toString(rep + 1), name, seconds,
        capture.diskBytesSpilled.sum() / 1e6, pinned.blocks(), pinned.bytes() >> 20,
        pinned.allocateNanos() / 1e9, pinned.freeNanos() / 1e9, plain.blocks(),
        plain.bytes() >> 20, (after.gcMillis - before.gcMillis) / 1e3,
        (after.jitMillis - before.jitMillis) / 1e3, CLOCK.format(before.clock),
        CLOCK.format(before.clock.plusNanos((long) (seconds * 1e9))));
  }

  private static final DateTimeFormatter CLOCK =
      DateTimeFormatter.ofPattern("HH:mm:ss.SSS", Locale.ROOT);

  /**
   * The process's counters at one moment: the pools' native allocations, the JVM's collection and
   * JIT compilation time so far (milliseconds), and the clock.
   */
  private record RunCounters(HostMemory.Allocations pinned, HostMemory.Allocations plain,
      long gcMillis, long jitMillis, LocalTime clock) {
    static RunCounters now() {
      long gc = 0;
      for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
        gc += Math.max(0, bean.getCollectionTime());
      }
      CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      long compiled = jit != null && jit.isCompilationTimeMonitoringSupported()
          ? jit.getTotalCompilationTime() : 0;
      return new RunCounters(HostMemory.allocations(true), HostMemory.allocations(false), gc,
          compiled, LocalTime.now());
    }
  }

  /** Waits for the task-end events, which reach listeners after the job has returned. */
  private static void awaitListeners(SparkSession spark) {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("Spark's listeners did not catch up", e);
    }
  }

  /** Bytes the tasks that ended since {@link #clear} spilled to disk and wrote to the shuffle. */
  private static final class SpillCapture extends org.apache.spark.scheduler.SparkListener {
    final java.util.concurrent.atomic.LongAdder diskBytesSpilled =
        new java.util.concurrent.atomic.LongAdder();
    final java.util.concurrent.atomic.LongAdder shuffleBytesWritten =
        new java.util.concurrent.atomic.LongAdder();

    @Override
    public void onTaskEnd(org.apache.spark.scheduler.SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        diskBytesSpilled.add(end.taskMetrics().diskBytesSpilled());
        shuffleBytesWritten.add(end.taskMetrics().shuffleWriteMetrics().bytesWritten());
      }
    }

    void clear() {
      diskBytesSpilled.reset();
      shuffleBytesWritten.reset();
    }
  }

  /** Runs one case into {@code output}, which does not exist yet; returns its seconds. */
  private double runCase(SparkSession spark, String name, Path input, Path output,
      int outputs) throws IOException {
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    long start = System.nanoTime();
    if (name.equals(FLOOR)) {
      TeraFiles.write(TeraFiles.read(spark, input), output, conf);
    } else if (name.equals(SPARK)) {
      TeraFiles.write(TeraFiles.read(spark, input).orderBy(col(TeraRecords.KEY_COLUMN)),
          output, conf);
    } else {
      runFileSort(spark, "--input", input.toString(), "--format", "terasort", "--output",
          output.toString(), "--partitions", Integer.toString(outputs), "--quiet");
    }
    return ExampleRuntime.seconds(System.nanoTime() - start);
  }

  private static void runFileSort(SparkSession spark, String... argv) {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (PrintStream sink = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
      int exit = FileSort.execute(spark, FileSortArgs.parse(argv), sink, sink);
      if (exit != FileSort.EXIT_OK) {
        throw new IllegalStateException("FileSort " + String.join(" ", argv) + " exited with "
            + exit + ": " + printed.toString(StandardCharsets.UTF_8).strip());
      }
    }
  }

  /**
   * Fails unless {@code output} holds the generated records, in order (the floor's in any
   * order).
   */
  private static void validate(SparkSession spark, Path output, TeraChecksum generated,
      String name) throws IOException {
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    List<TeraValidate.FileSummary> files = TeraValidate.summarize(spark, output, conf);
    TeraChecksum found = name.equals(FLOOR) ? TeraValidate.total(files)
        : TeraValidate.check(files).checksum();
    if (!found.equals(generated)) {
      throw new IllegalStateException(name + " wrote " + found + "; generated " + generated);
    }
  }

  private Path baseDir(Configuration conf) throws IOException {
    if (dir == null) {
      java.nio.file.Path local = Files.createTempDirectory("tera-benchmark-").toAbsolutePath();
      // The generator's staging needs a directory that does not exist yet.
      Files.delete(local);
      return new Path("file", null, local.toString());
    }
    Path base = FileSort.qualify(dir, conf);
    if (base.getFileSystem(conf).exists(base)) {
      throw new IllegalArgumentException("--dir " + base + " exists; give a new path");
    }
    return base;
  }

  private void printTable(List<String> cases, double[][] seconds, double[][] spilledMb,
      double[][] shuffleMb, double validateSeconds, PrintStream out) {
    double baseline = cases.contains(SPARK)
        ? ExampleRuntime.median(seconds[cases.indexOf(SPARK)]) : Double.NaN;
    double floor = cases.contains(FLOOR)
        ? ExampleRuntime.median(seconds[cases.indexOf(FLOOR)]) : Double.NaN;
    out.printf(Locale.ROOT, "%-30s %9s %9s %9s %11s %7s %8s %10s %10s%n", "case", "median s",
        "min s", "max s", "Mrecords/s", "ratio", "x floor", "spill MB", "shuffle MB");
    for (int c = 0; c < cases.size(); c++) {
      double median = ExampleRuntime.median(seconds[c]);
      out.printf(Locale.ROOT, "%-30s %9.2f %9.2f %9.2f %11.2f %7s %8s %10.1f %10.1f%n",
          cases.get(c), median, Arrays.stream(seconds[c]).min().orElse(0),
          Arrays.stream(seconds[c]).max().orElse(0), rows / median / 1e6,
          cases.get(c).equals(FLOOR) || Double.isNaN(baseline) ? ""
              : String.format(Locale.ROOT, "%.2f", median / baseline),
          Double.isNaN(floor) ? "" : String.format(Locale.ROOT, "%.2f", median / floor),
          ExampleRuntime.median(spilledMb[c]),
          ExampleRuntime.median(shuffleMb[c]));
    }
    out.printf(Locale.ROOT, "ratio: median / the median of Spark's %s of the same records; "
        + "x floor: median / the median of %s; spill MB: bytes the tasks spilled to disk; every "
        + "output validated (order, count, checksum; the floor's checksum only) in %.2f s "
        + "median (%,.0f records/s)%n", SPARK, FLOOR, validateSeconds, rows / validateSeconds);
  }
}
