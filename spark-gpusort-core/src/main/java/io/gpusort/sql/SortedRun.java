package io.gpusort.sql;

import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;

/**
 * A sorted run held in memory: its rows, row index and key columns as the intake stage left them,
 * and the permutation the engine computed. Position {@code i} of the run is its i-th row in sorted
 * order. Where the engine put the rows themselves in order ({@link #ordered}), they are read front
 * to back ({@link #stream}), each stretch once it is back from the device; otherwise through the
 * permutation ({@link #gather}). Everything it holds is counted in the task's {@link SortMemory}
 * until {@link #close} (or {@link #closeKeepingPage}).
 */
final class SortedRun implements AutoCloseable {
  final int numRows;
  /** Whether the rows are in sorted order in their pages (the sorted stream of RowPages). */
  final boolean ordered;
  /** An ordered run's sorted stream, possibly still arriving from the device; else null. */
  private RowArrival arrival;
  private final SortMemory memory;
  private final int numWords;
  private final long recordBytes;
  private RowStore rows;
  private HostBuffer pointers;
  private HostBuffer keyWords;
  private HostBuffer permutation;
  /** Counted for the index, the keys and the permutation (the row pages count themselves). */
  private long indexBytes;

  SortedRun(SortMemory memory, RowStore rows, HostBuffer pointers, HostBuffer keyWords,
      HostBuffer permutation, int numRows, int numWords, long indexBytes, RowArrival arrival) {
    this.memory = memory;
    this.rows = rows;
    this.pointers = pointers;
    this.keyWords = keyWords;
    this.permutation = permutation;
    this.numRows = numRows;
    this.numWords = numWords;
    this.indexBytes = indexBytes;
    this.arrival = arrival;
    this.ordered = arrival != null;
    this.recordBytes = rows.dataBytes();
  }

  /** Bytes the run holds in the task's memory. */
  long heldBytes() {
    return rows == null ? 0 : indexBytes + rows.heldBytes();
  }

  boolean isOpen() {
    return rows != null;
  }

  RowStore rows() {
    return rows;
  }

  /** A reader of an {@link #ordered} run's rows from position {@code from}. */
  SortedStream stream(int from) {
    int fixed = rows.fixedRecordBytes();
    SortedStream stream = new SortedStream(rows, recordBytes, arrival, this::sortedRowSizes,
        numRows, fixed == 0 ? 0 : fixed - RowPages.RECORD_HEADER_BYTES);
    stream.skip(from);
    return stream;
  }

  /**
   * The sizes of the rows at positions {@code [from, from + count)}, from the row index alone: the
   * intake wrote each page's records back to back in arrival order, so a row's record ends where
   * the next row's begins when that one is in the same page, else where the page's records end.
   * The loads do not depend on each other (nor on the rows, which the engine may have moved). A
   * run of one row size needs none: its stream is given that size ({@link #stream}).
   */
  void sortedRowSizes(int from, int count, int[] out) {
    long permAddress = permutation.address() + 4L * from;
    long pointerBase = pointers.address();
    int last = numRows - 1;
    for (int j = 0; j < count; j++) {
      int r = HostMemory.getInt(permAddress + 4L * j);
      long pointer = HostMemory.getLong(pointerBase + 8L * r);
      int page = RowPages.pageOf(pointer);
      long end = rows.usedBytes(page);
      if (r < last) {
        long next = HostMemory.getLong(pointerBase + 8L * r + 8);
        if (RowPages.pageOf(next) == page) {
          end = RowPages.offsetOf(next);
        }
      }
      out[j] = (int) (end - RowPages.offsetOf(pointer) - RowPages.RECORD_HEADER_BYTES);
    }
  }

  /** The row index (arrival order) of position {@code i}. */
  private int rowAt(int i) {
    return HostMemory.getInt(permutation.address() + 4L * i);
  }

  long pointerAt(int i) {
    return HostMemory.getLong(pointers.address() + 8L * rowAt(i));
  }

  /**
   * Reads positions {@code [from, from + count)} of a run read through its permutation into the
   * arrays, in one loop whose loads do not depend on each other, so that the CPU overlaps their
   * cache misses (the permutation makes every read random): each row's pointer and size (which
   * brings the row's first bytes into the cache) and, when {@code keys} is not null, its key words.
   */
  void gather(int from, int count, long[] pointersOut, int[] sizesOut, long[] keys) {
    long permAddress = permutation.address() + 4L * from;
    long pointerBase = pointers.address();
    // Two loops: the index's entries first, then the rows' sizes, so that each loop's reads, far
    // apart in memory, do not wait on one another.
    for (int j = 0; j < count; j++) {
      pointersOut[j] =
          HostMemory.getLong(pointerBase + 8L * HostMemory.getInt(permAddress + 4L * j));
    }
    rows.sizes(pointersOut, count, sizesOut);
    if (keys != null) {
      gatherKeys(from, count, keys);
    }
  }

  /** The key words ({@code numWords} a row) of positions {@code [from, from + count)}. */
  void gatherKeys(int from, int count, long[] keys) {
    long permAddress = permutation.address() + 4L * from;
    long keyBase = keyWords.address();
    for (int j = 0; j < count; j++) {
      long row = HostMemory.getInt(permAddress + 4L * j);
      for (int w = 0; w < numWords; w++) {
        keys[j * numWords + w] = HostMemory.getLong(keyBase + 8L * (w * (long) numRows + row));
      }
    }
  }

  /**
   * Frees everything but the row page {@code keep} (nothing kept when negative), which is
   * returned still counted, for a caller that still hands out a row in it.
   */
  HostBuffer closeKeepingPage(int keep) {
    if (rows == null) {
      return null;
    }
    if (arrival != null) {
      RowArrival arriving = arrival;
      arrival = null;
      try {
        // Copies from the device may still be writing the pages.
        arriving.close();
      } catch (RuntimeException e) {
        // The device failed: the pages are freed all the same, and the failure goes on.
        freeKeepingPage(-1);
        throw e;
      }
    }
    return freeKeepingPage(keep);
  }

  /** Gives back, without waiting, what the device holds for rows that are all back. */
  void pollArrival() {
    if (arrival != null) {
      arrival.poll();
    }
  }

  private HostBuffer freeKeepingPage(int keep) {
    if (rows == null) {
      return null;
    }
    HostBuffer kept = rows.freeAllBut(keep);
    rows = null;
    pointers.close();
    pointers = null;
    keyWords.close();
    keyWords = null;
    permutation.close();
    permutation = null;
    memory.unreserve(indexBytes);
    indexBytes = 0;
    return kept;
  }

  /** The page of position {@code i} of a run read through its permutation. */
  int pageOf(int i) {
    return RowPages.pageOf(pointerAt(i));
  }

  /** Frees the run; idempotent. */
  @Override
  public void close() {
    closeKeepingPage(-1);
  }
}
