package io.gpusort.sql;

import io.gpusort.keys.KeyKind;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;

/**
 * Writes rows of a {@link ColumnarBatch} as {@code UnsafeRow} bytes straight into the
 * memory the sort keeps them in: the columnar intake, which spares the row conversion Spark would
 * otherwise run above a columnar scan and the copy of its result. Schemas of fixed-width columns
 * only (booleans, integers, floats, dates, timestamps): every row is {@link #rowBytes()} long, laid
 * out as {@code UnsafeRowWriter} lays it out (null bits, then one zero-filled 8-byte slot per
 * field; a null field's slot all zero).
 */
final class ColumnarRowWriter {
  private final KeyKind[] kinds;
  private final int bitsetBytes;
  private final int rowBytes;
  private final ColumnVector[] vectors;

  private ColumnarRowWriter(KeyKind[] kinds) {
    this.kinds = kinds;
    this.bitsetBytes = ((kinds.length + 63) / 64) * 8;
    this.rowBytes = bitsetBytes + 8 * kinds.length;
    this.vectors = new ColumnVector[kinds.length];
  }

  /** A writer for rows of {@code schema}, or null when a column is not fixed-width. */
  static ColumnarRowWriter of(StructType schema) {
    StructField[] fields = schema.fields();
    KeyKind[] kinds = new KeyKind[fields.length];
    for (int i = 0; i < fields.length; i++) {
      DataType type = fields[i].dataType();
      // The sort keys' type mapping, but for decimals, which column vectors may hold as ints.
      kinds[i] = type instanceof DecimalType ? null : KeySpec.kindOf(type);
      if (kinds[i] == null || kinds[i] == KeyKind.NULL || !kinds[i].isFixedWidth()
          || kinds[i] == KeyKind.INT128) {
        return null;
      }
    }
    return new ColumnarRowWriter(kinds);
  }

  /** Bytes of every row. */
  int rowBytes() {
    return rowBytes;
  }

  /** Reads its rows from {@code batch} until the next call. */
  void bind(ColumnarBatch batch) {
    if (batch.numCols() != vectors.length) {
      throw new IllegalArgumentException("a batch of " + batch.numCols() + " columns for rows of "
          + vectors.length);
    }
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = batch.column(i);
    }
  }

  /**
   * Writes rows {@code [from, from + count)} of the bound batch as records (an 8-byte length, then
   * the row) one after another from {@code address}, {@code 8 + rowBytes()} bytes apart: a loop
   * per column, so that each reads one vector in order.
   */
  void write(int from, int count, long address) {
    long stride = RowStore.RECORD_HEADER_BYTES + rowBytes;
    long rows = address + RowStore.RECORD_HEADER_BYTES;
    for (int j = 0; j < count; j++) {
      long at = address + j * stride;
      Platform.putLong(null, at, rowBytes);
      // Null bits clear and every slot zero: a narrow value leaves the rest of its slot as is.
      for (int w = 0; w < rowBytes; w += 8) {
        Platform.putLong(null, at + RowStore.RECORD_HEADER_BYTES + w, 0L);
      }
    }
    for (int i = 0; i < kinds.length; i++) {
      writeColumn(i, from, count, rows, stride);
    }
  }

  private void writeColumn(int i, int from, int count, long rows, long stride) {
    ColumnVector v = vectors[i];
    long slot = rows + bitsetBytes + 8L * i;
    // One loop per kind, the kind chosen outside it: each loop reads one vector in order.
    switch (kinds[i]) {
      case LONG -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, slot + j * stride, v.getLong(from + j));
        }
      }
      case DOUBLE -> {
        for (int j = 0; j < count; j++) {
          Platform.putDouble(null, slot + j * stride, canonical(v.getDouble(from + j)));
        }
      }
      case INT -> {
        for (int j = 0; j < count; j++) {
          Platform.putInt(null, slot + j * stride, v.getInt(from + j));
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          Platform.putFloat(null, slot + j * stride, canonical(v.getFloat(from + j)));
        }
      }
      case SHORT -> {
        for (int j = 0; j < count; j++) {
          Platform.putShort(null, slot + j * stride, v.getShort(from + j));
        }
      }
      case BYTE -> {
        for (int j = 0; j < count; j++) {
          Platform.putByte(null, slot + j * stride, v.getByte(from + j));
        }
      }
      case BOOLEAN -> {
        for (int j = 0; j < count; j++) {
          Platform.putBoolean(null, slot + j * stride, v.getBoolean(from + j));
        }
      }
      default -> throw new IllegalStateException("unknown kind " + kinds[i]);
    }
    if (v.hasNull()) {
      // Null fields: the bit set, the slot all zero (whatever the vector holds there).
      long bitWord = rows + 8L * (i >>> 6);
      long bit = 1L << (i & 63);
      for (int j = 0; j < count; j++) {
        if (v.isNullAt(from + j)) {
          long at = j * stride;
          Platform.putLong(null, bitWord + at, Platform.getLong(null, bitWord + at) | bit);
          Platform.putLong(null, slot + at, 0L);
        }
      }
    }
  }

  /**
   * The bound batch's column {@code ordinal} where a key can be encoded from its values as read
   * ({@link RowKeyEncoder#encodeColumn}): not a decimal, which a vector may hold in another width.
   */
  ColumnVector keyColumn(int ordinal) {
    ColumnVector v = vectors[ordinal];
    return v == null || v.dataType() instanceof DecimalType ? null : v;
  }

  /** Spark's rows hold one NaN: the canonical one. */
  private static double canonical(double value) {
    return Double.isNaN(value) ? Double.NaN : value;
  }

  private static float canonical(float value) {
    return Float.isNaN(value) ? Float.NaN : value;
  }
}
