package io.gpusort.sql;

import io.gpusort.keys.KeyKind;
import java.util.Arrays;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Writes rows of a {@link ColumnarBatch} as {@code UnsafeRow} bytes straight into the
 * memory the sort keeps them in: the columnar intake, which spares the row conversion Spark would
 * otherwise run above a columnar scan and the copy of its result. Columns of atomic types
 * (booleans, integers, floats, dates, timestamps, decimals, strings, binaries); a row is byte for
 * byte what {@code UnsafeProjection} makes of it: null bits, one 8-byte slot per field (a value
 * zero-extended to its slot, a null field's slot zero, a decimal of at most 18 digits as its
 * unscaled long), then the variable-length values in field order, each zero-padded to a word and
 * named in its slot by {@code offset << 32 | size} from the row's start. A decimal of more than 18
 * digits takes 16 bytes there whether null or not; a null one has its bit set and its slot names
 * those bytes with size 0, as {@code UnsafeRowWriter} leaves it.
 *
 * <p>Without string and binary columns every row has one size; with them, {@link #bind} measures
 * each row of the batch before any is written.
 */
final class ColumnarRowWriter {
  /** A decimal of more than 18 digits: its bytes after the fixed part, in 16 bytes reserved. */
  private static final int WIDE_DECIMAL_BYTES = 16;

  private final DataType[] types;
  /** Each primitive column's kind; null for decimals, strings and binaries. */
  private final KeyKind[] kinds;
  /** Whether a column is a decimal, string or binary: written through {@link #rowAddresses}. */
  private final boolean anyNotPrimitive;
  /** Whether rows differ in size: a string or binary column. */
  private final boolean sizedPerRow;
  private final int bitsetBytes;
  /** The null bits and the slots. */
  private final int fixedBytes;
  /**
   * Where in a row the words a row's start zeroes lie: the null bits, and the slots of every
   * column but longs and doubles, whose values (or a null's zero) fill their slots whole.
   */
  private final int[] zeroedWords;
  /** The fixed part and 16 bytes per wide decimal: a row's size but for strings and binaries. */
  private final int baseRowBytes;
  private final ColumnVector[] vectors;
  private int numRows;
  /** Size of each row of the bound batch, when they differ. */
  private int[] rowSizes = new int[0];
  /** Where each row being written starts. */
  private long[] rowAddresses = new long[0];
  /** Where each row being written takes its next variable-length value, from the row's start. */
  private int[] cursors = new int[0];

  private ColumnarRowWriter(DataType[] types, KeyKind[] kinds) {
    this.types = types;
    this.kinds = kinds;
    this.bitsetBytes = ((kinds.length + 63) / 64) * 8;
    this.fixedBytes = bitsetBytes + 8 * kinds.length;
    int[] zeroed = new int[fixedBytes / 8];
    int words = 0;
    for (int w = 0; w < bitsetBytes; w += 8) {
      zeroed[words++] = w;
    }
    for (int i = 0; i < kinds.length; i++) {
      if (kinds[i] != KeyKind.LONG && kinds[i] != KeyKind.DOUBLE) {
        zeroed[words++] = bitsetBytes + 8 * i;
      }
    }
    this.zeroedWords = Arrays.copyOf(zeroed, words);
    int wideDecimals = 0;
    boolean perRow = false;
    boolean notPrimitive = false;
    for (int i = 0; i < types.length; i++) {
      notPrimitive |= kinds[i] == null;
      if (types[i] instanceof DecimalType d && !isCompact(d)) {
        wideDecimals++;
      }
      perRow |= types[i] instanceof StringType || types[i] instanceof BinaryType;
    }
    this.anyNotPrimitive = notPrimitive;
    this.sizedPerRow = perRow;
    this.baseRowBytes = fixedBytes + WIDE_DECIMAL_BYTES * wideDecimals;
    this.vectors = new ColumnVector[kinds.length];
  }

  /**
   * A writer for rows of {@code schema}, or null when a column is of a type it does not write
   * (arrays, maps, structs, intervals, nulls, ...): those rows come through Spark's conversion.
   */
  static ColumnarRowWriter of(StructType schema) {
    StructField[] fields = schema.fields();
    DataType[] types = new DataType[fields.length];
    KeyKind[] kinds = new KeyKind[fields.length];
    for (int i = 0; i < fields.length; i++) {
      DataType type = fields[i].dataType();
      types[i] = type;
      if (type instanceof DecimalType || type instanceof StringType
          || type instanceof BinaryType) {
        continue;
      }
      // The sort keys' type mapping for the primitive types.
      kinds[i] = KeySpec.kindOf(type);
      if (kinds[i] == null || kinds[i] == KeyKind.NULL || !kinds[i].isFixedWidth()) {
        return null;
      }
    }
    return new ColumnarRowWriter(types, kinds);
  }

  private static boolean isCompact(DecimalType type) {
    return type.precision() <= Decimal.MAX_LONG_DIGITS();
  }

  private static int roundToWord(int bytes) {
    return (bytes + 7) & ~7;
  }

  /** Bytes of row {@code row} of the bound batch. */
  int rowBytes(int row) {
    return sizedPerRow ? rowSizes[row] : baseRowBytes;
  }

  /** The fewest bytes of rows {@code [from, from + count)}. */
  int minRowBytes(int from, int count) {
    if (!sizedPerRow) {
      return baseRowBytes;
    }
    int min = Integer.MAX_VALUE;
    for (int j = from; j < from + count; j++) {
      min = Math.min(min, rowSizes[j]);
    }
    return min;
  }

  /** The most bytes of rows {@code [from, from + count)}. */
  int maxRowBytes(int from, int count) {
    if (!sizedPerRow) {
      return baseRowBytes;
    }
    int max = 0;
    for (int j = from; j < from + count; j++) {
      max = Math.max(max, rowSizes[j]);
    }
    return max;
  }

  /**
   * How many rows from {@code from}, at most {@code count}, fit in {@code bytes}: each its record
   * (an 8-byte length, then the row) and {@code extraBytesPerRow}.
   */
  int rowsWithin(int from, int count, long bytes, long extraBytesPerRow) {
    long perRow = RowStore.RECORD_HEADER_BYTES + extraBytesPerRow;
    if (!sizedPerRow) {
      return (int) Math.max(0, Math.min(count, bytes / (perRow + baseRowBytes)));
    }
    long left = bytes;
    int rows = 0;
    while (rows < count) {
      left -= perRow + rowSizes[from + rows];
      if (left < 0) {
        break;
      }
      rows++;
    }
    return rows;
  }

  /** Reads its rows from {@code batch} until the next call, and measures them. */
  void bind(ColumnarBatch batch) {
    if (batch.numCols() != vectors.length) {
      throw new IllegalArgumentException("a batch of " + batch.numCols() + " columns for rows of "
          + vectors.length);
    }
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = batch.column(i);
    }
    numRows = batch.numRows();
    if (rowAddresses.length < numRows) {
      rowAddresses = new long[numRows];
      cursors = new int[numRows];
      rowSizes = sizedPerRow ? new int[numRows] : rowSizes;
    }
    if (sizedPerRow) {
      measureRows();
    }
  }

  /** Each row's size: the base, then a loop per string or binary column adding its values. */
  private void measureRows() {
    Arrays.fill(rowSizes, 0, numRows, baseRowBytes);
    for (int i = 0; i < types.length; i++) {
      if (!(types[i] instanceof StringType) && !(types[i] instanceof BinaryType)) {
        continue;
      }
      ColumnVector v = vectors[i];
      boolean string = types[i] instanceof StringType;
      if (v instanceof ByteSliceVector cached) {
        for (int r = 0; r < numRows; r++) {
          if (!cached.isNullAt(r)) {
            rowSizes[r] = Math.addExact(rowSizes[r], roundToWord(cached.length(r)));
          }
        }
      } else if (v instanceof WritableColumnVector direct && !direct.hasDictionary()) {
        // Lengths read without making a UTF8String or copying the bytes.
        for (int r = 0; r < numRows; r++) {
          if (!direct.isNullAt(r)) {
            rowSizes[r] = Math.addExact(rowSizes[r], roundToWord(direct.getArrayLength(r)));
          }
        }
      } else {
        for (int r = 0; r < numRows; r++) {
          if (!v.isNullAt(r)) {
            int size = string ? v.getUTF8String(r).numBytes() : v.getBinary(r).length;
            rowSizes[r] = Math.addExact(rowSizes[r], roundToWord(size));
          }
        }
      }
    }
  }

  /**
   * Writes rows {@code [from, from + count)} of the bound batch as records (an 8-byte length, then
   * the row) one after another from {@code address}: a loop per column, so that each reads one
   * vector in order. Returns the bytes written.
   */
  long write(int from, int count, long address) {
    long end = sizedPerRow ? startRowsOfSizes(from, count, address) : startRows(count, address);
    long stride = RowStore.RECORD_HEADER_BYTES + baseRowBytes;
    boolean addressed = sizedPerRow || anyNotPrimitive;
    for (int i = 0; i < kinds.length; i++) {
      if (kinds[i] == null) {
        continue;
      }
      if (vectors[i].hasNull()) {
        if (!addressed) {
          addressRows(count, address + RowStore.RECORD_HEADER_BYTES, stride);
          addressed = true;
        }
        writeColumnWithNulls(i, from, count);
      } else if (sizedPerRow) {
        writeColumnAt(i, from, count);
      } else {
        // Rows a record apart: addressed by stride, with no array to read.
        writeColumn(i, from, count, address + RowStore.RECORD_HEADER_BYTES, stride);
      }
    }
    if (anyNotPrimitive) {
      Arrays.fill(cursors, 0, count, fixedBytes);
      for (int i = 0; i < kinds.length; i++) {
        if (kinds[i] == null) {
          writeNotPrimitive(i, from, count);
        }
      }
    }
    return end - address;
  }

  /**
   * The lengths and zeroed fixed parts (null bits clear, every slot zero but those of longs and
   * doubles, which their columns fill whole: a narrow value leaves the rest of its slot as is) of
   * {@code count} rows of one size from {@code address}, a record apart; returns where they end.
   */
  private long startRows(int count, long address) {
    long stride = RowStore.RECORD_HEADER_BYTES + baseRowBytes;
    int[] zeroed = zeroedWords;
    for (int j = 0; j < count; j++) {
      long at = address + j * stride;
      Platform.putLong(null, at, baseRowBytes);
      for (int w : zeroed) {
        Platform.putLong(null, at + RowStore.RECORD_HEADER_BYTES + w, 0L);
      }
    }
    if (anyNotPrimitive) {
      addressRows(count, address + RowStore.RECORD_HEADER_BYTES, stride);
    }
    return address + count * stride;
  }

  /** {@link #rowAddresses} of {@code count} rows {@code stride} bytes apart from {@code first}. */
  private void addressRows(int count, long first, long stride) {
    for (int j = 0; j < count; j++) {
      rowAddresses[j] = first + j * stride;
    }
  }

  /** As {@link #startRows}, for rows {@code [from, from + count)} of their measured sizes. */
  private long startRowsOfSizes(int from, int count, long address) {
    long at = address;
    int[] zeroed = zeroedWords;
    for (int j = 0; j < count; j++) {
      int size = rowSizes[from + j];
      Platform.putLong(null, at, size);
      long row = at + RowStore.RECORD_HEADER_BYTES;
      for (int w : zeroed) {
        Platform.putLong(null, row + w, 0L);
      }
      rowAddresses[j] = row;
      at = row + size;
    }
    return at;
  }

  /**
   * A primitive column without nulls into rows {@code stride} bytes apart from {@code first}.
   * Values pass bit for bit, NaNs' payloads included, as Spark's {@code UnsafeRowWriter} and its
   * sort leave them.
   */
  private void writeColumn(int i, int from, int count, long first, long stride) {
    ColumnVector v = vectors[i];
    long slot = first + bitsetBytes + 8L * i;
    // One loop per kind, the kind chosen outside it: each loop reads one vector in order.
    switch (kinds[i]) {
      case LONG -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, slot + j * stride, v.getLong(from + j));
        }
      }
      case DOUBLE -> {
        for (int j = 0; j < count; j++) {
          Platform.putDouble(null, slot + j * stride, v.getDouble(from + j));
        }
      }
      case INT -> {
        for (int j = 0; j < count; j++) {
          Platform.putInt(null, slot + j * stride, v.getInt(from + j));
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          Platform.putFloat(null, slot + j * stride, v.getFloat(from + j));
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
  }

  /**
   * The bound batch's column {@code ordinal} where a key can be encoded from its values as read
   * ({@link RowKeyEncoder#encodeColumn}): a primitive column, not a decimal, which a vector may
   * hold in another width.
   */
  ColumnVector keyColumn(int ordinal) {
    return kinds[ordinal] == null ? null : vectors[ordinal];
  }

  /** A column without nulls into the rows at {@link #rowAddresses}: as {@link #writeColumn}. */
  private void writeColumnAt(int i, int from, int count) {
    ColumnVector v = vectors[i];
    long[] rows = rowAddresses;
    long slot = bitsetBytes + 8L * i;
    switch (kinds[i]) {
      case LONG -> {
        for (int j = 0; j < count; j++) {
          Platform.putLong(null, rows[j] + slot, v.getLong(from + j));
        }
      }
      case DOUBLE -> {
        for (int j = 0; j < count; j++) {
          Platform.putDouble(null, rows[j] + slot, v.getDouble(from + j));
        }
      }
      case INT -> {
        for (int j = 0; j < count; j++) {
          Platform.putInt(null, rows[j] + slot, v.getInt(from + j));
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          Platform.putFloat(null, rows[j] + slot, v.getFloat(from + j));
        }
      }
      case SHORT -> {
        for (int j = 0; j < count; j++) {
          Platform.putShort(null, rows[j] + slot, v.getShort(from + j));
        }
      }
      case BYTE -> {
        for (int j = 0; j < count; j++) {
          Platform.putByte(null, rows[j] + slot, v.getByte(from + j));
        }
      }
      case BOOLEAN -> {
        for (int j = 0; j < count; j++) {
          Platform.putBoolean(null, rows[j] + slot, v.getBoolean(from + j));
        }
      }
      default -> throw new IllegalStateException("unknown kind " + kinds[i]);
    }
  }

  /**
   * A primitive column with nulls into the rows at {@link #rowAddresses}: a null field's bit set
   * and its slot all zero, a value read only where the row is not null. A null row's value is
   * whatever the vector holds there: a Parquet reader leaves a null row's dictionary id unwritten
   * (stale from an earlier batch of another dictionary, or uninitialised off-heap memory), and
   * decoding it reads past the dictionary's end.
   */
  private void writeColumnWithNulls(int i, int from, int count) {
    ColumnVector v = vectors[i];
    long[] rows = rowAddresses;
    long slot = bitsetBytes + 8L * i;
    switch (kinds[i]) {
      case LONG -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putLong(null, rows[j] + slot, v.getLong(from + j));
          }
        }
      }
      case DOUBLE -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putDouble(null, rows[j] + slot, v.getDouble(from + j));
          }
        }
      }
      case INT -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putInt(null, rows[j] + slot, v.getInt(from + j));
          }
        }
      }
      case FLOAT -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putFloat(null, rows[j] + slot, v.getFloat(from + j));
          }
        }
      }
      case SHORT -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putShort(null, rows[j] + slot, v.getShort(from + j));
          }
        }
      }
      case BYTE -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putByte(null, rows[j] + slot, v.getByte(from + j));
          }
        }
      }
      case BOOLEAN -> {
        for (int j = 0; j < count; j++) {
          if (!putNullAt(v, from + j, rows[j], i)) {
            Platform.putBoolean(null, rows[j] + slot, v.getBoolean(from + j));
          }
        }
      }
      default -> throw new IllegalStateException("unknown kind " + kinds[i]);
    }
  }

  /**
   * Whether row {@code r} of {@code v} is null; if so, field {@code i} of the row at {@code row}
   * is made null: its bit set, its whole slot zero (a long's or double's slot is not zeroed by the
   * row's start).
   */
  private boolean putNullAt(ColumnVector v, int r, long row, int i) {
    if (!v.isNullAt(r)) {
      return false;
    }
    setNull(row, i);
    Platform.putLong(null, row + bitsetBytes + 8L * i, 0L);
    return true;
  }

  /**
   * A decimal, string or binary column into the rows at {@link #rowAddresses}; the variable-length
   * values after those of the columns before it.
   */
  private void writeNotPrimitive(int i, int from, int count) {
    if (vectors[i] instanceof ByteSliceVector slices) {
      writeSlices(slices, i, from, count);
    } else if (types[i] instanceof StringType) {
      writeStrings(i, from, count);
    } else if (types[i] instanceof BinaryType) {
      writeBinaries(i, from, count);
    } else if (isCompact((DecimalType) types[i])) {
      writeCompactDecimals(i, (DecimalType) types[i], from, count);
    } else {
      writeWideDecimals(i, (DecimalType) types[i], from, count);
    }
  }

  /**
   * Decimals of at most 18 digits: the unscaled long in the slot. One that does not fit its type
   * is null, as {@code UnsafeRowWriter} has it.
   */
  private void writeCompactDecimals(int i, DecimalType type, int from, int count) {
    ColumnVector v = vectors[i];
    int precision = type.precision();
    int scale = type.scale();
    long slot = bitsetBytes + 8L * i;
    for (int j = 0; j < count; j++) {
      int r = from + j;
      Decimal value = v.isNullAt(r) ? null : v.getDecimal(r, precision, scale);
      if (value != null && value.changePrecision(precision, scale)) {
        Platform.putLong(null, rowAddresses[j] + slot, value.toUnscaledLong());
      } else {
        setNull(rowAddresses[j], i);
      }
    }
  }

  private void writeStrings(int i, int from, int count) {
    ColumnVector v = vectors[i];
    long slot = bitsetBytes + 8L * i;
    for (int j = 0; j < count; j++) {
      long row = rowAddresses[j];
      if (v.isNullAt(from + j)) {
        setNull(row, i);
        continue;
      }
      UTF8String value = v.getUTF8String(from + j);
      value.writeToMemory(null, placeValue(row, slot, j, value.numBytes()));
    }
  }

  private void writeBinaries(int i, int from, int count) {
    ColumnVector v = vectors[i];
    long slot = bitsetBytes + 8L * i;
    for (int j = 0; j < count; j++) {
      long row = rowAddresses[j];
      if (v.isNullAt(from + j)) {
        setNull(row, i);
        continue;
      }
      byte[] value = v.getBinary(from + j);
      Platform.copyMemory(value, Platform.BYTE_ARRAY_OFFSET, null,
          placeValue(row, slot, j, value.length), value.length);
    }
  }

  /**
   * Strings or binaries read where they lie (the cache's buffer, a reader's): each value's bytes
   * copied once, no object.
   */
  private void writeSlices(ByteSliceVector v, int i, int from, int count) {
    long slot = bitsetBytes + 8L * i;
    for (int j = 0; j < count; j++) {
      long row = rowAddresses[j];
      if (v.isNullAt(from + j)) {
        setNull(row, i);
        continue;
      }
      v.copyTo(from + j, placeValue(row, slot, j, v.length(from + j)));
    }
  }

  /**
   * Places a variable-length value of {@code size} bytes at row {@code j}'s cursor (the row at
   * {@code row}): names it in the field's {@code slot}, zeroes the padding of its last word and
   * moves the cursor past it; returns where its bytes go.
   */
  private long placeValue(long row, long slot, int j, int size) {
    int offset = cursors[j];
    zeroPadding(row + offset, size);
    Platform.putLong(null, row + slot, ((long) offset << 32) | size);
    cursors[j] = offset + roundToWord(size);
    return row + offset;
  }

  /**
   * Decimals of more than 18 digits: the unscaled value's two's-complement bytes, big-endian and
   * as few as {@code BigInteger.toByteArray} gives, in 16 zeroed bytes.
   */
  private void writeWideDecimals(int i, DecimalType type, int from, int count) {
    ColumnVector v = vectors[i];
    int precision = type.precision();
    int scale = type.scale();
    long slot = bitsetBytes + 8L * i;
    for (int j = 0; j < count; j++) {
      int r = from + j;
      long row = rowAddresses[j];
      int offset = cursors[j];
      Platform.putLong(null, row + offset, 0L);
      Platform.putLong(null, row + offset + 8, 0L);
      Decimal value = v.isNullAt(r) ? null : v.getDecimal(r, precision, scale);
      if (value == null || !value.changePrecision(precision, scale)) {
        setNull(row, i);
        Platform.putLong(null, row + slot, (long) offset << 32);
      } else {
        byte[] bytes = value.toJavaBigDecimal().unscaledValue().toByteArray();
        Platform.copyMemory(bytes, Platform.BYTE_ARRAY_OFFSET, null, row + offset, bytes.length);
        Platform.putLong(null, row + slot, ((long) offset << 32) | bytes.length);
      }
      cursors[j] = offset + WIDE_DECIMAL_BYTES;
    }
  }

  /** Zeroes the word a value of {@code size} bytes at {@code address} ends in, when partial. */
  private static void zeroPadding(long address, int size) {
    if ((size & 7) != 0) {
      Platform.putLong(null, address + (size & ~7), 0L);
    }
  }

  private static void setNull(long row, int i) {
    long word = row + 8L * (i >>> 6);
    Platform.putLong(null, word, Platform.getLong(null, word) | (1L << (i & 63)));
  }
}
