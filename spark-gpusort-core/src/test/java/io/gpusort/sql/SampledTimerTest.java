package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The sampled stage timers time one row in {@link SampledTimer#SAMPLE_ROWS}, and rows on which
 * periodic work falls (every page, every block: a power of two apart) as often as the others.
 */
class SampledTimerTest {
  @Test
  void oneRowInSampleRowsIsTimedWhateverItsPeriod() {
    long rows = 1L << 22;
    for (int period : new int[] {1, 64, 4096, 65536, 1000}) {
      long sampled = 0;
      long candidates = 0;
      for (long count = period; count <= rows; count += period) {
        candidates++;
        if (SampledTimer.sampled(count)) {
          sampled++;
        }
      }
      double expected = (double) candidates / SampledTimer.SAMPLE_ROWS;
      // Within a fifth of the expected count (about three standard deviations for the sparsest).
      assertTrue(Math.abs(sampled - expected) <= Math.max(2, expected / 5),
          "rows " + period + " apart: " + sampled + " of " + candidates + " timed, expected "
              + expected);
    }
  }
}
