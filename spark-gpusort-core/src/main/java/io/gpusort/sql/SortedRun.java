package io.gpusort.sql;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
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

  void pointTo(UnsafeRow target, int i) {
    rows.pointTo(target, pointerAt(i));
  }

  /** Copies the key of position {@code i} into {@code key}. */
  void copyKey(int i, long[] key) {
    long row = rowAt(i);
    long base = keyWords.address();
    for (int w = 0; w < numWords; w++) {
      key[w] = HostMemory.getLong(base + 8L * (w * (long) numRows + row));
    }
  }

  RowStore rows() {
    return rows;
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
