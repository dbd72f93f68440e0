package io.gpusort.engine.cpu;

/**
 * A split of rows {@code [0, numRows)} into {@code count} contiguous ranges of near-equal size.
 * Every parallel step of one sort uses the same split, so that the per-range digit counts of one
 * step are the write offsets of the next.
 */
final class RowRanges {
  private final int numRows;
  private final int count;

  private RowRanges(int numRows, int count) {
    this.numRows = numRows;
    this.count = count;
  }

  /** Splits {@code numRows} rows into {@code count >= 1} ranges (some empty if rows are few). */
  static RowRanges split(int numRows, int count) {
    if (count < 1) {
      throw new IllegalArgumentException("range count must be positive: " + count);
    }
    return new RowRanges(numRows, count);
  }

  int numRows() {
    return numRows;
  }

  int count() {
    return count;
  }

  /** First row of range {@code range}; computed in long so that it cannot overflow near MAX_ROWS. */
  int start(int range) {
    return (int) ((long) numRows * range / count);
  }

  /** One past the last row of range {@code range}. */
  int end(int range) {
    return start(range + 1);
  }
}
