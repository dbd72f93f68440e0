package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.LongFunction;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Batches of a nullable long column and a nullable string column whose every value follows from
 * its row number, and a check that batches read back hold them: for the warm-up's round trips
 * through a cache and a Parquet file.
 *
 * @param longNullEvery row {@code i}'s long is null where {@code i} is a multiple of this; else
 *     {@code i * 0x9E3779B97F4A7C15}
 * @param stringNullEvery the same for the string, else {@code strings.apply(i)}
 */
record KnownBatches(int longNullEvery, int stringNullEvery, LongFunction<String> strings) {
  static final StructType SCHEMA = new StructType()
      .add("k", DataTypes.LongType, true).add("s", DataTypes.StringType, true);

  /** {@code n} rows in batches of {@code batchRows}. */
  List<ColumnarBatch> batches(int n, int batchRows) {
    List<ColumnarBatch> batches = new ArrayList<>();
    for (int from = 0; from < n; from += batchRows) {
      int rows = Math.min(batchRows, n - from);
      OnHeapColumnVector longs = new OnHeapColumnVector(rows, DataTypes.LongType);
      OnHeapColumnVector strings = new OnHeapColumnVector(rows, DataTypes.StringType);
      for (int r = 0; r < rows; r++) {
        long i = from + r;
        if (i % longNullEvery == 0) {
          longs.putNull(r);
        } else {
          longs.putLong(r, longValue(i));
        }
        if (i % stringNullEvery == 0) {
          strings.putNull(r);
        } else {
          strings.putByteArray(r, this.strings.apply(i).getBytes(StandardCharsets.UTF_8));
        }
      }
      batches.add(new ColumnarBatch(new ColumnVector[] {longs, strings}, rows));
    }
    return batches;
  }

  private static long longValue(long i) {
    return i * 0x9E3779B97F4A7C15L;
  }

  /**
   * Fails unless {@code read} holds the rows {@link #batches} made, in order; returns the batches
   * read.
   */
  int assertReadBack(Iterator<ColumnarBatch> read, int n) {
    long i = 0;
    int batches = 0;
    while (read.hasNext()) {
      ColumnarBatch batch = read.next();
      batches++;
      for (int r = 0; r < batch.numRows(); r++, i++) {
        assertEquals(i % longNullEvery == 0, batch.column(0).isNullAt(r), "long null, row " + i);
        if (i % longNullEvery != 0) {
          assertEquals(longValue(i), batch.column(0).getLong(r), "long, row " + i);
        }
        assertEquals(i % stringNullEvery == 0, batch.column(1).isNullAt(r),
            "string null, row " + i);
        if (i % stringNullEvery != 0) {
          assertEquals(strings.apply(i), batch.column(1).getUTF8String(r).toString(),
              "string, row " + i);
        }
      }
    }
    assertEquals(n, i, "rows read back");
    return batches;
  }
}
