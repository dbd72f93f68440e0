package io.gpusort.sql;

import io.gpusort.memory.HostBuffer;
import java.io.IOException;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

/**
 * A cursor over a sorted run in memory that can move the rest of its run to disk while the output
 * is being read ({@link #spillRest}), when another consumer of the task needs the memory. The
 * current row stays valid across that move: the page holding it is kept until the next
 * {@link #advance()}, as Spark's sorter keeps its last page.
 */
final class MemoryRunCursor implements RowCursor {
  /** Writes positions {@code [from, run.numRows)} of a run to a new spill file. */
  @FunctionalInterface
  interface RunWriterFn {
    FileRun write(SortedRun run, int from) throws IOException;
  }

  /** Rows read ahead from the run at once, so that their random reads overlap. */
  private static final int BATCH_ROWS = 128;

  private final SortedRun run;
  private final SortMemory memory;
  private final UnsafeRow row;
  private final int numFields;
  private final int numWords;
  private final long[] pointerBatch = new long[BATCH_ROWS];
  private final int[] sizeBatch = new int[BATCH_ROWS];
  /** Key words of the batch's rows, when a merge compares keys; null when nothing reads keys. */
  private final long[] keyBatch;
  /** The rows of an ordered run, read front to back; null for a run read through its permutation. */
  private final SortedStream stream;
  private int batchStart;
  private int batchEnd;
  private int position = -1;
  /** The rest of the run once spilled; rows come from it after the current one. */
  private FileRunCursor rest;
  private boolean onRest;
  private HostBuffer keptPage;

  MemoryRunCursor(SortedRun run, SortMemory memory, int numFields, int numWords,
      boolean readsKeys) {
    this.run = run;
    this.memory = memory;
    this.numFields = numFields;
    this.numWords = numWords;
    this.row = new UnsafeRow(numFields);
    this.keyBatch = readsKeys ? new long[BATCH_ROWS * numWords] : null;
    this.stream = run.ordered ? run.stream(0) : null;
  }

  @Override
  public boolean advance() {
    releaseKeptPage();
    if (rest != null) {
      onRest = rest.advance();
      return onRest;
    }
    if (position + 1 >= run.numRows) {
      position = run.numRows;
      run.close();
      return false;
    }
    position++;
    if (stream != null) {
      if (keyBatch != null && position >= batchEnd) {
        batchStart = position;
        batchEnd = Math.min(run.numRows, position + BATCH_ROWS);
        run.gatherKeys(batchStart, batchEnd - batchStart, keyBatch);
      }
      if (!stream.next(row)) {
        throw new IllegalStateException("an ordered run ended at row " + position + " of "
            + run.numRows);
      }
      return true;
    }
    if (position >= batchEnd) {
      batchStart = position;
      batchEnd = Math.min(run.numRows, position + BATCH_ROWS);
      run.gather(batchStart, batchEnd - batchStart, pointerBatch, sizeBatch, keyBatch);
    }
    int j = position - batchStart;
    run.rows().pointTo(row, pointerBatch[j], sizeBatch[j]);
    return true;
  }

  @Override
  public UnsafeRow row() {
    return onRest ? rest.row() : row;
  }

  @Override
  public long keyWord(int w) {
    return onRest ? rest.keyWord(w) : keyBatch[(position - batchStart) * numWords + w];
  }

  @Override
  public long numRows() {
    return run.numRows;
  }

  /**
   * Writes the rows after the current one to disk and frees the run but for the current row's
   * page; returns the bytes freed now (the kept page's are freed at the next advance).
   */
  long spillRest(RunWriterFn writer) throws IOException {
    if (!run.isOpen() || rest != null) {
      return 0;
    }
    long before = run.heldBytes();
    int from = position + 1;
    if (from < run.numRows) {
      rest = new FileRunCursor(writer.write(run, from), numFields);
    } else {
      rest = null;
    }
    boolean inRun = position >= 0 && position < run.numRows;
    int keep = !inRun ? -1 : stream != null ? stream.currentPage() : run.pageOf(position);
    keptPage = run.closeKeepingPage(keep);
    if (rest == null) {
      // Nothing after the current row: the next advance ends the run.
      position = run.numRows - 1;
    }
    return before - (keptPage == null ? 0 : keptPage.sizeBytes());
  }

  /** Whether the run is still in memory (not spilled, not exhausted). */
  boolean inMemory() {
    return run.isOpen();
  }

  private void releaseKeptPage() {
    if (keptPage != null) {
      memory.releaseNative(keptPage);
      keptPage = null;
    }
  }

  @Override
  public long waitNanos() {
    return stream == null ? 0 : stream.waitNanos();
  }

  @Override
  public void close() {
    releaseKeptPage();
    run.close();
    if (rest != null) {
      rest.close();
    }
  }
}
