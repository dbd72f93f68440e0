package io.gpusort.sql;

import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;

/**
 * The rows of one run, copied as {@link UnsafeRow} bytes into pages of native memory (page-locked
 * once a GPU engine runs, so that they go to the device without another copy), counted in the
 * task's {@link SortMemory}. Each record is the row's size in 8 bytes, then its bytes (the layout
 * of {@link RowPages}); a row is named by a pointer, its page's index in the upper 24 bits and its
 * offset in the lower 40, and read by pointing a reused {@code UnsafeRow} at it.
 *
 * <p>Pages start small and double up to {@code maxPageBytes}, so that a small partition holds
 * little and a large one few pages; a row larger than that gets a page of its own.
 */
final class RowStore {
  static final int RECORD_HEADER_BYTES = RowPages.RECORD_HEADER_BYTES;
  /**
   * Rows up to this size are copied word by word, larger ones by {@code Unsafe.copyMemory}. On the
   * H200 host the bulk copy is the faster already at 136 bytes (16 threads copying rows into
   * pages: 40 ns a row against 46 for the word loop; 256 bytes: 69 against 80), though not on the
   * 2-core machine ({@code RowCopyBenchmark}).
   */
  private static final int SMALL_ROW_BYTES = 64;
  /** The first page's size (or {@code maxPageBytes} when smaller). */
  static final long FIRST_PAGE_BYTES = 64L << 10;

  private final SortMemory memory;
  private final long maxPageBytes;
  private final List<HostBuffer> pages = new ArrayList<>();
  private long[] usedBytes = new long[8];
  private HostBuffer current;
  private long currentAddress;
  private long currentCapacity;
  private long used;
  private long heldBytes;
  private long dataBytes;
  private long nextPageBytes;
  private int minRecordBytes = Integer.MAX_VALUE;
  private int maxRecordBytes;
  /** Told of each page once it is full and the next one begins; null when nobody listens. */
  private PageListener listener;

  /** Told of each page that is complete: no record will be added to it. */
  @FunctionalInterface
  interface PageListener {
    void pageFull(HostBuffer page, long usedBytes);
  }

  /** Rows go into pages of at most {@code maxPageBytes}, or of one record when a row is larger. */
  RowStore(SortMemory memory, long maxPageBytes) {
    this.memory = memory;
    this.maxPageBytes = maxPageBytes;
    this.nextPageBytes = Math.min(FIRST_PAGE_BYTES, maxPageBytes);
  }

  /** Tells {@code listener} of each page from now on once it is full; null stops that. */
  void onPageFull(PageListener listener) {
    this.listener = listener;
  }

  static long recordBytes(int rowSize) {
    return RECORD_HEADER_BYTES + rowSize;
  }

  /** Makes room for a row of {@code rowSize} bytes; false when the memory was refused. */
  boolean tryMakeRoom(int rowSize) {
    long needed = recordBytes(rowSize);
    if (current != null && currentCapacity - used >= needed) {
      return true;
    }
    if (pages.size() >= 1 << (64 - RowPages.OFFSET_BITS - 1)) {
      throw new IllegalStateException("a run of " + pages.size() + " pages is full");
    }
    HostBuffer page = memory.tryAcquireNative(Math.max(nextPageBytes, needed));
    if (page == null) {
      return false;
    }
    if (pages.size() == usedBytes.length) {
      usedBytes = Arrays.copyOf(usedBytes, 2 * usedBytes.length);
    }
    if (current != null && listener != null) {
      listener.pageFull(current, used);
    }
    pages.add(page);
    current = page;
    currentAddress = page.address();
    currentCapacity = RowPages.capacityBytes(page);
    used = 0;
    heldBytes += page.sizeBytes();
    nextPageBytes = Math.min(maxPageBytes, 2 * nextPageBytes);
    return true;
  }

  /** Copies {@code row} into the current page (after {@link #tryMakeRoom}); returns its pointer. */
  long append(UnsafeRow row) {
    int size = row.getSizeInBytes();
    long at = currentAddress + used;
    HostMemory.putLong(at, size);
    Object base = row.getBaseObject();
    long from = row.getBaseOffset();
    if (size <= SMALL_ROW_BYTES) {
      // UnsafeRow sizes are multiples of 8: word copies beat a bulk copy's set-up for small rows.
      for (int k = 0; k < size; k += 8) {
        HostMemory.putLong(at + RECORD_HEADER_BYTES + k, Platform.getLong(base, from + k));
      }
    } else {
      Platform.copyMemory(base, from, null, at + RECORD_HEADER_BYTES, size);
    }
    int record = RECORD_HEADER_BYTES + size;
    return appended(record, record, record);
  }

  /**
   * How many rows from {@code from} of the batch bound to {@code writer}, at most {@code count},
   * still fit the current page.
   */
  int roomFor(ColumnarRowWriter writer, int from, int count) {
    return current == null ? 0 : writer.rowsWithin(from, count, currentCapacity - used, 0);
  }

  /**
   * Writes rows {@code [from, from + count)} of the batch bound to {@code writer} into the
   * current page, where they fit ({@link #roomFor}); returns the first one's pointer (each of the
   * others follows the record before it).
   */
  long append(ColumnarRowWriter writer, int from, int count) {
    long bytes = writer.write(from, count, currentAddress + used);
    return appended(bytes, recordBytes(writer.minRowBytes(from, count)),
        recordBytes(writer.maxRowBytes(from, count)));
  }

  /**
   * Counts {@code bytes} of records, of {@code minRecord} to {@code maxRecord} bytes each, just
   * written at the current position; returns the first one's pointer.
   */
  private long appended(long bytes, long minRecord, long maxRecord) {
    long pointer = RowPages.pointer(pages.size() - 1, used);
    used += bytes;
    usedBytes[pages.size() - 1] = used;
    dataBytes += bytes;
    minRecordBytes = (int) Math.min(minRecordBytes, minRecord);
    maxRecordBytes = (int) Math.max(maxRecordBytes, maxRecord);
    return pointer;
  }

  /** Points {@code target} at the row of {@code pointer}; valid while its page is held. */
  void pointTo(UnsafeRow target, long pointer) {
    long at = pages.get(RowPages.pageOf(pointer)).address() + RowPages.offsetOf(pointer);
    target.pointTo(null, at + RECORD_HEADER_BYTES, (int) HostMemory.getLong(at));
  }

  /** As {@link #pointTo(UnsafeRow, long)}, with the row's size already known. */
  void pointTo(UnsafeRow target, long pointer, int size) {
    target.pointTo(null, address(pointer), size);
  }

  /** The address of the row's bytes. */
  long address(long pointer) {
    return pages.get(RowPages.pageOf(pointer)).address() + RowPages.offsetOf(pointer)
        + RECORD_HEADER_BYTES;
  }

  int size(long pointer) {
    return (int) HostMemory.getLong(
        pages.get(RowPages.pageOf(pointer)).address() + RowPages.offsetOf(pointer));
  }

  /** The pages as an engine reads them, with the row index {@code pointers} of {@code n} rows. */
  RowPages asPages(HostBuffer pointers, int n) {
    return new RowPages(pages, Arrays.copyOf(usedBytes, pages.size()), pointers, n, dataBytes,
        fixedRecordBytes());
  }

  /** Bytes of records at the start of page {@code k}, as the intake left them. */
  long usedBytes(int k) {
    return usedBytes[k];
  }

  /** The size of every record when they all have one size, else 0. */
  int fixedRecordBytes() {
    return minRecordBytes == maxRecordBytes ? maxRecordBytes : 0;
  }

  HostBuffer page(int k) {
    return pages.get(k);
  }

  int numPages() {
    return pages.size();
  }

  /** Bytes of the records appended (rows and their headers). */
  long dataBytes() {
    return dataBytes;
  }

  /** Bytes of pages held. */
  long heldBytes() {
    return heldBytes;
  }

  /**
   * Frees every page but page {@code keep} (none when negative), which is returned, still counted:
   * the caller frees it with {@link SortMemory#releaseNative} once no row points into it.
   */
  HostBuffer freeAllBut(int keep) {
    HostBuffer kept = null;
    for (int i = 0; i < pages.size(); i++) {
      if (i == keep) {
        kept = pages.get(i);
      } else {
        memory.releaseNative(pages.get(i));
      }
    }
    pages.clear();
    current = null;
    currentAddress = 0;
    currentCapacity = 0;
    used = 0;
    heldBytes = 0;
    dataBytes = 0;
    minRecordBytes = Integer.MAX_VALUE;
    maxRecordBytes = 0;
    return kept;
  }
}
