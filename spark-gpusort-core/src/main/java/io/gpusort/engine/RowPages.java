package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.List;

/**
 * Rows that an engine puts in sorted order ({@link SortEngine#gatherRows}): records in host pages,
 * each record an 8-byte length {@code L} (a multiple of 8) followed by {@code L} bytes of row, every
 * record 8-aligned. Row {@code r} is named by its pointer, the long at byte {@code 8 * r} of
 * {@link #pointers()}: {@code page << OFFSET_BITS | offset of the record in the page}.
 *
 * <p><b>The sorted stream.</b> After the gather, the records come in sorted order as one stream of
 * {@link #recordBytes()} bytes laid over the pages by capacity: stream byte {@code b} is in the
 * page {@code k} with {@code start(k) <= b < start(k) + capacity(k)}, where {@code start(k)} sums
 * the capacities of the pages before it. A record may therefore continue from the end of one page
 * into the next (its length word never does: capacities are multiples of 8). The stream fits, since
 * every page held at most its capacity before.
 *
 * <p>Does not own its buffers.
 */
public final class RowPages {
  /** Bits of a pointer that hold the offset within the page. */
  public static final int OFFSET_BITS = 40;
  public static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;
  /** Bytes before each row in its record: its length. */
  public static final int RECORD_HEADER_BYTES = 8;

  private final List<HostBuffer> pages;
  private final long[] usedBytes;
  private final HostBuffer pointers;
  private final int numRows;
  private final long recordBytes;
  private final int fixedRecordBytes;

  /**
   * @param usedBytes bytes of records at the start of each page
   * @param fixedRecordBytes the size of every record when they all have one size, else 0
   */
  public RowPages(List<HostBuffer> pages, long[] usedBytes, HostBuffer pointers, int numRows,
      long recordBytes, int fixedRecordBytes) {
    if (usedBytes.length != pages.size()) {
      throw new IllegalArgumentException(pages.size() + " pages but " + usedBytes.length
          + " used sizes");
    }
    if (pointers.sizeBytes() < 8L * numRows) {
      throw new IllegalArgumentException("pointer buffer of " + pointers.sizeBytes()
          + " bytes is too small for " + numRows + " rows");
    }
    long used = 0;
    for (int k = 0; k < pages.size(); k++) {
      if (usedBytes[k] < 0 || usedBytes[k] > capacityBytes(pages.get(k))) {
        throw new IllegalArgumentException("page " + k + " uses " + usedBytes[k] + " of "
            + capacityBytes(pages.get(k)) + " bytes");
      }
      used += usedBytes[k];
    }
    if (used != recordBytes || (recordBytes & 7) != 0) {
      throw new IllegalArgumentException("records of " + recordBytes + " bytes in pages using "
          + used);
    }
    this.pages = List.copyOf(pages);
    this.usedBytes = usedBytes.clone();
    this.pointers = pointers;
    this.numRows = numRows;
    this.recordBytes = recordBytes;
    this.fixedRecordBytes = fixedRecordBytes;
  }

  /** The page's capacity in the sorted stream: its size, down to a multiple of 8. */
  public static long capacityBytes(HostBuffer page) {
    return page.sizeBytes() & ~7L;
  }

  public static long pointer(int page, long offset) {
    return ((long) page << OFFSET_BITS) | offset;
  }

  public static int pageOf(long pointer) {
    return (int) (pointer >>> OFFSET_BITS);
  }

  public static long offsetOf(long pointer) {
    return pointer & OFFSET_MASK;
  }

  public int numPages() {
    return pages.size();
  }

  public HostBuffer page(int k) {
    return pages.get(k);
  }

  public long usedBytes(int k) {
    return usedBytes[k];
  }

  public HostBuffer pointers() {
    return pointers;
  }

  public int numRows() {
    return numRows;
  }

  /** Bytes of all records, length words included. */
  public long recordBytes() {
    return recordBytes;
  }

  /** The size of every record when they all have one size, else 0. */
  public int fixedRecordBytes() {
    return fixedRecordBytes;
  }

  /** The address of row {@code r}'s record. */
  public long recordAddress(int r) {
    long p = HostMemory.getLong(pointers.address() + 8L * r);
    return pages.get(pageOf(p)).address() + offsetOf(p);
  }

  /**
   * The gather on the host, the reference every engine's is checked against: copies the records
   * in {@code permutation} order into one buffer, then lays that stream over the pages.
   */
  public void gatherOnHost(HostBuffer permutation) {
    checkPermutation(permutation);
    try (HostBuffer stream = HostBuffer.acquire(Math.max(8, recordBytes))) {
      long to = stream.address();
      long perm = permutation.address();
      for (int i = 0; i < numRows; i++) {
        long from = recordAddress(HostMemory.getInt(perm + 4L * i));
        long size = RECORD_HEADER_BYTES + HostMemory.getLong(from);
        HostMemory.copy(from, to, size);
        to += size;
      }
      scatterStream(stream.address());
    }
  }

  /** Throws IllegalArgumentException unless {@code permutation} holds one int per row. */
  public void checkPermutation(HostBuffer permutation) {
    if (permutation.sizeBytes() < 4L * numRows) {
      throw new IllegalArgumentException("permutation of " + permutation.sizeBytes()
          + " bytes for " + numRows + " rows");
    }
  }

  /** Copies a sorted stream of {@link #recordBytes} bytes at {@code address} over the pages. */
  private void scatterStream(long address) {
    long done = 0;
    for (int k = 0; k < pages.size() && done < recordBytes; k++) {
      long length = Math.min(capacityBytes(pages.get(k)), recordBytes - done);
      HostMemory.copy(address + done, pages.get(k).address(), length);
      done += length;
    }
  }
}
