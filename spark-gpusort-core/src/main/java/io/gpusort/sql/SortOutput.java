package io.gpusort.sql;

import io.gpusort.merge.MergeTree;
import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * The output stage of the row path: the sorted rows of one task's sort, read from its runs (in
 * memory and on disk) and merged by key as they are read, with Spark's exact comparison where
 * truncated keys tie. One run is read straight through. The returned row is valid until the next
 * call; the last one is a copy, since everything the sort held is released as it is returned. The
 * stage's time is estimated from a sample of the rows, timed ({@link SampledTimer}).
 */
final class SortOutput implements Iterator<InternalRow> {
  /** Rows between two checks for a killed task. */
  private static final int KILL_CHECK_ROWS = 4096;

  private final RowCursor[] cursors;
  private final Runnable killCheck;
  private final Runnable onExhausted;
  private final MergeTree tree;
  private final SQLMetric outputTime;
  private final SQLMetric outputWaitTime;
  private final long numRows;
  private long remaining;
  private long returned;
  /** The cursor of the row last returned. */
  private int current;
  /** The last row's key words, kept as the cursors are released; null where keys are not read. */
  private final long[] lastKey;
  private boolean exhausted;
  private final SampledTimer timer = new SampledTimer();

  /**
   * Reads {@code cursors} (runs in the order their rows arrived, so that equal keys keep it);
   * runs {@code onExhausted} once the last row is returned. Adds the stage's time to {@code
   * outputTime}, and the part of it spent waiting for rows from a device to {@code
   * outputWaitTime} too. {@code readsKeys}: the cursors read their rows' keys, which {@link
   * #keyWord} hands on.
   */
  SortOutput(List<RowCursor> cursors, RowKeys keys, Runnable killCheck, Runnable onExhausted,
      SQLMetric outputTime, SQLMetric outputWaitTime, boolean readsKeys) {
    this.lastKey = readsKeys ? new long[keys.numWords] : null;
    this.outputTime = outputTime;
    this.outputWaitTime = outputWaitTime;
    this.cursors = cursors.toArray(new RowCursor[0]);
    this.killCheck = killCheck;
    this.onExhausted = onExhausted;
    long rows = 0;
    for (RowCursor c : cursors) {
      rows += c.numRows();
    }
    this.numRows = rows;
    this.remaining = rows;
    this.tree = this.cursors.length > 1 ? new CursorMerge(cursors, keys).tree() : null;
  }

  /** Rows of the output in all, those returned included. */
  long numRows() {
    return numRows;
  }

  @Override
  public boolean hasNext() {
    return remaining > 0;
  }

  @Override
  public InternalRow next() {
    if (remaining == 0) {
      throw new NoSuchElementException();
    }
    if ((++returned & (KILL_CHECK_ROWS - 1)) == 0) {
      killCheck.run();
    }
    if (!SampledTimer.sampled(returned)) {
      return nextRow();
    }
    // A sampled row's wait for its page from the device is taken off its sample: the waits are
    // counted whole (waitNanos), not scaled up with the samples.
    long waitsBefore = waitNanos();
    long start = System.nanoTime();
    InternalRow row = nextRow();
    timer.add(start + (waitNanos() - waitsBefore), returned);
    return row;
  }

  /** The cursors' time so far waiting for rows to be back from a device. */
  private long waitNanos() {
    long sum = 0;
    for (RowCursor c : cursors) {
      sum += c.waitNanos();
    }
    return sum;
  }

  private InternalRow nextRow() {
    UnsafeRow row;
    if (tree == null) {
      if (!cursors[0].advance()) {
        throw new IllegalStateException("a run ended " + remaining + " rows early");
      }
      row = cursors[0].row();
      current = 0;
    } else {
      int s = tree.next();
      if (s < 0) {
        throw new IllegalStateException("the runs ended " + remaining + " rows early");
      }
      row = cursors[s].row();
      current = s;
    }
    remaining--;
    if (remaining == 0) {
      row = row.copy();
      if (lastKey != null) {
        for (int w = 0; w < lastKey.length; w++) {
          lastKey[w] = cursors[current].keyWord(w);
        }
      }
      exhausted = true;
      long waits = waitNanos();
      SortMetrics.add(outputTime, timer.estimateNanos() + waits);
      SortMetrics.add(outputWaitTime, waits);
      onExhausted.run();
    }
    return row;
  }

  /**
   * Word {@code w} of the encoded key of the row last returned, where the cursors read keys (the
   * sort's output was started for that).
   */
  long keyWord(int w) {
    return exhausted ? lastKey[w] : cursors[current].keyWord(w);
  }

  /**
   * Moves the runs still in memory to disk, keeping only the blocks of the rows now being read;
   * returns the bytes freed.
   */
  long spillInMemoryRuns(MemoryRunCursor.RunWriterFn writer) throws IOException {
    long freed = 0;
    for (RowCursor c : cursors) {
      if (c instanceof MemoryRunCursor m && m.inMemory()) {
        freed += m.spillRest(writer);
      }
    }
    return freed;
  }

  /** Releases every run; idempotent. */
  void close() {
    for (RowCursor c : cursors) {
      c.close();
    }
  }
}
