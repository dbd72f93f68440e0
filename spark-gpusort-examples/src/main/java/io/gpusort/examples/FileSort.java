package io.gpusort.examples;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import io.gpusort.examples.FileSortArgs.KeySpec;
import io.gpusort.examples.FileSortArgs.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileSystemException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Observation;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * Sorts a csv, parquet, json or TeraSort file (or directory of them) globally with
 * {@link GpuSort#byKey} and writes the result; with {@code --generate} or {@code --validate},
 * writes or checks TeraSort records ({@link TeraGen}, {@link TeraValidate}); with
 * {@code --demo}, runs {@link SortDemo}. Usage: see {@link FileSortArgs#USAGE}, or run with
 * {@code --help}. A sort or generation prints a progress line every 10 s unless {@code --quiet}
 * ({@link SortProgress}).
 *
 * <pre>{@code
 * spark-submit spark-gpusort-examples_spark<line>_<scala>-<version>.jar \
 *     --input events.parquet --format parquet --key ts:desc,user --output events-sorted
 * }</pre>
 *
 * <p>Every mistake that can be found before sorting (bad arguments, missing input, unknown column,
 * existing or unwritable output) is reported as one line on stderr with exit code 2; a failure
 * while reading, sorting or writing gives exit code 1. Either way the last line on stderr is
 * {@code FileSort: error: } and the message of the error's root cause; {@code --verbose} prints the
 * stack trace before it. The output location is proven writable before the input is read; the
 * output is written to a hidden sibling directory and renamed into place only when complete (see
 * {@link StagedOutput}), so a failed run leaves no output behind. Without a master from
 * {@code --master} or spark-submit, Spark runs locally on all cores.
 */
public final class FileSort {
  static final int EXIT_OK = 0;
  static final int EXIT_FAILED = 1;
  static final int EXIT_USAGE = 2;

  private static final String PREFIX = "FileSort: error: ";

  private FileSort() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs the command line {@code argv} in a session of its own; returns the exit code. Logging is
   * made quiet first unless it was configured (see
   * {@link ExampleRuntime#quietLoggingUnlessConfigured(boolean)}), Spark's reports of failed tasks
   * included unless {@code --verbose}.
   */
  static int run(String[] argv, PrintStream out, PrintStream err) {
    FileSortArgs args;
    try {
      args = FileSortArgs.parse(argv);
    } catch (UsageException e) {
      err.println(PREFIX + e.getMessage() + " (--help shows the usage)");
      return EXIT_USAGE;
    }
    if (args.help()) {
      out.println(FileSortArgs.USAGE);
      return EXIT_OK;
    }
    ExampleRuntime.quietLoggingUnlessConfigured(args.verbose());
    SparkSession spark = ExampleRuntime.createSession(
        args.demo() ? "spark-gpusort demo" : "spark-gpusort FileSort", args.master(), "local[*]");
    try {
      return execute(spark, args, out, err);
    } finally {
      spark.stop();
    }
  }

  /**
   * Runs parsed arguments in {@code spark}; returns the exit code instead of exiting. An error
   * ends with one line on {@code err} naming its root cause, preceded by its stack trace when
   * {@code args.verbose()}.
   */
  static int execute(SparkSession spark, FileSortArgs args, PrintStream out, PrintStream err) {
    Map<String, String> settings = partitionSettings(args.partitions());
    settings.putAll(formatSettings(spark, args.format()));
    Map<String, String> previous = setSessionConf(spark, settings);
    try {
      return switch (args.mode()) {
        case SORT -> sortFile(spark, args, out);
        case GENERATE -> TeraGen.run(spark, args, out);
        case VALIDATE -> TeraValidate.run(spark, args, out);
        case DEMO -> SortDemo.run(spark, args.demoRows(), args.partitions(), out);
      };
    } catch (UsageException e) {
      report(e, e.getMessage(), args.verbose(), err);
      return EXIT_USAGE;
    } catch (Exception e) {
      report(e, rootCauseLine(e), args.verbose(), err);
      return EXIT_FAILED;
    } finally {
      setSessionConf(spark, previous);
    }
  }

  /**
   * The engine that sorts in this (local) session: {@code spark.gpusort.engine} resolved in this
   * JVM, so {@code auto} names the engine it picks. Every example prints the engine through this
   * one method.
   */
  public static String engineUsed(SparkSession spark) {
    return GpuSort.engineName(spark);
  }

  private static int sortFile(SparkSession spark, FileSortArgs args, PrintStream out)
      throws IOException {
    Configuration hadoopConf = spark.sparkContext().hadoopConfiguration();
    Path input = qualify(args.input(), hadoopConf);
    if (!exists(input, hadoopConf)) {
      throw new UsageException("input not found: " + input);
    }
    OutputTarget target = OutputTarget.of(hadoopConf, args.output(), args.overwrite(), input);
    SortProgress.Work work = checkedInput(args.format(), input, hadoopConf);

    long rows;
    long elapsedNanos;
    try (StagedOutput staged = target.stage()) {
      Dataset<Row> data = read(spark, args.format(), input);
      Column[] sortOrders = checkedSortOrders(spark, data, args.keys());
      Dataset<Row> sorted = data.transform(GpuSort.<Row>byKey(sortOrders));
      try (SortProgress progress = SortProgress.start(spark.sparkContext(), out, work,
          args.progressIntervalMillis())) {
        long start = System.nanoTime();
        rows = write(sorted, args.outputFormat(), staged.stagingPath(), hadoopConf);
        staged.commit(args.overwrite());
        elapsedNanos = System.nanoTime() - start;
      }
    }
    out.printf(Locale.ROOT, "FileSort: sorted %,d rows by %s in %.2f s (engine %s)%n", rows,
        describe(args.keys()), ExampleRuntime.seconds(elapsedNanos), engineUsed(spark));
    out.printf(Locale.ROOT, "FileSort: wrote %s to %s%n", args.outputFormat(), target.path());
    return EXIT_OK;
  }

  /**
   * What progress lines need to know of the input: for terasort the exact row count, after
   * checking that every file holds whole records ({@link UsageException} naming the first that
   * does not); for other formats only the input's size in bytes.
   */
  private static SortProgress.Work checkedInput(String format, Path input, Configuration conf)
      throws IOException {
    if (!format.equals(FileSortArgs.TERASORT)) {
      long bytes = 0;
      for (FileStatus match : input.getFileSystem(conf).globStatus(input)) {
        bytes += match.getPath().getFileSystem(conf).getContentSummary(match.getPath())
            .getLength();
      }
      return SortProgress.Work.sort(0, bytes);
    }
    List<FileStatus> files = TeraInputFormat.inputFiles(conf, input);
    String partial = TeraInputFormat.partialRecordError(files);
    if (partial != null) {
      throw new UsageException(partial);
    }
    long bytes = TeraInputFormat.totalBytes(files);
    return SortProgress.Work.sort(bytes / TeraRecords.RECORD_BYTES, bytes);
  }

  private static Dataset<Row> read(SparkSession spark, String format, Path input)
      throws IOException {
    if (format.equals(FileSortArgs.TERASORT)) {
      return TeraFiles.read(spark, input);
    }
    DataFrameReader reader = spark.read().format(format);
    if (format.equals("csv")) {
      reader.option("header", "true").option("inferSchema", "true");
    }
    return reader.load(input.toString());
  }

  /**
   * Writes into {@code path}, an empty directory that {@link StagedOutput#create} made; returns
   * the rows written, counted as they are written (not by reading the input again).
   */
  private static long write(Dataset<Row> sorted, String format, Path path, Configuration conf) {
    if (format.equals(FileSortArgs.TERASORT)) {
      return TeraFiles.write(sorted, path, conf);
    }
    Observation observation = new Observation("FileSort");
    // Append, because the default mode refuses a directory that exists, even an empty one.
    DataFrameWriter<Row> writer = sorted
        .observe(observation, functions.count(functions.lit(1)).as("rows"))
        .write().format(format).mode(SaveMode.Append);
    if (format.equals("csv")) {
      writer.option("header", "true");
    }
    writer.save(path.toString());
    return observedRows(observation);
  }

  /**
   * The sort orders of {@code keys}, each checked to name a top-level column of {@code data} as
   * Spark resolves names (ignoring case unless {@code spark.sql.caseSensitive}). Checked against
   * the schema rather than by analyzing a query that fails, which Spark reports to its query
   * listeners with a stack trace in the log.
   */
  private static Column[] checkedSortOrders(SparkSession spark, Dataset<Row> data,
      List<KeySpec> keys) {
    boolean caseSensitive =
        Boolean.parseBoolean(spark.conf().get("spark.sql.caseSensitive", "false"));
    List<String> columns = List.of(data.columns());
    Column[] orders = new Column[keys.size()];
    for (int i = 0; i < keys.size(); i++) {
      KeySpec key = keys.get(i);
      boolean found = columns.stream().anyMatch(c ->
          caseSensitive ? c.equals(key.column()) : c.equalsIgnoreCase(key.column()));
      if (!found) {
        throw new UsageException("unknown column '" + key.column() + "' in --key; the input has "
            + "columns: " + String.join(", ", columns));
      }
      orders[i] = key.toColumn();
    }
    return orders;
  }

  private static long observedRows(Observation observation) {
    try {
      return ((Number) observation.getAsJava().get("rows")).longValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** {@code path} made absolute on its file system (the default file system's, if no scheme). */
  static Path qualify(String path, Configuration conf) throws IOException {
    Path p = new Path(path);
    return p.getFileSystem(conf).makeQualified(p);
  }

  /** Whether {@code path} names at least one file or directory; globs are allowed. */
  static boolean exists(Path path, Configuration conf) throws IOException {
    FileStatus[] matches = path.getFileSystem(conf).globStatus(path);
    return matches != null && matches.length > 0;
  }

  /**
   * Session settings for {@code --partitions}: that many sort output partitions, by Spark's sort
   * and by GpuSort, not coalesced by adaptive execution. Empty when not given.
   */
  private static Map<String, String> partitionSettings(int partitions) {
    Map<String, String> settings = new LinkedHashMap<>();
    if (partitions > 0) {
      settings.put("spark.sql.shuffle.partitions", Integer.toString(partitions));
      settings.put(GpuSortConf.OUTPUT_PARTITIONS.key(), Integer.toString(partitions));
      settings.put("spark.sql.adaptive.coalescePartitions.enabled", "false");
    }
    return settings;
  }

  /**
   * Session settings for the input format, where the session does not set them itself: for
   * terasort, the shuffle's blocks unpacked ({@code spark.gpusort.global.packRows=false}). The
   * 90-byte values are text that Spark's codec compresses as well as they are (5843 MB of
   * shuffle for 1e8 records against 5581 MB packed), and packing costs a pass over every block
   * on each side: on the H200, the second repetitions of four alternating runs took 7.92 and
   * 8.49 s unpacked, 11.57 and 9.46 s packed.
   */
  static Map<String, String> formatSettings(SparkSession spark, String format) {
    Map<String, String> settings = new LinkedHashMap<>();
    String packRows = GpuSortConf.PACK_ROWS.key();
    if (FileSortArgs.TERASORT.equals(format) && spark.conf().get(packRows, null) == null) {
      settings.put(packRows, "false");
    }
    return settings;
  }

  /** Applies {@code settings} (a null value unsets) and returns the values they replaced. */
  private static Map<String, String> setSessionConf(SparkSession spark,
      Map<String, String> settings) {
    Map<String, String> previous = new LinkedHashMap<>();
    settings.forEach((key, value) -> {
      previous.put(key, spark.conf().get(key, null));
      if (value == null) {
        spark.conf().unset(key);
      } else {
        spark.conf().set(key, value);
      }
    });
    return previous;
  }

  private static String describe(List<KeySpec> keys) {
    List<String> parts = new ArrayList<>();
    for (KeySpec key : keys) {
      parts.add(key.describe());
    }
    return String.join(", ", parts);
  }

  /** Prints {@code line} as the error's last line, after {@code e}'s stack trace if verbose. */
  private static void report(Exception e, String line, boolean verbose, PrintStream err) {
    if (verbose) {
      e.printStackTrace(err);
    }
    err.println(PREFIX + line);
  }

  /**
   * One line naming the root cause of {@code e}: the first line of the message of the deepest
   * throwable in its chain of causes that has a message, or {@code e}'s class name if none has.
   * Spark reports a failed task as a {@code SparkException} ("Job aborted due to stage failure:
   * ...") whose message and causes repeat stack traces; the deepest message is the one that says
   * what went wrong ("... is not a Parquet file"). A {@link FileSystemException}'s message may be
   * just a path, so its class name ({@code AccessDeniedException}) is put before it.
   */
  static String rootCauseLine(Throwable e) {
    Throwable withMessage = null;
    // Identity, not equals: a cycle in the chain of causes must end the walk.
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        withMessage = t;
      }
    }
    if (withMessage == null) {
      return e.getClass().getName();
    }
    String message = withMessage.getMessage().strip();
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline).strip();
    return withMessage instanceof FileSystemException
        ? withMessage.getClass().getSimpleName() + ": " + line : line;
  }
}
