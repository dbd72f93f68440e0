package io.gpusort.sql;

import io.gpusort.memory.HostMemory;
import io.gpusort.spill.RunReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

/** A cursor over a spilled run; the file is deleted once read to its end or closed. */
final class FileRunCursor implements RowCursor {
  private final FileRun run;
  private final UnsafeRow row;
  private RunReader reader;
  private boolean closed;

  FileRunCursor(FileRun run, int numFields) {
    this.run = run;
    this.row = new UnsafeRow(numFields);
  }

  @Override
  public boolean advance() {
    if (closed) {
      return false;
    }
    try {
      if (reader == null) {
        reader = run.open();
      }
      if (!reader.next()) {
        close();
        return false;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading a spilled run of " + run.numRows() + " rows", e);
    }
    row.pointTo(reader.rowBytes(), HostMemory.BYTE_ARRAY_OFFSET, reader.rowSize());
    return true;
  }

  @Override
  public UnsafeRow row() {
    return row;
  }

  @Override
  public long keyWord(int w) {
    return reader.keyWord(w);
  }

  /** The current row's key words; the array is reused. */
  long[] key() {
    return reader.key();
  }

  @Override
  public long numRows() {
    return run.numRows();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (reader != null) {
        reader.close();
      }
    } catch (IOException e) {
      // The run is being discarded; a failed close of its stream changes nothing.
    } finally {
      run.file().delete();
    }
  }
}
