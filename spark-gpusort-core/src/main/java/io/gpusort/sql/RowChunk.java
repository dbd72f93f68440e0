package io.gpusort.sql;

import java.util.Arrays;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;

/**
 * A stretch of one map task's sorted rows bound for one output partition of a global sort, as the
 * shuffle carries it: the unit of the block a (map task, output partition) pair writes, which is
 * one chunk or several in a row, never a record per row. Each row is its encoded key where the
 * sort ships keys ({@link RowKeys#shipsKeys}: a string or binary key column with
 * {@code global.sendKeys} on, so that the reducer sorts or merges without reading the value
 * again; by default none, the reducer encoding keys from the rows for less than their bytes cost
 * the shuffle), then the row's size in 4 bytes and its bytes, so that a chunk is written to the
 * shuffle in one bulk copy (packed by column where all its rows have one size: see
 * {@link PackedColumns}).
 *
 * <p>Layout, in native byte order (little-endian wherever Spark runs): per row, {@code numWords}
 * key words (0 or the key's words), the row's size as an int, the row's bytes (a multiple of 8;
 * read where they lie, unaligned).
 * A chunk also says whether any of its keys was truncated ({@link #keysExact}), which the reducer
 * needs to know whether equal keys must be compared on their rows.
 */
final class RowChunk {
  /** Bytes a chunk grows to before it is handed on (one row larger than that is a chunk alone). */
  static final int TARGET_BYTES = 1 << 20;
  /** A row's size before its bytes: an int, as Spark's own row serializer writes it. */
  static final int SIZE_BYTES = 4;

  private byte[] bytes;
  private int used;
  private int numRows;
  private final int numWords;
  private boolean keysExact = true;
  /** The size of every row so far, or -1 once two differ (or on the read side, unknown). */
  private int rowSize = -1;

  /**
   * An empty chunk for rows with keys of {@code numWords} words, its buffer sized for about
   * {@code expectedBytes} (it grows past that as needed).
   */
  RowChunk(int numWords, long expectedBytes) {
    this(numWords, new byte[(int) Math.max(4096, Math.min(expectedBytes, TARGET_BYTES + 65536))],
        0, 0, true);
  }

  /** A chunk over {@code used} bytes of {@code bytes} holding {@code numRows} rows (read side). */
  RowChunk(int numWords, byte[] bytes, int used, int numRows, boolean keysExact) {
    this.numWords = numWords;
    this.bytes = bytes;
    this.used = used;
    this.numRows = numRows;
    this.keysExact = keysExact;
  }

  int numRows() {
    return numRows;
  }

  int numWords() {
    return numWords;
  }

  /** Bytes of the chunk's rows and keys. */
  int usedBytes() {
    return used;
  }

  byte[] bytes() {
    return bytes;
  }

  /** Whether every key of the chunk is exact: equal keys then mean rows Spark orders as equal. */
  boolean keysExact() {
    return keysExact;
  }

  /**
   * The size in bytes of every row of this chunk where all have one size (rows of fixed-width
   * columns), else -1; -1 on the read side.
   */
  int uniformRowSize() {
    return rowSize;
  }

  /** Whether the chunk has reached {@link #TARGET_BYTES}. */
  boolean isFull() {
    return used >= TARGET_BYTES;
  }

  /** Bytes one row of {@code rowBytes} takes in a chunk with keys of {@code numWords} words. */
  static long entryBytes(int numWords, int rowBytes) {
    return 8L * numWords + SIZE_BYTES + rowBytes;
  }

  /** Appends {@code row} with its key words, the first {@code numWords} of {@code words}. */
  void add(long[] words, UnsafeRow row) {
    int size = row.getSizeInBytes();
    long entry = entryBytes(numWords, size);
    if (used + entry > bytes.length) {
      grow(entry);
    }
    long at = Platform.BYTE_ARRAY_OFFSET + used;
    for (int w = 0; w < numWords; w++) {
      Platform.putLong(bytes, at + 8L * w, words[w]);
    }
    at += 8L * numWords;
    Platform.putInt(bytes, at, size);
    Platform.copyMemory(row.getBaseObject(), row.getBaseOffset(), bytes, at + SIZE_BYTES, size);
    used += (int) entry;
    rowSize = numRows == 0 || size == rowSize ? size : -1;
    numRows++;
  }

  /** Records that a key of this chunk was truncated. */
  void markKeysInexact() {
    keysExact = false;
  }

  private void grow(long entry) {
    long wanted = Math.max((long) used + entry, Math.min(2L * bytes.length, TARGET_BYTES + entry));
    if (wanted > Integer.MAX_VALUE - 64) {
      throw new IllegalStateException("a row of " + entry + " bytes does not fit a chunk");
    }
    bytes = Arrays.copyOf(bytes, (int) wanted);
  }
}
