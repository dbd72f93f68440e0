package io.gpusort.sql;

import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostMemory;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

/**
 * Reads the records of a run whose rows the engine put in sorted order (the sorted stream of
 * {@link RowPages}) front to back, waiting for each page to be back from the device before reading
 * it: the row is pointed at in its page, or, where a record continues
 * into the next page, copied whole into a scratch array first.
 *
 * <p>Where the rows' sizes are known apart from the stream ({@link RowSizes}), the next record's
 * place is found without reading the current one's length word: reading it would chain each row's
 * load on the one before (the next address depends on it), one cache miss after another where
 * rows span cache lines, while rows whose places are known are loaded independently.
 */
final class SortedStream {
  /** Sizes read ahead of the stream at once. */
  private static final int SIZE_BATCH = 256;

  /** The sizes of the rows of a sorted stream, by position, without reading the stream. */
  @FunctionalInterface
  interface RowSizes {
    /** Writes the sizes in bytes of the rows at positions {@code [from, from + count)}. */
    void sizes(int from, int count, int[] out);
  }

  private final RowStore rows;
  private final long totalBytes;
  /** The page holding {@link #offset}, its address, and where it starts in the stream. */
  private int page;
  private long pageAddress;
  private long pageStart;
  private long pageCapacity;
  /** Stream offset of the next record. */
  private long offset;
  /** The page of the current row, or -1 when it was copied into {@link #scratch}. */
  private int currentPage = -1;
  private byte[] scratch = new byte[256];
  /** The stream as it comes back from the device; bytes before {@link #arrived} are in place. */
  private final RowArrival arrival;
  private long arrived;
  /** Time spent waiting for pages to be back. */
  private long waitNanos;
  /** The rows' sizes by position, or null: each is read from its record's length word. */
  private final RowSizes sizes;
  /** The size of every row where they all have one size, else 0. */
  private final int fixedRowBytes;
  private final int numRows;
  /** The position of the next record. */
  private int position;
  private final int[] sizeBatch;
  /** How many of {@code sizeBatch} hold sizes, and the next one to take. */
  private int batchCount;
  private int batchNext;

  /** A stream whose records are found through their length words. */
  SortedStream(RowStore rows, long totalBytes, RowArrival arrival) {
    this(rows, totalBytes, arrival, null, 0, 0);
  }

  /**
   * A stream of {@code numRows} rows whose sizes come from {@code sizes} (null: from the records'
   * length words), or are all {@code fixedRowBytes} where that is positive.
   */
  SortedStream(RowStore rows, long totalBytes, RowArrival arrival, RowSizes sizes, int numRows,
      int fixedRowBytes) {
    this.rows = rows;
    this.totalBytes = totalBytes;
    this.arrival = arrival == null ? RowArrival.DONE : arrival;
    this.pageCapacity = rows.numPages() == 0 ? 0 : RowPages.capacityBytes(rows.page(0));
    this.pageAddress = rows.numPages() == 0 ? 0 : rows.page(0).address();
    this.sizes = sizes;
    this.numRows = numRows;
    this.fixedRowBytes = sizes == null ? 0 : fixedRowBytes;
    this.sizeBatch = sizes == null ? null : new int[SIZE_BATCH];
  }

  /** The size of the next row, from {@link #sizes}; moves {@link #position} past it. */
  private int nextSize() {
    if (fixedRowBytes > 0) {
      position++;
      return fixedRowBytes;
    }
    if (batchNext == batchCount) {
      batchCount = Math.min(SIZE_BATCH, numRows - position);
      if (batchCount <= 0) {
        throw new IllegalStateException("a sorted stream of " + numRows + " rows has more");
      }
      sizes.sizes(position, batchCount, sizeBatch);
      batchNext = 0;
    }
    position++;
    return sizeBatch[batchNext++];
  }

  /** Points {@code row} at the next record; false after the last. */
  boolean next(UnsafeRow row) {
    long start = offset;
    if (start >= totalBytes) {
      return false;
    }
    if (start - pageStart >= pageCapacity || start >= arrived) {
      moveToOffset();
    }
    long inPage = start - pageStart;
    long at = pageAddress + inPage;
    int size = sizes == null ? (int) HostMemory.getLong(at) : nextSize();
    long end = start + RowStore.RECORD_HEADER_BYTES + size;
    offset = end;
    if (end > arrived) {
      // A record continuing into pages not yet back.
      await(end);
    }
    if (end - pageStart <= pageCapacity) {
      currentPage = page;
      row.pointTo(null, at + RowStore.RECORD_HEADER_BYTES, size);
      return true;
    }
    copyAcrossPages(at + RowStore.RECORD_HEADER_BYTES,
        pageCapacity - inPage - RowStore.RECORD_HEADER_BYTES, size);
    currentPage = -1;
    row.pointTo(scratch, HostMemory.BYTE_ARRAY_OFFSET, size);
    return true;
  }

  /** Skips the next {@code count} records. */
  void skip(long count) {
    for (long i = 0; i < count && offset < totalBytes; i++) {
      moveToOffset();
      long at = pageAddress + (offset - pageStart);
      offset += RowStore.RECORD_HEADER_BYTES
          + (sizes == null ? (int) HostMemory.getLong(at) : nextSize());
    }
  }

  /** Time spent so far waiting for pages to be back from the device. */
  long waitNanos() {
    return waitNanos;
  }

  /** The page holding the current row, or -1 when it is held in a copy. */
  int currentPage() {
    return currentPage;
  }

  /** Moves to the page holding {@link #offset}; a record's length word never crosses pages. */
  private void moveToOffset() {
    while (offset - pageStart >= pageCapacity) {
      pageStart += pageCapacity;
      page++;
      pageCapacity = RowPages.capacityBytes(rows.page(page));
      pageAddress = rows.page(page).address();
    }
    if (offset >= arrived) {
      await(offset + RowStore.RECORD_HEADER_BYTES);
    }
  }

  /** Waits for the stream up to {@code end}, a page at a time. */
  private void await(long end) {
    long pageEnd = pageStart + pageCapacity;
    long wanted = Math.min(totalBytes, Math.max(end, pageEnd));
    long start = System.nanoTime();
    arrival.await(wanted);
    waitNanos += System.nanoTime() - start;
    arrived = wanted;
    // Once every page is back, the device memory goes back too, however slowly the rest is read.
    arrival.poll();
  }

  /**
   * Copies a row of {@code size} bytes that starts at {@code address}, {@code inPage} bytes of it
   * in this page.
   */
  private void copyAcrossPages(long address, long inPage, int size) {
    if (scratch.length < size) {
      scratch = new byte[Math.max(size, 2 * scratch.length)];
    }
    HostMemory.copy(null, address, scratch, HostMemory.BYTE_ARRAY_OFFSET, inPage);
    long copied = inPage;
    int p = page;
    while (copied < size) {
      p++;
      long length = Math.min(size - copied, RowPages.capacityBytes(rows.page(p)));
      HostMemory.copy(null, rows.page(p).address(), scratch, HostMemory.BYTE_ARRAY_OFFSET + copied,
          length);
      copied += length;
    }
  }
}
