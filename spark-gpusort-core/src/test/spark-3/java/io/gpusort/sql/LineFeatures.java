package io.gpusort.sql;

import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.DataType;

/** Test helpers that differ by Spark line: Spark 3.5's (Spark 4's: src/test/spark-4). */
final class LineFeatures {
  private LineFeatures() {}

  /** Data types Spark 4 added: none here. */
  static List<DataType> newerTypes() {
    return List.of();
  }

  /** Spark 3.5 has no collations; no test calls this on it (they check Collations.supported()). */
  static Column collate(Column column, String collation) {
    throw new UnsupportedOperationException("Spark 3.5 has no string collations");
  }
}
