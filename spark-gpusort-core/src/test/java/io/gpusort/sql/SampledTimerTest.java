package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The sampled stage timers time one row in {@link SampledTimer#DENSE_SAMPLE_ROWS} of a stage's
 * first rows and one in {@link SampledTimer#SAMPLE_ROWS} after, and rows on which periodic work
 * falls (every page, every block: a power of two apart) as often as the others; each sample
 * stands for as many rows as it was picked from, so the samples' weights add up to the rows.
 */
class SampledTimerTest {
  @Test
  void rowsAreTimedAtTheirRateWhateverTheirPeriod() {
    long rows = 1L << 22;
    for (int period : new int[] {1, 64, 4096, 65536, 1000}) {
      long sampled = 0;
      double expected = 0;
      for (long count = period; count <= rows; count += period) {
        expected += 1.0 / SampledTimer.weight(count);
        if (SampledTimer.sampled(count)) {
          sampled++;
        }
      }
      // Within a fifth of the expected count (about three standard deviations for the sparsest).
      assertTrue(Math.abs(sampled - expected) <= Math.max(2, expected / 5),
          "rows " + period + " apart: " + sampled + " timed, expected " + expected);
    }
  }

  @Test
  void weightedSamplesAddUpToTheRows() {
    for (long rows : new long[] {3_000, SampledTimer.DENSE_ROWS, 5_000_000}) {
      long weights = 0;
      for (long count = 1; count <= rows; count++) {
        if (SampledTimer.sampled(count)) {
          weights += SampledTimer.weight(count);
        }
      }
      assertTrue(Math.abs(weights - rows) <= Math.max(3L * SampledTimer.SAMPLE_ROWS, rows / 20),
          rows + " rows: samples stand for " + weights);
    }
    // A task of a few thousand rows is timed at the dense rate: its estimate is not zero.
    long timed = 0;
    for (long count = 1; count <= 3_000; count++) {
      timed += SampledTimer.sampled(count) ? 1 : 0;
    }
    assertTrue(timed >= 20, timed + " of 3,000 rows timed");
    assertEquals(SampledTimer.DENSE_SAMPLE_ROWS, SampledTimer.weight(SampledTimer.DENSE_ROWS));
    assertEquals(SampledTimer.SAMPLE_ROWS, SampledTimer.weight(SampledTimer.DENSE_ROWS + 1));
  }
}
