package io.gpusort.sql;

import java.util.Arrays;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A string or binary column whose values are slices of one byte array: row {@code r}'s value is
 * {@code lengths[r]} bytes at {@code offsets[r]} of the buffer, a null a length of -1. A source
 * that reads values into one buffer (the in-memory cache's column, a file format's records) hands
 * them out this way without copying them; GpuSort's columnar intake copies each value once,
 * straight from the buffer into its rows. Other readers see an ordinary column: {@link
 * #getUTF8String} views the buffer, {@link #getBinary} copies the value.
 *
 * <p>A reader may point the vector at its next batch's buffer with {@link #point} once the
 * batch before has been consumed, as Spark's own readers reuse their vectors.
 */
public class ByteSliceVector extends ColumnVector {
  /** Values up to this length are copied by a loop of words rather than by one bulk copy. */
  private static final int WORD_COPY_BYTES = 128;

  private byte[] buffer;
  private int[] offsets;
  private int[] lengths;
  private int numNulls;

  /**
   * The values of {@code lengths.length} rows (at least) in {@code buffer}.
   *
   * @param type a string or binary type
   * @param offsets each row's first byte in {@code buffer}
   * @param lengths each row's length in bytes, -1 for a null; each value must lie in the buffer
   * @param numNulls how many rows are null
   */
  public ByteSliceVector(DataType type, byte[] buffer, int[] offsets, int[] lengths,
      int numNulls) {
    super(type);
    if (!(type instanceof StringType) && !(type instanceof BinaryType)) {
      throw new IllegalArgumentException("a column of byte slices holds strings or binaries, not "
          + type.simpleString());
    }
    point(buffer, offsets, lengths, numNulls);
  }

  /** Points the vector at another batch's values (see the constructor). */
  public final void point(byte[] buffer, int[] offsets, int[] lengths, int numNulls) {
    if (offsets.length < lengths.length) {
      throw new IllegalArgumentException(offsets.length + " offsets for " + lengths.length
          + " lengths");
    }
    this.buffer = buffer;
    this.offsets = offsets;
    this.lengths = lengths;
    this.numNulls = numNulls;
  }

  /** The length in bytes of row {@code r}'s value (not null). */
  final int length(int r) {
    return lengths[r];
  }

  /**
   * Copies row {@code r}'s value (not null) to native memory at {@code address}: word by word up
   * to {@link #WORD_COPY_BYTES} (a bulk copy from the heap is a call into the VM, dearer than the
   * loop for a short value), whole beyond.
   */
  final void copyTo(int r, long address) {
    int length = lengths[r];
    long from = Platform.BYTE_ARRAY_OFFSET + offsets[r];
    if (length > WORD_COPY_BYTES) {
      Platform.copyMemory(buffer, from, null, address, length);
      return;
    }
    int k = 0;
    for (; k + 8 <= length; k += 8) {
      Platform.putLong(null, address + k, Platform.getLong(buffer, from + k));
    }
    for (; k < length; k++) {
      Platform.putByte(null, address + k, Platform.getByte(buffer, from + k));
    }
  }

  @Override
  public void close() {}

  @Override
  public boolean hasNull() {
    return numNulls > 0;
  }

  @Override
  public int numNulls() {
    return numNulls;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return lengths[rowId] < 0;
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    return isNullAt(rowId) ? null
        : UTF8String.fromBytes(buffer, offsets[rowId], lengths[rowId]);
  }

  @Override
  public byte[] getBinary(int rowId) {
    return isNullAt(rowId) ? null
        : Arrays.copyOfRange(buffer, offsets[rowId], offsets[rowId] + lengths[rowId]);
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw unsupported();
  }

  @Override
  public byte getByte(int rowId) {
    throw unsupported();
  }

  @Override
  public short getShort(int rowId) {
    throw unsupported();
  }

  @Override
  public int getInt(int rowId) {
    throw unsupported();
  }

  @Override
  public long getLong(int rowId) {
    throw unsupported();
  }

  @Override
  public float getFloat(int rowId) {
    throw unsupported();
  }

  @Override
  public double getDouble(int rowId) {
    throw unsupported();
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw unsupported();
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw unsupported();
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw unsupported();
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw unsupported();
  }

  private UnsupportedOperationException unsupported() {
    return new UnsupportedOperationException("a " + type.simpleString()
        + " column of byte slices holds strings or binaries only");
  }
}
