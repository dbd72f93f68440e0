package io.gpusort.examples;

import io.gpusort.GpuSort;
import io.gpusort.config.GpuSortConf;
import io.gpusort.examples.FileSortArgs.KeySpec;
import io.gpusort.examples.FileSortArgs.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * existing output) is reported as one line on stderr with exit code 2; a failure while sorting or
 * writing gives exit code 1. The output is written to a hidden sibling directory and renamed into
 * place only when complete (see {@link StagedOutput}), so a failed run leaves no output behind.
 * Without a master from {@code --master} or spark-submit, Spark runs locally on all cores.
 */
public final class FileSort {
  static final int EXIT_OK = 0;
  static final int EXIT_FAILED = 1;
  static final int EXIT_USAGE = 2;

  private static final String PREFIX = "FileSort: error: ";

  private FileSort() {}

  public static void main(String[] args) {
    ExampleRuntime.quietLoggingUnlessConfigured();
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command line {@code argv} in a session of its own; returns the exit code. */
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
    SparkSession spark = ExampleRuntime.createSession(
        args.demo() ? "spark-gpusort demo" : "spark-gpusort FileSort", args.master(), "local[*]");
    try {
      return execute(spark, args, out, err);
    } finally {
      spark.stop();
    }
  }

  /** Runs parsed arguments in {@code spark}; returns the exit code instead of exiting. */
  static int execute(SparkSession spark, FileSortArgs args, PrintStream out, PrintStream err) {
    Map<String, String> previous = setSessionConf(spark, partitionSettings(args.partitions()));
    try {
      return args.demo()
          ? SortDemo.run(spark, args.demoRows(), args.partitions(), out)
          : sortFile(spark, args, out);
    } catch (UsageException e) {
      err.println(PREFIX + e.getMessage());
      return EXIT_USAGE;
    } catch (Exception e) {
      err.println(PREFIX + firstLine(e));
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

    Dataset<Row> data = read(spark, args.format(), input);
    Column[] sortOrders = checkedSortOrders(spark, data, args.keys());
    Observation observation = new Observation("FileSort");
    // Counted after the sort, in the job that writes, so the input is not read once more.
    Dataset<Row> sorted = data.transform(GpuSort.<Row>byKey(sortOrders))
        .observe(observation, functions.count(functions.lit(1)).as("rows"));

    long start = System.nanoTime();
    try (StagedOutput staged = StagedOutput.create(outputFs, output)) {
      write(sorted, args.outputFormat(), staged.stagingPath());
      staged.commit(args.overwrite());
    }
    long elapsedNanos = System.nanoTime() - start;
    long rows = observedRows(observation);
    out.printf(Locale.ROOT, "FileSort: sorted %,d rows by %s in %.2f s (engine %s)%n", rows,
        describe(args.keys()), ExampleRuntime.seconds(elapsedNanos), engineUsed(spark));
    out.printf(Locale.ROOT, "FileSort: wrote %s to %s%n", args.outputFormat(), output);
    return EXIT_OK;
  }

  private static Dataset<Row> read(SparkSession spark, String format, Path input) {
    DataFrameReader reader = spark.read().format(format);
    if (format.equals("csv")) {
      reader.option("header", "true").option("inferSchema", "true");
    }
    return reader.load(input.toString());
  }

  private static void write(Dataset<Row> sorted, String format, Path path) {
    DataFrameWriter<Row> writer = sorted.write().format(format);
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

  /** The first line of the first message in {@code e}'s chain of causes. */
  static String firstLine(Throwable e) {
    Throwable t = e;
    while (t.getMessage() == null && t.getCause() != null) {
      t = t.getCause();
    }
    String message = t.getMessage() != null ? t.getMessage() : t.getClass().getName();
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
