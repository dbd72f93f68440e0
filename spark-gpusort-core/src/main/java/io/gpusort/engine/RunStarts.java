package io.gpusort.engine;

import io.gpusort.memory.HostMemory;

/**
 * Sorted runs within a {@link KeyBatch}, as {@link SortEngine#sortRuns} takes them: the first row
 * of each run, run {@code i} being rows {@code [runStarts[i], runStarts[i + 1])} and the last one
 * ending at {@code keys.numRows()}.
 */
public final class RunStarts {
  private RunStarts() {}

  /**
   * The starts of the maximal non-decreasing stretches of {@code keys}, keys compared as unsigned
   * 64-bit words: a new run wherever a key is smaller than the one before. Correct whatever the
   * order the rows came in (a batch in no order gives about one run per two rows), and the fewest
   * runs any split into sorted runs can have. Null when the keys have more than one significant
   * word ({@code keyBits > 64}) or none, or when there are more than {@code maxRuns} runs
   * (scanning stops there).
   *
   * @return the starts, {@code {0}} for an empty batch, or null
   */
  public static int[] ascending(KeyBatch keys, int maxRuns) {
    if (maxRuns < 1) {
      throw new IllegalArgumentException("maxRuns must be positive: " + maxRuns);
    }
    if (keys.keyBits() == 0 || keys.keyBits() > 64) {
      return null;
    }
    int n = keys.numRows();
    long column = keys.words().address();
    int[] starts = new int[Math.min(maxRuns, 16)];
    int runs = 1;
    long previous = n == 0 ? 0 : HostMemory.getLong(column);
    for (int r = 1; r < n; r++) {
      long key = HostMemory.getLong(column + 8L * r);
      if (Long.compareUnsigned(key, previous) < 0) {
        if (runs == maxRuns) {
          return null;
        }
        if (runs == starts.length) {
          starts = java.util.Arrays.copyOf(starts, (int) Math.min(maxRuns, 2L * runs));
        }
        starts[runs++] = r;
      }
      previous = key;
    }
    return java.util.Arrays.copyOf(starts, runs);
  }

  /**
   * Throws IllegalArgumentException unless {@code runStarts} describes runs of {@code numRows}
   * rows: at least one start, the first 0, none decreasing, none past {@code numRows} (equal
   * starts are empty runs).
   */
  public static void check(int[] runStarts, int numRows) {
    if (runStarts == null || runStarts.length == 0 || runStarts[0] != 0) {
      throw new IllegalArgumentException("run starts must begin with 0");
    }
    for (int i = 1; i < runStarts.length; i++) {
      if (runStarts[i] < runStarts[i - 1] || runStarts[i] > numRows) {
        throw new IllegalArgumentException("run start " + i + " is " + runStarts[i]
            + " after " + runStarts[i - 1] + ", of " + numRows + " rows");
      }
    }
  }

  /** Runs with at least one row. */
  public static int nonEmpty(int[] runStarts, int numRows) {
    int count = 0;
    for (int i = 0; i < runStarts.length; i++) {
      int end = i + 1 < runStarts.length ? runStarts[i + 1] : numRows;
      count += end > runStarts[i] ? 1 : 0;
    }
    return count;
  }
}
