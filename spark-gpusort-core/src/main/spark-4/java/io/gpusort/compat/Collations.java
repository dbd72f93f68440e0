package io.gpusort.compat;

import org.apache.spark.sql.types.StringType;

/**
 * String collations, which Spark 4 added: a string column orders by its collation, and only the
 * default UTF8_BINARY one (and other binary ones without trimming) orders by the string's bytes,
 * which is all the key encoder does. The class for Spark 3.5, which has no collations, lives in
 * {@code src/main/spark-3}.
 */
public final class Collations {
  private Collations() {}

  /** Whether strings of {@code type} order by their UTF-8 bytes, as the key encoder orders them. */
  public static boolean ordersByBytes(StringType type) {
    return type.supportsBinaryOrdering() && !type.usesTrimCollation();
  }

  /** Whether this Spark line has string collations. */
  public static boolean supported() {
    return true;
  }
}
