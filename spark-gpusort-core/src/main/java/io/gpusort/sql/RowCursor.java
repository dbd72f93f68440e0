package io.gpusort.sql;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

/**
 * A position in a sorted run, in memory or on disk, for the output stage: after
 * {@link #advance()} returns true, {@link #row()} and {@link #keyWord} describe the current row,
 * valid until the next {@code advance()}.
 */
interface RowCursor extends AutoCloseable {
  /** Moves to the next row; false when the run is exhausted (its resources are then released). */
  boolean advance();

  UnsafeRow row();

  /** Word {@code w} of the current row's encoded key. */
  long keyWord(int w);

  /** Rows of the run in all, the current one and those before it included. */
  long numRows();

  /** Time spent so far waiting for rows to be back from a device (readable after close). */
  default long waitNanos() {
    return 0;
  }

  /** Releases what the cursor holds; idempotent. */
  @Override
  void close();
}
