package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
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
    StructType schema = new StructType()
        .add("k", DataTypes.LongType, true).add("s", DataTypes.StringType, true);
    int n = 3 * WarmupParquetFile.BATCH_ROWS + 17;
    List<ColumnarBatch> batches = new ArrayList<>();
    for (int from = 0; from < n; from += 1000) {
      int rows = Math.min(1000, n - from);
      OnHeapColumnVector longs = new OnHeapColumnVector(rows, DataTypes.LongType);
      OnHeapColumnVector strings = new OnHeapColumnVector(rows, DataTypes.StringType);
      for (int r = 0; r < rows; r++) {
        long i = from + r;
        if (i % 5 == 0) {
          longs.putNull(r);
        } else {
          longs.putLong(r, i * 0x9E3779B97F4A7C15L);
        }
        if (i % 3 == 0) {
          strings.putNull(r);
        } else {
          strings.putByteArray(r, ("row " + i).getBytes(StandardCharsets.UTF_8));
        }
      }
      batches.add(new ColumnarBatch(new ColumnVector[] {longs, strings}, rows));
    }
    Path dir;
    try (WarmupParquetFile file = WarmupParquetFile.write(schema, batches)) {
      long i = 0;
      int read = 0;
      Iterator<ColumnarBatch> back = file.batches();
      while (back.hasNext()) {
        ColumnarBatch batch = back.next();
        read++;
        assertTrue(batch.numRows() <= WarmupParquetFile.BATCH_ROWS);
        for (int r = 0; r < batch.numRows(); r++, i++) {
          assertEquals(i % 5 == 0, batch.column(0).isNullAt(r), "long null at row " + i);
          if (i % 5 != 0) {
            assertEquals(i * 0x9E3779B97F4A7C15L, batch.column(0).getLong(r), "row " + i);
          }
          assertEquals(i % 3 == 0, batch.column(1).isNullAt(r), "string null at row " + i);
          if (i % 3 != 0) {
            assertEquals("row " + i, batch.column(1).getUTF8String(r).toString(), "row " + i);
          }
        }
      }
      assertEquals(n, i);
      assertEquals(4, read, "batches read");
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
