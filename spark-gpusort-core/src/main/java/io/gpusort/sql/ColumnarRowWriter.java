package io.gpusort.sql;

import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;

/**
 * Writes rows of a {@link ColumnarBatch} as {@link UnsafeRow UnsafeRow} bytes straight into the
 * memory the sort keeps them in: the columnar intake, which spares the row conversion Spark would
 * otherwise run above a columnar scan and the copy of its result. Schemas of fixed-width columns
 * only (booleans, integers, floats, dates, timestamps): every row is {@link #rowBytes()} long, laid
 * out as {@code UnsafeRowWriter} lays it out (null bits, then one zero-filled 8-byte slot per
 * field; a null field's slot all zero).
 */
final class ColumnarRowWriter {
  private enum Kind { BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE }

  private final Kind[] kinds;
  private final int bitsetBytes;
  private final int rowBytes;
  private final ColumnVector[] vectors;

  private ColumnarRowWriter(Kind[] kinds) {
    this.kinds = kinds;
    this.bitsetBytes = ((kinds.length + 63) / 64) * 8;
    this.rowBytes = bitsetBytes + 8 * kinds.length;
    this.vectors = new ColumnVector[kinds.length];
  }

  /** A writer for rows of {@code schema}, or null when a column is not fixed-width. */
  static ColumnarRowWriter of(StructType schema) {
    StructField[] fields = schema.fields();
    Kind[] kinds = new Kind[fields.length];
    for (int i = 0; i < fields.length; i++) {
      kinds[i] = kindOf(fields[i].dataType());
      if (kinds[i] == null) {
        return null;
      }
    }
    return new ColumnarRowWriter(kinds);
  }

  private static Kind kindOf(DataType type) {
    if (type instanceof BooleanType) {
      return Kind.BOOLEAN;
    } else if (type instanceof ByteType) {
      return Kind.BYTE;
    } else if (type instanceof ShortType) {
      return Kind.SHORT;
    } else if (type instanceof IntegerType || type instanceof DateType) {
      return Kind.INT;
    } else if (type instanceof LongType || type instanceof TimestampType
        || type instanceof TimestampNTZType) {
      return Kind.LONG;
    } else if (type instanceof FloatType) {
      return Kind.FLOAT;
    } else if (type instanceof DoubleType) {
      return Kind.DOUBLE;
    }
    return null;
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
      for (int w = 0; w < bitsetBytes; w += 8) {
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
          Platform.putLong(null, slot + j * stride, 0L);
          Platform.putInt(null, slot + j * stride, v.getInt(from + j));
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, slot + j * stride, 0L);
          Platform.putFloat(null, slot + j * stride, canonical(v.getFloat(from + j)));
        }
      }
      case SHORT -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, slot + j * stride, 0L);
          Platform.putShort(null, slot + j * stride, v.getShort(from + j));
        }
      }
      case BYTE -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, slot + j * stride, 0L);
          Platform.putByte(null, slot + j * stride, v.getByte(from + j));
        }
      }
      case BOOLEAN -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, slot + j * stride, 0L);
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

  /** Spark's rows hold one NaN: the canonical one. */
  private static double canonical(double value) {
    return Double.isNaN(value) ? Double.NaN : value;
  }

  private static float canonical(float value) {
    return Float.isNaN(value) ? Float.NaN : value;
  }
}
