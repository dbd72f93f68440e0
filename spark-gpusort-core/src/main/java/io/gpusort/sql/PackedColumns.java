package io.gpusort.sql;

import org.apache.spark.unsafe.Platform;

/**
 * A chunk's rows of one size packed by column for the shuffle: each 8-byte word of the entries (the
 * key words, then the row's words) is a column, written as its first value and then the zigzag of
 * each value's difference from the one before, in the fewest whole bytes that hold the column's
 * largest. The rows' size, the same for all, is not written.
 *
 * <p>A sorted run makes its key column's differences small (neighbouring keys are close), a
 * column of one value packs to no bytes at all (null bits of a schema without nulls), and a column
 * of small numbers keeps only its low bytes, so Spark's codec gets fewer bytes than the rows'; rows
 * of different sizes (strings) are left as they are. Unpacking gives the same bytes back.
 *
 * <p>Layout per column, in column order: one byte (the width, 0 to 8), the first value (8 bytes),
 * then {@code numRows - 1} packed differences of width bytes each, little-endian. Reading needs
 * {@link #SLACK} bytes after the packed ones (a difference is read as a whole word).
 */
final class PackedColumns {
  /** Bytes a packed buffer needs past its end: each difference is read and written as a word. */
  static final int SLACK = 8;

  private PackedColumns() {}

  /** Columns of an entry of {@code numWords} key words and a row of {@code rowSize} bytes. */
  static int numColumns(int numWords, int rowSize) {
    return numWords + rowSize / 8;
  }

  /** Where column {@code c} lies in an entry of {@code numWords} key words. */
  private static int columnOffset(int c, int numWords) {
    return c < numWords ? 8 * c : 8 * numWords + RowChunk.SIZE_BYTES + 8 * (c - numWords);
  }

  /**
   * The packed size of {@code numRows} entries in {@code src} of {@code numWords} key words and
   * rows of {@code rowSize} bytes (a multiple of 8), with each column's width written into
   * {@code widths}.
   */
  static long packedBytes(byte[] src, int numRows, int numWords, int rowSize, byte[] widths) {
    int stride = 8 * numWords + RowChunk.SIZE_BYTES + rowSize;
    int numColumns = numColumns(numWords, rowSize);
    long total = 0;
    for (int c = 0; c < numColumns; c++) {
      long at = Platform.BYTE_ARRAY_OFFSET + columnOffset(c, numWords);
      long previous = Platform.getLong(src, at);
      long any = 0;
      for (int i = 1; i < numRows; i++) {
        at += stride;
        long value = Platform.getLong(src, at);
        long difference = value - previous;
        any |= (difference << 1) ^ (difference >> 63);
        previous = value;
      }
      int width = (64 - Long.numberOfLeadingZeros(any) + 7) / 8;
      widths[c] = (byte) width;
      total += 1 + 8 + (long) width * (numRows - 1);
    }
    return total;
  }

  /**
   * Packs the entries into {@code dst} (at least the packed size plus {@link #SLACK}), by the
   * widths {@link #packedBytes} found; returns the bytes written.
   */
  static int pack(byte[] src, int numRows, int numWords, int rowSize, byte[] widths, byte[] dst) {
    int stride = 8 * numWords + RowChunk.SIZE_BYTES + rowSize;
    int numColumns = numColumns(numWords, rowSize);
    long out = Platform.BYTE_ARRAY_OFFSET;
    for (int c = 0; c < numColumns; c++) {
      int width = widths[c];
      long at = Platform.BYTE_ARRAY_OFFSET + columnOffset(c, numWords);
      long previous = Platform.getLong(src, at);
      Platform.putByte(dst, out, (byte) width);
      Platform.putLong(dst, out + 1, previous);
      out += 9;
      if (width == 0) {
        continue;
      }
      for (int i = 1; i < numRows; i++) {
        at += stride;
        long value = Platform.getLong(src, at);
        long difference = value - previous;
        // A whole word is written; the next difference overwrites the bytes past the width.
        Platform.putLong(dst, out, (difference << 1) ^ (difference >> 63));
        out += width;
        previous = value;
      }
    }
    return (int) (out - Platform.BYTE_ARRAY_OFFSET);
  }

  /**
   * Unpacks {@code numRows} entries from the {@code packedBytes} of {@code src} (followed by
   * {@link #SLACK} readable bytes) into {@code dst}, sizes included; fails on a packed form that
   * does not fit those entries.
   */
  static void unpack(byte[] src, int packedBytes, int numRows, int numWords, int rowSize,
      byte[] dst) {
    int stride = 8 * numWords + RowChunk.SIZE_BYTES + rowSize;
    int numColumns = numColumns(numWords, rowSize);
    if ((long) stride * numRows > dst.length || src.length < packedBytes + SLACK) {
      throw new IllegalStateException("a packed chunk of " + numRows + " rows of " + rowSize
          + " bytes does not fit its buffers");
    }
    long in = Platform.BYTE_ARRAY_OFFSET;
    long end = in + packedBytes;
    for (int c = 0; c < numColumns; c++) {
      if (in + 9 > end) {
        throw new IllegalStateException("a packed chunk ends in its column " + c);
      }
      int width = Platform.getByte(src, in);
      if (width < 0 || width > 8 || in + 9 + (long) width * (numRows - 1) > end) {
        throw new IllegalStateException("a packed chunk's column " + c + " has width " + width
            + " past its " + packedBytes + " bytes");
      }
      long previous = Platform.getLong(src, in + 1);
      in += 9;
      long at = Platform.BYTE_ARRAY_OFFSET + columnOffset(c, numWords);
      Platform.putLong(dst, at, previous);
      long mask = width == 8 ? -1L : (1L << (8 * width)) - 1;
      for (int i = 1; i < numRows; i++) {
        at += stride;
        long zigzag = Platform.getLong(src, in) & mask;
        in += width;
        previous += (zigzag >>> 1) ^ -(zigzag & 1);
        Platform.putLong(dst, at, previous);
      }
    }
    if (in != end) {
      throw new IllegalStateException("a packed chunk has " + (end - in) + " bytes left over");
    }
    long size = Platform.BYTE_ARRAY_OFFSET + 8L * numWords;
    for (int i = 0; i < numRows; i++) {
      Platform.putInt(dst, size, rowSize);
      size += stride;
    }
  }
}
