package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * The warm-up's Parquet file ({@link WarmupParquetFile}): Spark's vectorized reader gives back
 * every value written, nulls in their rows, in its own batches; the file and its directory are
 * gone once closed, also with a reader left part way.
 */
class WarmupParquetFileTest {
  @Test
  void sparksReaderReadsBackEveryValueWritten() throws Exception {
    KnownBatches known = new KnownBatches(5, 3, i -> "row " + i);
    int n = 3 * WarmupParquetFile.BATCH_ROWS + 17;
    List<ColumnarBatch> batches = known.batches(n, 1000);
    Path dir;
    try (WarmupParquetFile file = WarmupParquetFile.write(KnownBatches.SCHEMA, batches)) {
      // Spark's reader's batches: 4096 rows at most, so four.
      assertEquals(4, known.assertReadBack(file.batches(), n), "batches read");
      // A second reader left after its first batch: closed with the file.
      Iterator<ColumnarBatch> partWay = file.batches();
      assertTrue(partWay.hasNext());
      partWay.next();
      dir = file.directory();
      assertTrue(Files.isDirectory(dir));
    }
    assertFalse(Files.exists(dir), "the warm-up's Parquet directory was left behind: " + dir);
  }
}
