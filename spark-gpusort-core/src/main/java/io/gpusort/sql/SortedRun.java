package io.gpusort.sql;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.memory.MemoryBlock;

/**
 * A sorted run held in memory: its rows, row index and key columns as the intake stage left them,
 * and the permutation the engine computed. Position {@code i} of the run is its i-th row in
 * sorted order. Everything it holds is counted in the task's {@link SortMemory} until
 * {@link #close} (or {@link #closeKeepingBlockOf}).
 */
final class SortedRun implements AutoCloseable {
  final int numRows;
  private final SortMemory memory;
  private final int numWords;
  private RowStore rows;
  private MemoryBlock pointers;
  private HostBuffer keyWords;
  private HostBuffer permutation;
  /** Counted for the index, the keys and the permutation (the row blocks count themselves). */
  private long indexBytes;

  SortedRun(SortMemory memory, RowStore rows, MemoryBlock pointers, HostBuffer keyWords,
      HostBuffer permutation, int numRows, int numWords, long indexBytes) {
    this.memory = memory;
    this.rows = rows;
    this.pointers = pointers;
    this.keyWords = keyWords;
    this.permutation = permutation;
    this.numRows = numRows;
    this.numWords = numWords;
    this.indexBytes = indexBytes;
  }

  /** Bytes the run holds in the task's memory. */
  long heldBytes() {
    return rows == null ? 0 : indexBytes + rows.heldBytes();
  }

  boolean isOpen() {
    return rows != null;
  }

  /** The row index (arrival order) of position {@code i}. */
  private int rowAt(int i) {
    return HostMemory.getInt(permutation.address() + 4L * i);
  }

  long pointerAt(int i) {
    return Platform.getLong(pointers.getBaseObject(), pointers.getBaseOffset() + 8L * rowAt(i));
  }

  RowStore rows() {
    return rows;
  }

  /**
   * Reads positions {@code [from, from + count)} into the arrays, in one loop whose loads do not
   * depend on each other, so that the CPU overlaps their cache misses (the permutation makes every
   * read random): each row's pointer and size (which brings the row's first bytes into the cache)
   * and, when {@code keys} is not null, its key words ({@code numWords} a row).
   */
  void gather(int from, int count, long[] pointersOut, int[] sizesOut, long[] keys) {
    long permAddress = permutation.address() + 4L * from;
    Object pointerBase = pointers.getBaseObject();
    long pointerOffset = pointers.getBaseOffset();
    for (int j = 0; j < count; j++) {
      long pointer = Platform.getLong(pointerBase,
          pointerOffset + 8L * HostMemory.getInt(permAddress + 4L * j));
      pointersOut[j] = pointer;
      sizesOut[j] = rows.size(pointer);
    }
    if (keys != null) {
      long keyBase = keyWords.address();
      for (int j = 0; j < count; j++) {
        long row = HostMemory.getInt(permAddress + 4L * j);
        for (int w = 0; w < numWords; w++) {
          keys[j * numWords + w] = HostMemory.getLong(keyBase + 8L * (w * (long) numRows + row));
        }
      }
    }
  }

  /**
   * Frees everything but the row block of position {@code i} (nothing kept when {@code i < 0}),
   * which is returned still counted, for a caller that still hands out that row.
   */
  MemoryBlock closeKeepingBlockOf(int i) {
    if (rows == null) {
      return null;
    }
    int keep = i < 0 ? -1 : RowStore.blockIndex(pointerAt(i));
    MemoryBlock kept = rows.freeAllBut(keep);
    rows = null;
    memory.freeReserved(pointers);
    pointers = null;
    keyWords.close();
    keyWords = null;
    permutation.close();
    permutation = null;
    memory.unreserve(indexBytes);
    indexBytes = 0;
    return kept;
  }

  /** Frees the run; idempotent. */
  @Override
  public void close() {
    closeKeepingBlockOf(-1);
  }
}
