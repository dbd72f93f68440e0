package io.gpusort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.config.GpuSortConf;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The session settings FileSort applies for an input format, and only where the user set none. */
class FileSortSettingsTest {
  private static final String PACK_ROWS = GpuSortConf.PACK_ROWS.key();

  @Test
  void terasortBlocksGoUnpackedUnlessTheSessionSaysOtherwise() {
    SparkSession spark = SharedSpark.get();
    spark.conf().unset(PACK_ROWS);
    assertEquals(Map.of(PACK_ROWS, "false"), FileSort.formatSettings(spark, "terasort"));
    assertEquals(Map.of(), FileSort.formatSettings(spark, "parquet"));
    spark.conf().set(PACK_ROWS, "true");
    try {
      assertEquals(Map.of(), FileSort.formatSettings(spark, "terasort"));
    } finally {
      spark.conf().unset(PACK_ROWS);
    }
  }
}
