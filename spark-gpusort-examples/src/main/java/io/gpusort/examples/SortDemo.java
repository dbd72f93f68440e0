package io.gpusort.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.hex;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.lpad;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.when;
import static org.apache.spark.sql.functions.xxhash64;

import io.gpusort.GpuSort;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * {@code FileSort --demo}: sorts generated rows with {@link GpuSort#byKey} and with Spark's
 * {@code orderBy} by the same keys, prints both times, and checks that the two outputs agree
 * (same key at every position, same rows within equal keys; see {@link OrderChecksum}).
 *
 * <p>The keys are a long (descending), a double and a string, with the values sorts get wrong:
 * nulls, NaN, -0.0 next to 0.0, +-Infinity, Long.MIN_VALUE/MAX_VALUE, many duplicates, strings
 * longer than an engine's 16-byte prefix that share that prefix, and non-ASCII strings.
 */
final class SortDemo {
  private static final List<String> KEY_COLUMNS = List.of("k_long", "k_double", "k_string");
  private static final long WARM_UP_ROWS = 200_000;

  private SortDemo() {}

  /** Runs the demo; returns the process exit code: 0 if the sorts agree, 1 if not. */
  static int run(SparkSession spark, long numRows, int partitions, PrintStream out) {
    int numPartitions = partitions > 0 ? partitions : spark.sparkContext().defaultParallelism();
    out.printf(Locale.ROOT, "spark-gpusort demo: %,d rows in %d partitions, master %s, engine %s%n",
        numRows, numPartitions, spark.sparkContext().master(), FileSort.engineUsed(spark));

    long start = System.nanoTime();
    Dataset<Row> input = ExampleRuntime.cacheUncompressed(spark,
        generate(spark, numRows, numPartitions));
    try {
      out.printf(Locale.ROOT, "input generated and cached in %.1f s%n",
          ExampleRuntime.seconds(System.nanoTime() - start));

      if (numRows > WARM_UP_ROWS) {
        // Compiles and loads both sort paths so that neither timed run pays for it alone.
        Dataset<Row> warmUp = generate(spark, WARM_UP_ROWS, numPartitions);
        ExampleRuntime.timeNoopWriteNanos(warmUp.transform(GpuSort.byKey(sortOrders())));
        ExampleRuntime.timeNoopWriteNanos(warmUp.orderBy(sortOrders()));
      }

      Dataset<Row> ours = input.transform(GpuSort.byKey(sortOrders()));
      Dataset<Row> reference = input.orderBy(sortOrders());
      System.gc();
      long oursNanos = ExampleRuntime.timeNoopWriteNanos(ours);
      System.gc();
      long sparkNanos = ExampleRuntime.timeNoopWriteNanos(reference);
      out.printf(Locale.ROOT, "%-48s %7.2f s  (engine %s)%n", "GpuSort.byKey(" + describe() + ")",
          ExampleRuntime.seconds(oursNanos), FileSort.engineUsed(spark));
      out.printf(Locale.ROOT, "%-48s %7.2f s%n", "Dataset.orderBy(same keys)",
          ExampleRuntime.seconds(sparkNanos));
      out.printf(Locale.ROOT, "%-48s %7.2f%n", "ratio GpuSort / orderBy",
          (double) oursNanos / sparkNanos);

      String difference = OrderChecksum.of(ours, KEY_COLUMNS)
          .differenceFrom(OrderChecksum.of(reference, KEY_COLUMNS));
      if (difference != null) {
        out.println("CHECK FAILED: GpuSort.byKey and orderBy disagree: " + difference);
        return 1;
      }
      out.printf(Locale.ROOT, "check passed: same key at all %,d positions, same rows within equal "
          + "keys (total %.1f s)%n", numRows, ExampleRuntime.seconds(System.nanoTime() - start));
      return 0;
    } finally {
      input.unpersist();
    }
  }

  static Column[] sortOrders() {
    return new Column[] {col("k_long").desc(), col("k_double"), col("k_string")};
  }

  private static String describe() {
    return "k_long desc, k_double, k_string";
  }

  /** {@code numRows} rows, the same for the same arguments: every value derives from the id. */
  static Dataset<Row> generate(SparkSession spark, long numRows, int numPartitions) {
    Column id = col("id");
    return spark.range(0, numRows, 1, numPartitions).select(
        id,
        longKey(xxhash64(id, lit(1)), numRows).as("k_long"),
        doubleKey(xxhash64(id, lit(2))).as("k_double"),
        stringKey(xxhash64(id, lit(3))).as("k_string"),
        hex(xxhash64(id, lit(4))).as("payload"),
        pmod(id, lit(1000)).cast("int").as("payload_int"));
  }

  /** About 8 rows per value, so ties are broken by the next key; a few nulls and extremes. */
  private static Column longKey(Column h, long numRows) {
    long distinct = Math.max(1, numRows / 8);
    Column r = pmod(h, lit(1000));
    return when(r.equalTo(0), lit(null).cast("long"))
        .when(r.equalTo(1), lit(Long.MIN_VALUE))
        .when(r.equalTo(2), lit(Long.MAX_VALUE))
        .otherwise(pmod(h, lit(distinct)).minus(lit(distinct / 2)));
  }

  private static Column doubleKey(Column h) {
    Column r = pmod(h, lit(1000));
    return when(r.equalTo(0), lit(Double.NaN))
        .when(r.equalTo(1), lit(-0.0))
        .when(r.equalTo(2), lit(0.0))
        .when(r.equalTo(3), lit(null).cast("double"))
        .when(r.equalTo(4), lit(Double.POSITIVE_INFINITY))
        .when(r.equalTo(5), lit(Double.NEGATIVE_INFINITY))
        .otherwise(pmod(h, lit(2_000_001L)).minus(lit(1_000_000L)).divide(lit(1000.0)));
  }

  private static Column stringKey(Column h) {
    Column r = pmod(h, lit(100));
    Column small = pmod(h, lit(997)).cast("string");
    return when(r.equalTo(0), lit(null).cast("string"))
        .when(r.equalTo(1), concat(lit("\u00e9t\u00e9-"), small))
        .when(r.equalTo(2), concat(lit("\uD83D\uDE00-"), small))
        .when(r.lt(50), concat(lit("a-shared-prefix-longer-than-16-bytes/"), lpad(small, 4, "0")))
        .otherwise(concat(lit("k"), pmod(h, lit(5000)).cast("string")));
  }
}
