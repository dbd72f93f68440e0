package io.gpusort.engine.cpu;

import io.gpusort.engine.EngineException;
import java.lang.ref.SoftReference;

/**
 * The working arrays of one sort, allocated on first use: two ping-pong arrays of 64-bit values
 * (keys or packed values) and two of 32-bit row indices, {@link #MAX_BYTES_PER_ROW} bytes per row
 * at most. They are on the Java heap because the JVM reuses heap pages from one sort to the next,
 * whereas fresh off-heap memory pays a page fault per 4 KiB on first touch, which measured several
 * times slower than the whole sort on small virtual machines.
 *
 * <p>A thread keeps the arrays of its last sort, softly referenced, for its next one ({@link
 * #release}): a partition's arrays are tens of megabytes, which the JVM would otherwise zero for
 * every sort and place as humongous objects, each allocation a reason for a collection. The
 * arrays may be longer than the sort's rows; only the first {@code numRows} are used. The collector
 * clears kept arrays before the heap runs out.
 */
final class Workspace {
  /** Two arrays of 8 bytes and two of 4 bytes per row. */
  static final long MAX_BYTES_PER_ROW = 2 * 8 + 2 * 4;

  /** The workspace of this thread's last sort, whose arrays the next one may take. */
  private static final ThreadLocal<SoftReference<Workspace>> KEPT = new ThreadLocal<>();

  private final int numRows;
  private final long[][] values = new long[2][];
  private final int[][] rows = new int[2][];
  /** The workspace of an earlier sort on this thread, its arrays taken as they are needed. */
  private Workspace kept;

  Workspace(int numRows) {
    this.numRows = numRows;
    SoftReference<Workspace> ref = KEPT.get();
    KEPT.remove();
    this.kept = ref == null ? null : ref.get();
  }

  /** A values array other than {@code inUse} (which may be null). */
  long[] valuesOtherThan(long[] inUse) {
    int index = values[0] != null && values[0] == inUse ? 1 : 0;
    if (values[index] == null) {
      long[] old = kept == null ? null : kept.values[index];
      values[index] = old != null && old.length >= numRows ? old : allocateLongs();
    }
    return values[index];
  }

  /** A row-index array other than {@code inUse} (which may be null). */
  int[] rowsOtherThan(int[] inUse) {
    int index = rows[0] != null && rows[0] == inUse ? 1 : 0;
    if (rows[index] == null) {
      int[] old = kept == null ? null : kept.rows[index];
      rows[index] = old != null && old.length >= numRows ? old : allocateInts();
    }
    return rows[index];
  }

  /**
   * Keeps this workspace, with the arrays it did not need of the earlier one's, for the thread's
   * next sort; the sort reads none of them any more.
   */
  void release() {
    if (kept != null) {
      for (int i = 0; i < 2; i++) {
        values[i] = values[i] != null ? values[i] : kept.values[i];
        rows[i] = rows[i] != null ? rows[i] : kept.rows[i];
      }
      kept = null;
    }
    KEPT.set(new SoftReference<>(this));
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
