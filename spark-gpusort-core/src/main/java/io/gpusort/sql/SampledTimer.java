package io.gpusort.sql;

/**
 * Times one row in {@link #SAMPLE_ROWS} of a per-row stage (intake, output), where reading the
 * clock for every row would cost more than the row. Each sample has the clock's own cost taken
 * off (the least time between two readings, measured once), so that the estimate is of the work
 * and not of the timing.
 */
final class SampledTimer {
  static final int SAMPLE_ROWS = 64;
  private static final int SAMPLE_SHIFT = Integer.numberOfTrailingZeros(SAMPLE_ROWS);
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

  /**
   * Whether row {@code count} (counting from 1) is one of the timed ones: one in {@link
   * #SAMPLE_ROWS}, picked by a multiplicative hash of the count rather than every 64th row, so
   * that work done every so many rows (a page or block boundary, a power of two apart) is timed
   * as often as any other row instead of always or never.
   */
  static boolean sampled(long count) {
    return (count * 0x9E3779B97F4A7C15L) >>> (64 - SAMPLE_SHIFT) == 0;
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
