package io.gpusort.compat;

import org.apache.spark.sql.types.StringType;

/**
 * String collations on Spark 3.5: there are none. Every string orders by its UTF-8 bytes, in Spark
 * and in the key encoder alike. The class for Spark 4 lives in {@code src/main/spark-4}.
 */
public final class Collations {
  private Collations() {}

  /** Always true on Spark 3.5: every string orders by its bytes. */
  public static boolean ordersByBytes(StringType type) {
    return true;
  }

  /** Whether this Spark line has string collations: not 3.5. */
  public static boolean supported() {
    return false;
  }
}
