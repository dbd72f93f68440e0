package io.gpusort;

import io.gpusort.config.GpuSortConf;
import io.gpusort.engine.Engines;
import io.gpusort.sql.GpuSortTransform;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import scala.Function1;

/**
 * Sorting a Spark {@link Dataset} on the best available engine (CUDA, Vulkan, or the CPU engine).
 *
 * <pre>{@code
 * Dataset<Row> sorted = df.transform(GpuSort.byKey(col("ts").desc_nulls_last(), col("id")));
 * }</pre>
 *
 * <p>The functions returned here are for {@link Dataset#transform}: the result has the same rows,
 * schema and element type as its input, ordered exactly as {@code Dataset.orderBy} (for
 * {@link #byKey}) or {@code Dataset.sortWithinPartitions} (for {@link #withinPartitions}) with the
 * same arguments orders them. That includes Spark's ordering of special values: NaN sorts above
 * +Infinity and all NaNs are equal, -0.0 equals 0.0, nulls sort first in ascending order and last
 * in descending order unless the sort order says otherwise. Rows with equal keys come out in no
 * particular order, as with Spark's own sort. Rows are moved, never changed: a NaN's payload and
 * sign and a -0.0 come out with the bits they went in with, as from Spark's sort.
 *
 * <p>Unknown columns fail in {@code transform} with Spark's usual analysis error, before any job
 * runs. A key of a type no engine can encode (map, array, struct, variant, interval, a string with
 * a non-default collation) makes that call use Spark's own sort, with one log line naming the column
 * and type; with {@code spark.gpusort.strict=true} it is an error instead. Configuration is read
 * from the session's {@code spark.gpusort.*} keys when {@code transform} is called.
 */
public final class GpuSort {
  private GpuSort() {}

  /** Orders the whole dataset by {@code sortOrders}, as {@code Dataset.orderBy(sortOrders)}. */
  public static <T> Function1<Dataset<T>, Dataset<T>> byKey(Column... sortOrders) {
    return new GpuSortTransform<>(sortOrders, true);
  }

  /** Orders the whole dataset by the named columns ascending, as {@code Dataset.orderBy(columns)}. */
  public static <T> Function1<Dataset<T>, Dataset<T>> byKey(String... columns) {
    return byKey(toColumns(columns));
  }

  /** Orders each partition by {@code sortOrders}, as {@code Dataset.sortWithinPartitions}. */
  public static <T> Function1<Dataset<T>, Dataset<T>> withinPartitions(Column... sortOrders) {
    return new GpuSortTransform<>(sortOrders, false);
  }

  /** Orders each partition by the named columns ascending, as {@code sortWithinPartitions}. */
  public static <T> Function1<Dataset<T>, Dataset<T>> withinPartitions(String... columns) {
    return withinPartitions(toColumns(columns));
  }

  /**
   * The engine that {@code spark.gpusort.engine} as set in {@code session} selects in this JVM:
   * {@code cpu}, {@code cuda} or {@code vulkan}. On a cluster each executor resolves {@code auto}
   * for itself, so this is what a local session (or a driver with the executors' hardware) uses.
   *
   * @throws IllegalArgumentException if the configured value is invalid
   * @throws io.gpusort.engine.Engines.EngineUnavailableException if the demanded engine is missing
   */
  public static String engineName(SparkSession session) {
    String raw = session.conf().get(GpuSortConf.ENGINE.key(), GpuSortConf.ENGINE.defaultString());
    return Engines.forChoice(GpuSortConf.ENGINE.parse(raw)).name();
  }

  private static Column[] toColumns(String[] names) {
    Column[] columns = new Column[names.length];
    for (int i = 0; i < names.length; i++) {
      columns[i] = functions.col(names[i]);
    }
    return columns;
  }
}
