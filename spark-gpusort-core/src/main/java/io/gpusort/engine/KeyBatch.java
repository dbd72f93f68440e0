package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;

/**
 * Encoded sort keys of {@code numRows} rows, each {@code numWords} 64-bit words compared as one
 * unsigned big-endian number (word 0 most significant). The words are stored column-major in
 * off-heap memory: word {@code w} of row {@code r} is the long at byte offset
 * {@code (w * numRows + r) * 8}, so that an engine can upload or sort one word column at a time.
 *
 * <p>Only the first {@code keyBits} bits of each key are significant; the bits after them are zero
 * for every row, so an engine may ignore them. A batch does not own its buffer.
 */
public final class KeyBatch {
  /** The most rows one batch can hold: row indices are 32-bit. */
  public static final int MAX_ROWS = Integer.MAX_VALUE - 8;

  private final HostBuffer words;
  private final int numRows;
  private final int numWords;
  private final int keyBits;

  public KeyBatch(HostBuffer words, int numRows, int numWords, int keyBits) {
    if (numRows < 0 || numRows > MAX_ROWS) {
      throw new IllegalArgumentException("numRows out of range: " + numRows);
    }
    if (numWords < 1 || keyBits < 0 || keyBits > 64 * numWords) {
      throw new IllegalArgumentException("bad key shape: numWords=" + numWords + " keyBits=" + keyBits);
    }
    if (words.sizeBytes() < requiredBytes(numRows, numWords)) {
      throw new IllegalArgumentException("buffer of " + words.sizeBytes() + " bytes is too small for "
          + numRows + " rows of " + numWords + " words");
    }
    this.words = words;
    this.numRows = numRows;
    this.numWords = numWords;
    this.keyBits = keyBits;
  }

  /** Bytes needed for {@code numRows} keys of {@code numWords} words. */
  public static long requiredBytes(int numRows, int numWords) {
    return 8L * numRows * numWords;
  }

  public HostBuffer words() {
    return words;
  }

  public int numRows() {
    return numRows;
  }

  public int numWords() {
    return numWords;
  }

  public int keyBits() {
    return keyBits;
  }

  /** Byte offset of word column {@code w} within {@link #words()}. */
  public long columnOffset(int w) {
    return 8L * w * numRows;
  }

  public long word(int row, int w) {
    return words.getLong(8L * ((long) w * numRows + row));
  }

  public void setWord(int row, int w, long value) {
    words.putLong(8L * ((long) w * numRows + row), value);
  }
}
