package io.gpusort.sql;

/**
 * Times a sample of the rows of a per-row stage (intake, output), where reading the clock for
 * every row would cost more than the row: one row in {@link #DENSE_SAMPLE_ROWS} of a stage's
 * first {@link #DENSE_ROWS} rows, so that a small task still gets an estimate, and one in {@link
 * #SAMPLE_ROWS} after. Each sample counts for as many rows as it stands for, and has the clock's
 * own cost taken off (the least time between two readings, measured once), so that the estimate
 * is of the work and not of the timing.
 *
 * <p>The clock is read twice a sample, and a read is not free (about 30 ns on the 2-core VM, 46-49
 * ns with 1 to 16 threads on a lent H100 host). With one row in 64 timed throughout, flight
 * recordings of sorts of 1e8 cached rows on a lent H100 host put 35-51% of the task threads'
 * samples during the sorts in the output's timing branch (2026-12-06); at one in 1,024 a sort of
 * 1e8 cached rows took 0.543 s where one timing one row in 64 took 0.625 s (2026-12-07).
 */
final class SampledTimer {
  /** Rows at the start of a stage sampled densely. */
  static final long DENSE_ROWS = 1L << 16;
  /** One row in this many is timed among the first {@link #DENSE_ROWS}. */
  static final int DENSE_SAMPLE_ROWS = 64;
  /** The system property that sets {@link #SAMPLE_ROWS} (a power of two; a diagnostic). */
  static final String SAMPLE_ROWS_PROPERTY = "gpusort.timer.sampleRows";
  /** One row in this many is timed after the first {@link #DENSE_ROWS}. */
  static final int SAMPLE_ROWS = Math.max(DENSE_SAMPLE_ROWS,
      Integer.highestOneBit(Math.max(1, Integer.getInteger(SAMPLE_ROWS_PROPERTY, 1024))));
  private static final int DENSE_SHIFT = Integer.numberOfTrailingZeros(DENSE_SAMPLE_ROWS);
  private static final int SAMPLE_SHIFT = Integer.numberOfTrailingZeros(SAMPLE_ROWS);
  /** The least time between two clock readings: the cost a sample adds by itself. */
  private static final long CLOCK_NANOS = clockNanos();

  private long estimateNanos;

  private static long clockNanos() {
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 10_000; i++) {
      long start = System.nanoTime();
      least = Math.min(least, System.nanoTime() - start);
    }
    return least;
  }

  /**
   * Whether row {@code count} (counting from 1) is one of the timed ones, picked by a
   * multiplicative hash of the count rather than every so many rows, so that work done every so
   * many rows (a page or block boundary, a power of two apart) is timed as often as any other row
   * instead of always or never. A row timed at the sparse rate is also timed at the dense one.
   */
  static boolean sampled(long count) {
    int shift = count <= DENSE_ROWS ? DENSE_SHIFT : SAMPLE_SHIFT;
    return (count * 0x9E3779B97F4A7C15L) >>> (64 - shift) == 0;
  }

  /** How many rows the sample of row {@code count} stands for. */
  static int weight(long count) {
    return count <= DENSE_ROWS ? DENSE_SAMPLE_ROWS : SAMPLE_ROWS;
  }

  /** Adds the sample of row {@code count}, which started at {@code startNanos} and ends now. */
  void add(long startNanos, long count) {
    estimateNanos += weight(count) * Math.max(0, System.nanoTime() - startNanos - CLOCK_NANOS);
  }

  /** The estimate for all rows: each sample scaled up by the rows it stands for. */
  long estimateNanos() {
    return estimateNanos;
  }
}
