package io.gpusort.spill;

import io.gpusort.memory.HostMemory;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes a sorted run: for each row, in order, its encoded key ({@code numWords} longs) and its
 * bytes (an int size, then the bytes). Nothing marks the end: the reader is told how many records
 * the run has. Numbers are in the machine's byte order: a spill file is read back only by the
 * process that wrote it.
 */
public final class RunWriter implements Closeable {
  /** Bytes gathered before one write to the stream. */
  static final int BUFFER_BYTES = 64 << 10;

  private final OutputStream out;
  private final int numWords;
  private final byte[] buffer;
  private int used;
  private long numRecords;
  private long bytesWritten;
  private boolean closed;

  public RunWriter(OutputStream out, int numWords) {
    this.out = out;
    this.numWords = numWords;
    this.buffer = new byte[Math.max(BUFFER_BYTES, headerBytes(numWords))];
  }

  /** Bytes before a record's row: its key words and its size. */
  static int headerBytes(int numWords) {
    return 8 * numWords + 4;
  }

  /**
   * Appends one record: {@code key[0..numWords)} and the {@code rowSize} bytes at
   * {@code rowOffset} of {@code rowBase} (an array, or null for an off-heap address).
   */
  public void write(long[] key, Object rowBase, long rowOffset, int rowSize) throws IOException {
    write(key, 0, rowBase, rowOffset, rowSize);
  }

  /** As {@link #write(long[], Object, long, int)}, the key at {@code keys[keyFrom..]}. */
  public void write(long[] keys, int keyFrom, Object rowBase, long rowOffset, int rowSize)
      throws IOException {
    int header = headerBytes(numWords);
    if (buffer.length - used < header) {
      flushBuffer();
    }
    long at = HostMemory.BYTE_ARRAY_OFFSET + used;
    for (int w = 0; w < numWords; w++) {
      HostMemory.putLong(buffer, at + 8L * w, keys[keyFrom + w]);
    }
    HostMemory.putInt(buffer, at + 8L * numWords, rowSize);
    used += header;
    int copied = 0;
    while (copied < rowSize) {
      if (used == buffer.length) {
        flushBuffer();
      }
      int n = Math.min(rowSize - copied, buffer.length - used);
      HostMemory.copy(rowBase, rowOffset + copied, buffer, HostMemory.BYTE_ARRAY_OFFSET + used, n);
      used += n;
      copied += n;
    }
    numRecords++;
    bytesWritten += header + rowSize;
  }

  /** Records written so far. */
  public long numRecords() {
    return numRecords;
  }

  /** Bytes of records written so far, before the store's compression. */
  public long bytesWritten() {
    return bytesWritten;
  }

  private void flushBuffer() throws IOException {
    if (used > 0) {
      out.write(buffer, 0, used);
      used = 0;
    }
  }

  /** Writes what is buffered and closes the stream; idempotent. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      flushBuffer();
    } finally {
      out.close();
    }
  }
}
