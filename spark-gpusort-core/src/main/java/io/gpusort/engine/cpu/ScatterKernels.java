package io.gpusort.engine.cpu;

import static io.gpusort.engine.cpu.RadixKernels.DIGIT_MASK;

import io.gpusort.memory.HostMemory;

/**
 * The scatter passes of the CPU radix sort over one row range, one method per (source form,
 * destination form). Each reads the range in order and writes every row to
 * {@code cursor[digit]++}, where {@code cursor} starts at the range's offsets (see
 * {@link RadixKernels#countsToOffsets}); equal digits keep their order, so each pass is stable.
 *
 * <p>Forms: a <em>column</em> is the caller's off-heap word column in input order (the row of
 * position {@code i} is {@code i}); <em>keys</em> are words with a parallel array of row indices;
 * <em>packed</em> values hold the digits still to sort on above the row index (see
 * {@link RadixKernels}); <em>rows</em> are row indices alone, written by the last pass of a word.
 */
final class ScatterKernels {
  private ScatterKernels() {}

  static void columnToKeys(long column, long[] dstKeys, int[] dstRows, int startRow, int endRow,
      int shift, int[] cursor) {
    for (int i = startRow; i < endRow; i++) {
      long key = HostMemory.getLong(column + 8L * i);
      int position = cursor[(int) (key >>> shift) & DIGIT_MASK]++;
      dstKeys[position] = key;
      dstRows[position] = i;
    }
  }

  static void columnToPacked(long column, long[] dstPacked, int startRow, int endRow, int shift,
      int packShift, int rowBits, int[] cursor) {
    for (int i = startRow; i < endRow; i++) {
      long key = HostMemory.getLong(column + 8L * i);
      dstPacked[cursor[(int) (key >>> shift) & DIGIT_MASK]++] = ((key >>> packShift) << rowBits) | i;
    }
  }

  static void columnToRows(long column, int[] dstRows, int startRow, int endRow, int shift,
      int[] cursor) {
    for (int i = startRow; i < endRow; i++) {
      long key = HostMemory.getLong(column + 8L * i);
      dstRows[cursor[(int) (key >>> shift) & DIGIT_MASK]++] = i;
    }
  }

  static void keysToKeys(long[] srcKeys, int[] srcRows, long[] dstKeys, int[] dstRows,
      int startRow, int endRow, int shift, int[] cursor) {
    for (int i = startRow; i < endRow; i++) {
      long key = srcKeys[i];
      int position = cursor[(int) (key >>> shift) & DIGIT_MASK]++;
      dstKeys[position] = key;
      dstRows[position] = srcRows[i];
    }
  }

  static void keysToPacked(long[] srcKeys, int[] srcRows, long[] dstPacked, int startRow,
      int endRow, int shift, int packShift, int rowBits, int[] cursor) {
    for (int i = startRow; i < endRow; i++) {
      long key = srcKeys[i];
      dstPacked[cursor[(int) (key >>> shift) & DIGIT_MASK]++] =
          ((key >>> packShift) << rowBits) | srcRows[i];
    }
  }

  static void packedToPacked(long[] srcPacked, long[] dstPacked, int startRow, int endRow,
      int shift, int[] cursor) {
    for (int i = startRow; i < endRow; i++) {
      long packed = srcPacked[i];
      dstPacked[cursor[(int) (packed >>> shift) & DIGIT_MASK]++] = packed;
    }
  }

  static void packedToRows(long[] srcPacked, int[] dstRows, int startRow, int endRow, int shift,
      int rowBits, int[] cursor) {
    long rowMask = (1L << rowBits) - 1;
    for (int i = startRow; i < endRow; i++) {
      long packed = srcPacked[i];
      dstRows[cursor[(int) (packed >>> shift) & DIGIT_MASK]++] = (int) (packed & rowMask);
    }
  }
}
