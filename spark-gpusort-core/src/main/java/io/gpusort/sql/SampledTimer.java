package io.gpusort.sql;

/**
 * Times one row in {@link #SAMPLE_ROWS} of a per-row stage (intake, output), where reading the
 * clock for every row would cost more than the row. Each sample has the clock's own cost taken
 * off (the least time between two readings, measured once), so that the estimate is of the work
 * and not of the timing.
 */
final class SampledTimer {
  static final int SAMPLE_ROWS = 64;
  /** The least time between two clock readings: the cost a sample adds by itself. */
  private static final long CLOCK_NANOS = clockNanos();

  private long sampledNanos;

  private static long clockNanos() {
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 10_000; i++) {
      long start = System.nanoTime();
      least = Math.min(least, System.nanoTime() - start);
    }
    return least;
  }

  /** Whether row {@code count} (counting from 1) is one of the timed ones. */
  static boolean sampled(long count) {
    return (count & (SAMPLE_ROWS - 1)) == 0;
  }

  /** Adds a sample that started at {@code startNanos} and ends now. */
  void add(long startNanos) {
    sampledNanos += Math.max(0, System.nanoTime() - startNanos - CLOCK_NANOS);
  }

  /** The estimate for all rows: the samples scaled up. */
  long estimateNanos() {
    return sampledNanos * SAMPLE_ROWS;
  }
}
