package io.gpusort.engine.cpu;

import static io.gpusort.engine.cpu.RadixKernels.DIGITS_PER_WORD;
import static io.gpusort.engine.cpu.RadixKernels.DIGIT_BITS;
import static io.gpusort.engine.cpu.RadixKernels.RADIX;

import io.gpusort.engine.KeyBatch;
import java.util.Arrays;

/**
 * The histograms of every significant digit of every key word, per row range, from one read of
 * the keys. They decide which digits need a pass at all (a digit whose values all fall in one
 * bucket does not reorder anything) and give the write offsets of the first pass.
 *
 * <p>Digits wholly after {@code keyBits} are zero by the {@link KeyBatch} contract; they are
 * neither counted nor sorted on.
 */
final class DigitHistograms {
  private final int numRows;
  /** Per word, the lowest digit that holds key bits; {@link RadixKernels#DIGITS_PER_WORD} if none. */
  private final int[] firstSignificantDigit;
  /** [word][range]: 8 * 256 counts (see {@link RadixKernels}); null for words without key bits. */
  private final int[][][] rangeCounts;
  /** [word]: the counts summed over ranges; null for words without key bits. */
  private final int[][] totals;

  private DigitHistograms(int numRows, int[] firstSignificantDigit, int[][][] rangeCounts,
      int[][] totals) {
    this.numRows = numRows;
    this.firstSignificantDigit = firstSignificantDigit;
    this.rangeCounts = rangeCounts;
    this.totals = totals;
  }

  /** Reads every word column of {@code keys} once, the ranges of {@code runner} in parallel. */
  static DigitHistograms compute(KeyBatch keys, RangeRunner runner) {
    int numWords = keys.numWords();
    int numRanges = runner.ranges().count();
    int[] firstDigit = new int[numWords];
    int[][][] rangeCounts = new int[numWords][][];
    for (int w = 0; w < numWords; w++) {
      firstDigit[w] = firstSignificantDigit(keys.keyBits(), w);
      if (firstDigit[w] < DIGITS_PER_WORD) {
        rangeCounts[w] = new int[numRanges][DIGITS_PER_WORD * RADIX];
      }
    }
    long baseAddress = keys.words().address();
    runner.forEachRange("histogram", (range, startRow, endRow) -> {
      for (int w = 0; w < numWords; w++) {
        if (rangeCounts[w] != null) {
          RadixKernels.histogramColumn(baseAddress + keys.columnOffset(w), startRow, endRow,
              firstDigit[w], rangeCounts[w][range]);
        }
      }
    });
    return new DigitHistograms(keys.numRows(), firstDigit, rangeCounts, sumRanges(rangeCounts));
  }

  /**
   * The lowest digit of word {@code word} that holds any of the first {@code keyBits} key bits.
   * Word {@code w} holds key bits {@code [64w, 64w + 64)}, most significant first, so its
   * {@code 64 - significantBits} low bits are padding.
   */
  static int firstSignificantDigit(int keyBits, int word) {
    int significantBits = Math.max(0, Math.min(Long.SIZE, keyBits - Long.SIZE * word));
    int paddingBits = Long.SIZE - significantBits;
    return paddingBits / DIGIT_BITS;
  }

  private static int[][] sumRanges(int[][][] rangeCounts) {
    int[][] totals = new int[rangeCounts.length][];
    for (int w = 0; w < rangeCounts.length; w++) {
      if (rangeCounts[w] == null) {
        continue;
      }
      totals[w] = new int[DIGITS_PER_WORD * RADIX];
      for (int[] counts : rangeCounts[w]) {
        for (int i = 0; i < counts.length; i++) {
          totals[w][i] += counts[i];
        }
      }
    }
    return totals;
  }

  /**
   * The digits of word {@code word} that need a pass, least significant first: those with key
   * bits whose values are not all in one bucket. Empty if the word never reorders rows.
   */
  int[] activeDigits(int word) {
    int[] digits = new int[DIGITS_PER_WORD];
    int count = 0;
    for (int d = firstSignificantDigit[word]; d < DIGITS_PER_WORD; d++) {
      if (!isConstant(word, d)) {
        digits[count++] = d;
      }
    }
    return Arrays.copyOf(digits, count);
  }

  private boolean isConstant(int word, int digit) {
    int base = digit * RADIX;
    for (int b = 0; b < RADIX; b++) {
      int count = totals[word][base + b];
      if (count != 0) {
        return count == numRows;
      }
    }
    return true;
  }

  /** Per-range counts of word {@code word}: digit {@code d} of range {@code r} at {@code [r][256 * d]}. */
  int[][] rangeCounts(int word) {
    return rangeCounts[word];
  }

  /** Counts of word {@code word} over all rows, digit {@code d} at {@code [256 * d]}. */
  int[] totals(int word) {
    return totals[word];
  }
}
