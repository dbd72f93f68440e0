package io.gpusort.examples;

import org.apache.spark.sql.SparkSession;

/** One local[2] session for all tests of this module, started on first use. */
final class SharedSpark {
  private static SparkSession session;

  private SharedSpark() {}

  static synchronized SparkSession get() {
    if (session == null) {
      ExampleRuntime.quietLoggingUnlessConfigured();
      session = SparkSession.builder()
          .master("local[2]")
          .appName("spark-gpusort examples tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "4")
          .getOrCreate();
      // Spark's own shutdown hook stops the context when the test JVM exits.
    }
    return session;
  }
}
