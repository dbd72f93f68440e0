package io.gpusort.sql;

import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/** Test helpers that differ by Spark line: Spark 4's (Spark 3.5's: src/test/spark-3). */
final class LineFeatures {
  private LineFeatures() {}

  /** Data types this line has and Spark 3.5 lacks. */
  static List<DataType> newerTypes() {
    return List.of(DataTypes.VariantType);
  }

  /** {@code column} under {@code collation}. */
  static Column collate(Column column, String collation) {
    return functions.collate(column, collation);
  }
}
