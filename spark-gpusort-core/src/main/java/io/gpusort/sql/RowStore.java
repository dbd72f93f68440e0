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
 *
 * <p>On a GPU engine the rows may be staged instead ({@link #stageThrough}): written into the
 * small buffers of a {@link StagingRing} and sent to the device from there, stretch by stretch,
 * each stretch at its place in its page, which the host does not write. The pointers, the pages'
 * used sizes and the record layout are the same either way; the pages hold the rows once the
 * gather's copy back or {@link io.gpusort.engine.RowUpload#restorePages} has written them.
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
  /** The addresses of {@link #pages} for reads by pointer, or null until asked for. */
  private long[] pageAddresses;
  private long[] usedBytes = new long[8];
  private HostBuffer current;
  private long currentCapacity;
  private long used;
  /** Where the record at offset 0 of the current page would be written: the page or a staging. */
  private long writeBase;
  /** Offset in the current page up to which records may be written at {@link #writeBase}. */
  private long writeLimit;
  /** Offset in the current page where the stretch not yet sent to the device begins. */
  private long stretchStart;
  /** The staging buffer records are written into, or null while they go into the page. */
  private HostBuffer stretch;
  /** Staging buffers the rows go to the device through; null where they go in their pages. */
  private StagingRing ring;
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

  /**
   * From the next page on, writes rows into the staging buffers of {@code ring} and sends them to
   * the device from there, stretch by stretch, leaving the pages for the copy back (before any
   * row is taken in). Pages are no longer handed to the page listener.
   */
  void stageThrough(StagingRing ring) {
    if (current != null) {
      throw new IllegalStateException("staging asked for once rows are in");
    }
    this.ring = ring;
  }

  static long recordBytes(int rowSize) {
    return RECORD_HEADER_BYTES + rowSize;
  }

  /** Makes room for a row of {@code rowSize} bytes; false when the memory was refused. */
  boolean tryMakeRoom(int rowSize) {
    long needed = recordBytes(rowSize);
    if (current != null && writeLimit - used >= needed) {
      return true;
    }
    if (current != null && currentCapacity - used >= needed) {
      // The page has room, the staging buffer not: the stretch goes, the next one begins.
      sendStretch();
      beginStretch(needed);
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
    if (current != null) {
      sendStretch();
      if (listener != null && ring == null) {
        listener.pageFull(current, used);
      }
    }
    pages.add(page);
    pageAddresses = null;
    current = page;
    currentCapacity = RowPages.capacityBytes(page);
    used = 0;
    heldBytes += page.sizeBytes();
    nextPageBytes = Math.min(maxPageBytes, 2 * nextPageBytes);
    beginStretch(needed);
    return true;
  }

  /**
   * Points the writes at a staging buffer for the records from {@link #used} on, or at the page
   * where none is staging (or the record of {@code needed} bytes is larger than one).
   */
  private void beginStretch(long needed) {
    stretchStart = used;
    stretch = ring == null ? null : ring.next(currentCapacity - used, needed);
    if (stretch != null) {
      writeBase = stretch.address() - used;
      writeLimit = used + Math.min(currentCapacity - used, ring.bufferBytes());
    } else {
      writeBase = current.address();
      // A record larger than a staging buffer is written in the page and sent from there alone;
      // where the ring has no buffers, every record is, a stretch a page.
      writeLimit = ring == null || ring.failed() ? currentCapacity : used + needed;
    }
  }

  /**
   * Sends the records written since the stretch began to the device, from the staging buffer
   * (or from the page, where they were written there); where the upload has stopped, copies
   * them into the page and writes the rest of the run in its pages.
   */
  private void sendStretch() {
    long bytes = used - stretchStart;
    if (ring == null || bytes == 0) {
      return;
    }
    HostBuffer source = stretch == null ? current : stretch;
    long sourceOffset = stretch == null ? stretchStart : 0;
    if (!ring.send(current, stretchStart, source, sourceOffset, bytes)) {
      if (stretch != null) {
        HostMemory.copy(stretch.address(), current.address() + stretchStart, bytes);
      }
      stopStaging();
    }
    stretchStart = used;
  }

  /** Writes from here on go into the pages, which then hold every row taken in. */
  private void stopStaging() {
    ring.close();
    ring = null;
    stretch = null;
    if (current != null) {
      writeBase = current.address();
      writeLimit = currentCapacity;
      stretchStart = used;
    }
  }

  /**
   * Sends the last stretch and gives the staging buffers back (once no copy reads them): no row
   * is added after this. The pages hold the rows unless the upload has them ({@link
   * io.gpusort.engine.RowUpload#restorePages}).
   */
  void finishStaging() {
    if (ring != null) {
      sendStretch();
      if (ring != null) {
        stopStaging();
      }
    }
  }

  /** Copies {@code row} into the current page (after {@link #tryMakeRoom}); returns its pointer. */
  long append(UnsafeRow row) {
    return append(row.getBaseObject(), row.getBaseOffset(), row.getSizeInBytes());
  }

  /**
   * Copies the row of {@code size} bytes (a multiple of 8) at {@code from} in {@code base} (null:
   * native memory) into the current page (after {@link #tryMakeRoom}); returns its pointer.
   */
  long append(Object base, long from, int size) {
    long at = writeBase + used;
    HostMemory.putLong(at, size);
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
    return current == null ? 0 : writer.rowsWithin(from, count, writeLimit - used, 0);
  }

  /**
   * Writes rows {@code [from, from + count)} of the batch bound to {@code writer} into the
   * current page, where they fit ({@link #roomFor}); returns the first one's pointer (each of the
   * others follows the record before it).
   */
  long append(ColumnarRowWriter writer, int from, int count) {
    long bytes = writer.write(from, count, writeBase + used);
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

  /**
   * Points {@code target} at a row of {@code size} bytes just written at {@code pointer} in the
   * current page, where it was written (a staging buffer, perhaps): valid until the next
   * {@link #tryMakeRoom}.
   */
  void pointToWritten(UnsafeRow target, long pointer, int size) {
    target.pointTo(null, writeBase + RowPages.offsetOf(pointer) + RECORD_HEADER_BYTES, size);
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

  /**
   * The sizes of the rows at {@code pointers[0, count)} into {@code sizesOut}: a loop with no
   * work but the reads, so that the reads of rows far apart (a run read in sorted order) are in
   * flight together, and the row's first bytes are in the cache when it is copied next.
   */
  void sizes(long[] pointers, int count, int[] sizesOut) {
    long[] bases = pageAddresses();
    for (int j = 0; j < count; j++) {
      long pointer = pointers[j];
      sizesOut[j] = (int) HostMemory.getLong(bases[RowPages.pageOf(pointer)]
          + RowPages.offsetOf(pointer));
    }
  }

  /** The pages' addresses, in order: made again once pages have been added or freed. */
  private long[] pageAddresses() {
    long[] bases = pageAddresses;
    if (bases == null) {
      bases = new long[pages.size()];
      for (int k = 0; k < bases.length; k++) {
        bases[k] = pages.get(k).address();
      }
      pageAddresses = bases;
    }
    return bases;
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
    if (ring != null) {
      ring.close();
      ring = null;
      stretch = null;
    }
    HostBuffer kept = null;
    for (int i = 0; i < pages.size(); i++) {
      if (i == keep) {
        kept = pages.get(i);
      } else {
        memory.releaseNative(pages.get(i));
      }
    }
    pages.clear();
    pageAddresses = null;
    current = null;
    writeBase = 0;
    writeLimit = 0;
    currentCapacity = 0;
    used = 0;
    heldBytes = 0;
    dataBytes = 0;
    minRecordBytes = Integer.MAX_VALUE;
    maxRecordBytes = 0;
    return kept;
  }
}
