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
import org.apache.hadoop.fs.FileSystem;
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
 * Sorts a csv, parquet or json file (or directory of them) globally with {@link GpuSort#byKey}
 * and writes the result; with {@code --demo}, runs {@link SortDemo} instead. Usage: see
 * {@link FileSortArgs#USAGE}, or run with {@code --help}.
 *
 * <pre>{@code
 * spark-submit spark-gpusort-examples-<version>.jar \
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
    Map<String, String> previous = setSessionConf(spark, partitionSettings(args.partitions()));
    try {
      return args.demo()
          ? SortDemo.run(spark, args.demoRows(), args.partitions(), out)
          : sortFile(spark, args, out);
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
    Path output = qualify(args.output(), hadoopConf);
    FileSystem outputFs = output.getFileSystem(hadoopConf);
    if (!exists(input, hadoopConf)) {
      throw new UsageException("input not found: " + input);
    }
    if (output.equals(input)) {
      throw new UsageException("--output is the same path as --input: " + output);
    }
    if (!args.overwrite() && outputFs.exists(output)) {
      throw new UsageException("output already exists: " + output + " (--overwrite replaces it)");
    }

    long elapsedNanos;
    Observation observation = new Observation("FileSort");
    try (StagedOutput staged = stageWritableOutput(outputFs, output)) {
      Dataset<Row> data = read(spark, args.format(), input);
      Column[] sortOrders = checkedSortOrders(spark, data, args.keys());
      // Counted after the sort, in the job that writes, so the input is not read once more.
      Dataset<Row> sorted = data.transform(GpuSort.<Row>byKey(sortOrders))
          .observe(observation, functions.count(functions.lit(1)).as("rows"));

      long start = System.nanoTime();
      write(sorted, args.outputFormat(), staged.stagingPath());
      staged.commit(args.overwrite());
      elapsedNanos = System.nanoTime() - start;
    }
    long rows = observedRows(observation);
    out.printf(Locale.ROOT, "FileSort: sorted %,d rows by %s in %.2f s (engine %s)%n", rows,
        describe(args.keys()), ExampleRuntime.seconds(elapsedNanos), engineUsed(spark));
    out.printf(Locale.ROOT, "FileSort: wrote %s to %s%n", args.outputFormat(), output);
    return EXIT_OK;
  }

  /**
   * Stages {@code output}, which proves that it can be written (see {@link StagedOutput#create}),
   * before any input is read: an unwritable location is then a usage error found at once, not a
   * failed write after the whole read and sort.
   */
  private static StagedOutput stageWritableOutput(FileSystem fs, Path output) {
    try {
      return StagedOutput.create(fs, output);
    } catch (IOException e) {
      throw new UsageException("cannot write the output at " + output + ": " + rootCauseLine(e),
          e);
    }
  }

  private static Dataset<Row> read(SparkSession spark, String format, Path input) {
    DataFrameReader reader = spark.read().format(format);
    if (format.equals("csv")) {
      reader.option("header", "true").option("inferSchema", "true");
    }
    return reader.load(input.toString());
  }

  /** Writes into {@code path}, an empty directory that {@link StagedOutput#create} made. */
  private static void write(Dataset<Row> sorted, String format, Path path) {
    // Append, because the default mode refuses a directory that exists, even an empty one.
    DataFrameWriter<Row> writer = sorted.write().format(format).mode(SaveMode.Append);
    if (format.equals("csv")) {
      writer.option("header", "true");
    }
    writer.save(path.toString());
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

  private static Path qualify(String path, Configuration conf) throws IOException {
    Path p = new Path(path);
    return p.getFileSystem(conf).makeQualified(p);
  }

  /** Whether {@code path} names at least one file or directory; globs are allowed. */
  private static boolean exists(Path path, Configuration conf) throws IOException {
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
