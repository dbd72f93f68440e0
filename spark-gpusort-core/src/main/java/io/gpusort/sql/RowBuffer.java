package io.gpusort.sql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;

/**
 * The rows of one partition, copied as {@link UnsafeRow} bytes into large on-heap pages, the way
 * Spark's own sorter holds them: no object per row, and a row is read back by pointing a reused
 * {@code UnsafeRow} at its bytes.
 */
final class RowBuffer {
  private static final int PAGE_BYTES = 4 << 20;

  private final int numFields;
  private final List<byte[]> pages = new ArrayList<>();
  private byte[] page;
  private int pageUsed;
  /** Row i lives in page {@code (int) (address[i] >>> 32)} at offset {@code (int) address[i]}. */
  private long[] addresses = new long[1024];
  private int[] sizes = new int[1024];
  private int numRows;
  private long sizeBytes;

  RowBuffer(int numFields) {
    this.numFields = numFields;
  }

  int numRows() {
    return numRows;
  }

  int numFields() {
    return numFields;
  }

  /** Bytes of row data held (not counting page slack). */
  long sizeBytes() {
    return sizeBytes;
  }

  int rowSizeBytes(int row) {
    return sizes[row];
  }

  void append(UnsafeRow row) {
    int size = row.getSizeInBytes();
    if (page == null || PAGE_BYTES - pageUsed < size) {
      page = new byte[Math.max(PAGE_BYTES, size)];
      pages.add(page);
      pageUsed = 0;
    }
    Platform.copyMemory(row.getBaseObject(), row.getBaseOffset(), page,
        Platform.BYTE_ARRAY_OFFSET + pageUsed, size);
    if (numRows == addresses.length) {
      int capacity = Math.toIntExact(Math.min(2L * numRows, Integer.MAX_VALUE - 8));
      addresses = Arrays.copyOf(addresses, capacity);
      sizes = Arrays.copyOf(sizes, capacity);
    }
    addresses[numRows] = ((long) (pages.size() - 1) << 32) | pageUsed;
    sizes[numRows] = size;
    numRows++;
    pageUsed += size;
    sizeBytes += size;
  }

  /** Points {@code target} at row {@code index}; valid while this buffer lives. */
  void pointTo(UnsafeRow target, int index) {
    long address = addresses[index];
    target.pointTo(pages.get((int) (address >>> 32)),
        Platform.BYTE_ARRAY_OFFSET + (int) address, sizes[index]);
  }

  /** A new reusable row object for {@link #pointTo}. */
  UnsafeRow newRow() {
    return new UnsafeRow(numFields);
  }
}
