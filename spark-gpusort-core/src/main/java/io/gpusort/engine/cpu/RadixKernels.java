package io.gpusort.engine.cpu;

import io.gpusort.memory.HostMemory;
import java.util.Arrays;

/**
 * The counting, gathering and offset steps of the CPU radix sort, each over one row range. The
 * scatter passes are in {@link ScatterKernels}. All are static loops over plain arrays and the
 * caller's off-heap word columns, so that the JIT compiles each once, with no virtual call or
 * boxing per row.
 *
 * <p>Digits are 8 bits: the digit at shift {@code s} of value {@code v} is
 * {@code (v >>> s) & 0xFF}, so words compare as unsigned. A histogram of all digits of a word is
 * one {@code int[8 * 256]}, digit {@code d} at {@code [256 * d, 256 * d + 256)}.
 *
 * <p>A packed value holds the key digits still to be sorted on above the row index:
 * {@code ((word >>> packShift) << rowBits) | row}, used when they fit in 64 bits together.
 */
final class RadixKernels {
  static final int DIGIT_BITS = 8;
  static final int RADIX = 1 << DIGIT_BITS;
  static final int DIGITS_PER_WORD = Long.SIZE / DIGIT_BITS;
  static final int DIGIT_MASK = RADIX - 1;

  private RadixKernels() {}

  /**
   * Adds to {@code counts} the histograms of digits {@code firstDigit..7} of the words at
   * {@code column} for rows {@code [startRow, endRow)}.
   */
  static void histogramColumn(long column, int startRow, int endRow, int firstDigit,
      int[] counts) {
    if (firstDigit == 0) {
      histogramAllDigits(column, startRow, endRow, counts);
      return;
    }
    for (int i = startRow; i < endRow; i++) {
      long value = HostMemory.getLong(column + 8L * i);
      for (int d = firstDigit; d < DIGITS_PER_WORD; d++) {
        counts[(d << DIGIT_BITS) + (int) ((value >>> (d * DIGIT_BITS)) & DIGIT_MASK)]++;
      }
    }
  }

  /** {@link #histogramColumn} for all eight digits, unrolled: the common full-width case. */
  private static void histogramAllDigits(long column, int startRow, int endRow, int[] counts) {
    for (int i = startRow; i < endRow; i++) {
      long value = HostMemory.getLong(column + 8L * i);
      counts[(int) (value & DIGIT_MASK)]++;
      counts[256 + (int) ((value >>> 8) & DIGIT_MASK)]++;
      counts[512 + (int) ((value >>> 16) & DIGIT_MASK)]++;
      counts[768 + (int) ((value >>> 24) & DIGIT_MASK)]++;
      counts[1024 + (int) ((value >>> 32) & DIGIT_MASK)]++;
      counts[1280 + (int) ((value >>> 40) & DIGIT_MASK)]++;
      counts[1536 + (int) ((value >>> 48) & DIGIT_MASK)]++;
      counts[1792 + (int) (value >>> 56)]++;
    }
  }

  /** Sets {@code counts[0..255]} to the histogram of the digit at {@code shift} over a range. */
  static void countDigit(long[] values, int startRow, int endRow, int shift, int[] counts) {
    Arrays.fill(counts, 0, RADIX, 0);
    for (int i = startRow; i < endRow; i++) {
      counts[(int) (values[i] >>> shift) & DIGIT_MASK]++;
    }
  }

  /**
   * Loads the words at {@code column} in the order of {@code rows} into {@code dstKeys}, and, when
   * {@code counts} is not null, sets {@code counts[0..255]} to the histogram of the digit at
   * {@code shift} of the loaded words.
   */
  static void gatherKeys(long column, int[] rows, long[] dstKeys, int startRow, int endRow,
      int shift, int[] counts) {
    if (counts == null) {
      for (int i = startRow; i < endRow; i++) {
        dstKeys[i] = HostMemory.getLong(column + 8L * rows[i]);
      }
      return;
    }
    Arrays.fill(counts, 0, RADIX, 0);
    for (int i = startRow; i < endRow; i++) {
      long key = HostMemory.getLong(column + 8L * rows[i]);
      dstKeys[i] = key;
      counts[(int) (key >>> shift) & DIGIT_MASK]++;
    }
  }

  /**
   * {@link #gatherKeys} into packed values {@code ((word >>> packShift) << rowBits) | row}; the
   * counted digit is at {@code shift} of the packed value.
   */
  static void gatherPacked(long column, int[] rows, long[] dstPacked, int startRow, int endRow,
      int packShift, int rowBits, int shift, int[] counts) {
    if (counts == null) {
      for (int i = startRow; i < endRow; i++) {
        int row = rows[i];
        dstPacked[i] = ((HostMemory.getLong(column + 8L * row) >>> packShift) << rowBits) | row;
      }
      return;
    }
    Arrays.fill(counts, 0, RADIX, 0);
    for (int i = startRow; i < endRow; i++) {
      int row = rows[i];
      long packed = ((HostMemory.getLong(column + 8L * row) >>> packShift) << rowBits) | row;
      dstPacked[i] = packed;
      counts[(int) (packed >>> shift) & DIGIT_MASK]++;
    }
  }

  /**
   * Turns per-range bucket counts into per-range write offsets: an exclusive prefix sum over
   * (bucket, range) in that order, so bucket {@code b} of range {@code r} starts after every
   * smaller bucket and after bucket {@code b} of the ranges before {@code r}; this keeps the
   * parallel scatter stable. Counts of range {@code r} are
   * {@code counts[r][countsBase..countsBase + 255]}. The total is at most MAX_ROWS, so int holds it.
   */
  static void countsToOffsets(int[][] counts, int countsBase, int[][] offsets) {
    int numRanges = offsets.length;
    int running = 0;
    for (int b = 0; b < RADIX; b++) {
      for (int r = 0; r < numRanges; r++) {
        offsets[r][b] = running;
        running += counts[r][countsBase + b];
      }
    }
  }
}
