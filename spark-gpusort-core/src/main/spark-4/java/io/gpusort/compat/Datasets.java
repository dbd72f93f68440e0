package io.gpusort.compat;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * Datasets on Spark 4: the API's {@code Dataset} is abstract, and only the classic (in-JVM)
 * implementation carries a logical plan the plugin can rewrite; a Spark Connect one does not.
 * The same class for Spark 3.5 lives in {@code src/main/spark-3}.
 */
public final class Datasets {
  private Datasets() {}

  /** Fails unless {@code ds} is a classic Dataset (not one of a Spark Connect session). */
  public static void requireClassic(Dataset<?> ds) {
    if (!(ds instanceof org.apache.spark.sql.classic.Dataset<?>)) {
      throw new UnsupportedOperationException(
          "GpuSort needs a classic (non-Connect) Spark session; got " + ds.getClass().getName());
    }
  }

  /** A Dataset of {@code ds}'s session and encoder over {@code plan}, an analyzed plan. */
  public static <T> Dataset<T> withPlan(Dataset<T> ds, LogicalPlan plan) {
    org.apache.spark.sql.classic.Dataset<T> classic = (org.apache.spark.sql.classic.Dataset<T>) ds;
    return new org.apache.spark.sql.classic.Dataset<>(classic.sparkSession(), plan,
        classic.encoder());
  }
}
