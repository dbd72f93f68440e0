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
 */
final class SortedStream {
  private final RowStore rows;
  private final long totalBytes;
  /** The page holding {@link #offset}, and where it starts in the stream. */
  private int page;
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

  SortedStream(RowStore rows, long totalBytes, RowArrival arrival) {
    this.rows = rows;
    this.totalBytes = totalBytes;
    this.arrival = arrival == null ? RowArrival.DONE : arrival;
    this.pageCapacity = rows.numPages() == 0 ? 0 : RowPages.capacityBytes(rows.page(0));
  }

  /** Points {@code row} at the next record; false after the last. */
  boolean next(UnsafeRow row) {
    if (offset >= totalBytes) {
      return false;
    }
    moveToOffset();
    long at = rows.page(page).address() + (offset - pageStart);
    int size = (int) HostMemory.getLong(at);
    long inPage = pageCapacity - (offset - pageStart) - RowStore.RECORD_HEADER_BYTES;
    offset += RowStore.RECORD_HEADER_BYTES + size;
    if (offset > arrived) {
      // A record continuing into pages not yet back.
      await(offset);
    }
    if (size <= inPage) {
      currentPage = page;
      row.pointTo(null, at + RowStore.RECORD_HEADER_BYTES, size);
      return true;
    }
    copyAcrossPages(at + RowStore.RECORD_HEADER_BYTES, inPage, size);
    currentPage = -1;
    row.pointTo(scratch, HostMemory.BYTE_ARRAY_OFFSET, size);
    return true;
  }

  /** Skips the next {@code count} records. */
  void skip(long count) {
    for (long i = 0; i < count && offset < totalBytes; i++) {
      moveToOffset();
      long at = rows.page(page).address() + (offset - pageStart);
      offset += RowStore.RECORD_HEADER_BYTES + HostMemory.getLong(at);
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

  /** Copies a row of {@code size} bytes that starts at {@code address}, {@code inPage} bytes of it in this page. */
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
