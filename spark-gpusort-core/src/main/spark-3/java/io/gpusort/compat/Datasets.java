package io.gpusort.compat;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * Datasets on Spark 3.5: {@code Dataset} is the one in-JVM implementation (a Spark Connect
 * client's Dataset is a different class in a different jar, never on an executor's classpath).
 * The same class for Spark 4 lives in {@code src/main/spark-4}.
 */
public final class Datasets {
  private Datasets() {}

  /** Every Dataset on Spark 3.5 carries its logical plan: nothing to check. */
  public static void requireClassic(Dataset<?> ds) {
    // One implementation on this line.
  }

  /** A Dataset of {@code ds}'s session and encoder over {@code plan}, an analyzed plan. */
  public static <T> Dataset<T> withPlan(Dataset<T> ds, LogicalPlan plan) {
    return new Dataset<>(ds.sparkSession(), plan, ds.encoder());
  }
}
