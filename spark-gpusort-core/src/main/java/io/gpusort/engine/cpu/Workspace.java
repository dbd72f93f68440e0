package io.gpusort.engine.cpu;

import io.gpusort.engine.EngineException;

/**
 * The working arrays of one sort, allocated on first use: two ping-pong arrays of 64-bit values
 * (keys or packed values) and two of 32-bit row indices, {@link #MAX_BYTES_PER_ROW} bytes per row
 * at most. They are on the Java heap because the JVM reuses heap pages from one sort to the next,
 * whereas fresh off-heap memory pays a page fault per 4 KiB on first touch, which measured several
 * times slower than the whole sort on small virtual machines.
 */
final class Workspace {
  /** Two arrays of 8 bytes and two of 4 bytes per row. */
  static final long MAX_BYTES_PER_ROW = 2 * 8 + 2 * 4;

  private final int numRows;
  private final long[][] values = new long[2][];
  private final int[][] rows = new int[2][];

  Workspace(int numRows) {
    this.numRows = numRows;
  }

  /** A values array other than {@code inUse} (which may be null). */
  long[] valuesOtherThan(long[] inUse) {
    int index = values[0] != null && values[0] == inUse ? 1 : 0;
    if (values[index] == null) {
      values[index] = allocateLongs();
    }
    return values[index];
  }

  /** A row-index array other than {@code inUse} (which may be null). */
  int[] rowsOtherThan(int[] inUse) {
    int index = rows[0] != null && rows[0] == inUse ? 1 : 0;
    if (rows[index] == null) {
      rows[index] = allocateInts();
    }
    return rows[index];
  }

  private long[] allocateLongs() {
    try {
      return new long[numRows];
    } catch (OutOfMemoryError e) {
      throw outOfMemory(8L * numRows, e);
    }
  }

  private int[] allocateInts() {
    try {
      return new int[numRows];
    } catch (OutOfMemoryError e) {
      throw outOfMemory(4L * numRows, e);
    }
  }

  private EngineException outOfMemory(long sizeBytes, OutOfMemoryError e) {
    return new EngineException("cpu sort of " + numRows + " rows: cannot allocate " + sizeBytes
        + " bytes of working memory on the Java heap", e);
  }
}
