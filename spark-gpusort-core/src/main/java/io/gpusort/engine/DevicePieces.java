package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import io.gpusort.merge.LoserTree;

/**
 * The host side of a GPU engine's batch that is larger than one device piece: the pieces are
 * sorted one after another on the device, then their sorted runs are merged on the host (the
 * Kochi paper's split, sort on the device, merge on the host).
 */
public final class DevicePieces {
  private DevicePieces() {}

  /** Sorts one piece on the device. */
  @FunctionalInterface
  public interface PieceSorter {
    /**
     * Writes into the permutation, at rows {@code [from, from + count)}, the stable sorted order
     * of those rows as indices relative to {@code from}.
     */
    void sort(int from, int count);
  }

  /**
   * Sorts {@code keys} into {@code permutation} in pieces of {@code rowsPerPiece} rows through
   * {@code sorter}, then merges the pieces' runs with a loser tree, comparing keys as unsigned
   * words and then row indices, which keeps the merge stable.
   */
  public static void sortAndMerge(KeyBatch keys, int rowsPerPiece, HostBuffer permutation,
      PieceSorter sorter) {
    int n = keys.numRows();
    int words = (keys.keyBits() + 63) / 64;
    int pieces = (int) ((n + (long) rowsPerPiece - 1) / rowsPerPiece);
    int[] runStarts = new int[pieces + 1];
    for (int p = 0; p < pieces; p++) {
      int from = p * rowsPerPiece;
      int count = Math.min(rowsPerPiece, n - from);
      sorter.sort(from, count);
      runStarts[p + 1] = from + count;
    }
    int[] rows = new int[n];
    HostMemory.copyToArray(permutation.address(), rows, 0, n);
    for (int p = 0; p < pieces; p++) {
      for (int i = runStarts[p]; i < runStarts[p + 1]; i++) {
        rows[i] += runStarts[p];
      }
    }
    int[] merged = LoserTree.merge(rows, runStarts, (a, b) -> compareRows(keys, words, a, b));
    HostMemory.copyFromArray(merged, 0, permutation.address(), n);
  }

  /** Key order, then row order. */
  private static int compareRows(KeyBatch keys, int words, int a, int b) {
    for (int w = 0; w < words; w++) {
      int c = Long.compareUnsigned(keys.word(a, w), keys.word(b, w));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a, b);
  }

  /**
   * What a GPU engine's {@code sort} does before it touches the device: checks that
   * {@code permutation} holds one int per row, and sorts the batches that need no device (at most
   * one row, or no significant key bits) by writing their input order.
   *
   * @return true when the batch is sorted already (nothing left for the device)
   * @throws IllegalArgumentException when the permutation buffer is too small
   */
  public static boolean checkAndSortTrivial(KeyBatch keys, HostBuffer permutation) {
    checkPermutation(keys, permutation);
    int n = keys.numRows();
    if (n <= 1 || keys.keyBits() == 0) {
      fillIdentity(permutation.address(), n);
      return true;
    }
    return false;
  }

  /** Throws IllegalArgumentException unless {@code permutation} holds one int per row. */
  public static void checkPermutation(KeyBatch keys, HostBuffer permutation) {
    if (permutation.sizeBytes() < 4L * keys.numRows()) {
      throw new IllegalArgumentException("permutation buffer of " + permutation.sizeBytes()
          + " bytes is too small for " + keys.numRows() + " rows");
    }
  }

  /** Writes 0, 1, ..., n - 1 as ints at {@code address}: the order of an already sorted batch. */
  public static void fillIdentity(long address, int n) {
    for (int i = 0; i < n; i++) {
      HostMemory.putInt(address + 4L * i, i);
    }
  }
}
