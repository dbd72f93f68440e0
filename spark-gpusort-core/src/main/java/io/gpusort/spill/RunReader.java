package io.gpusort.spill;

import io.gpusort.memory.HostMemory;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads back a run written by {@link RunWriter}, one record at a time, in bounded memory: a read
 * buffer and the largest row seen. The current row is valid until the next {@link #next()}.
 */
public final class RunReader implements Closeable {
  private final InputStream in;
  private final int numWords;
  private final long numRecords;
  private final byte[] buffer;
  private final long[] key;
  private int pos;
  private int limit;
  private byte[] row = new byte[256];
  private int rowSize;
  private long read;
  private boolean closed;

  public RunReader(InputStream in, int numWords, long numRecords) {
    this.in = in;
    this.numWords = numWords;
    this.numRecords = numRecords;
    this.buffer = new byte[Math.max(RunWriter.BUFFER_BYTES, RunWriter.headerBytes(numWords))];
    this.key = new long[numWords];
  }

  /** Moves to the next record; false, and the stream closed, once all were read. */
  public boolean next() throws IOException {
    if (read == numRecords) {
      close();
      return false;
    }
    int header = RunWriter.headerBytes(numWords);
    fill(header);
    long at = HostMemory.BYTE_ARRAY_OFFSET + pos;
    for (int w = 0; w < numWords; w++) {
      key[w] = HostMemory.getLong(buffer, at + 8L * w);
    }
    rowSize = HostMemory.getInt(buffer, at + 8L * numWords);
    pos += header;
    if (rowSize < 0) {
      throw new IOException("corrupt spill file: row size " + rowSize + " at record " + read);
    }
    if (row.length < rowSize) {
      row = Arrays.copyOf(row, Math.max(rowSize, 2 * row.length));
    }
    int fromBuffer = Math.min(rowSize, limit - pos);
    System.arraycopy(buffer, pos, row, 0, fromBuffer);
    pos += fromBuffer;
    readFully(row, fromBuffer, rowSize - fromBuffer);
    read++;
    return true;
  }

  /** The current record's key word {@code w}. */
  public long keyWord(int w) {
    return key[w];
  }

  /** The current record's key words; the array is reused. */
  public long[] key() {
    return key;
  }

  /** The current row's bytes, at {@code [0, rowSize())}; the array may be replaced by next(). */
  public byte[] rowBytes() {
    return row;
  }

  public int rowSize() {
    return rowSize;
  }

  /** Makes at least {@code n} bytes (at most the buffer's size) available at {@code pos}. */
  private void fill(int n) throws IOException {
    if (limit - pos >= n) {
      return;
    }
    int remaining = limit - pos;
    System.arraycopy(buffer, pos, buffer, 0, remaining);
    pos = 0;
    limit = remaining;
    while (limit < n) {
      int got = in.read(buffer, limit, buffer.length - limit);
      if (got < 0) {
        throw new EOFException("spill file ended after " + read + " of " + numRecords
            + " records");
      }
      limit += got;
    }
  }

  private void readFully(byte[] target, int offset, int length) throws IOException {
    int done = 0;
    while (done < length) {
      int got = in.read(target, offset + done, length - done);
      if (got < 0) {
        throw new EOFException("spill file ended inside record " + read + " of " + numRecords);
      }
      done += got;
    }
  }

  /** Closes the stream; idempotent. */
  @Override
  public void close() throws IOException {
    if (!closed) {
      closed = true;
      in.close();
    }
  }
}
