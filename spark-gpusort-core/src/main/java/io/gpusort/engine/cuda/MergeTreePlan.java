package io.gpusort.engine.cuda;

import java.util.Arrays;

/**
 * The host side of kernels/cuda/merge.cu's merge tree: the levels of pairwise merges that put
 * sorted runs in order, built from the runs' starts before anything is launched. Level {@code l}
 * merges runs {@code (2j, 2j + 1)} of its run list into run {@code j} of the next; an odd last run
 * is a pair without B, copied through. Empty runs are left out (they merge to nothing), so
 * {@code k} non-empty runs take {@code ceil(log2 k)} levels (one, a copy, when {@code k == 1}; none
 * without rows).
 *
 * <p>Pairs are four ints each, as the kernels read them: {@code aStart, aLen, bLen, firstTile},
 * A being {@code [aStart, aStart + aLen)} and B right after it; a pair's output tiles (of
 * {@code tileItems} items, none straddling two pairs) are {@code firstTile, firstTile + 1, ...}
 * within its level.
 */
final class MergeTreePlan {
  private static final int INTS_PER_PAIR = 4;

  /** Every level's pairs, one after another; level {@code l} from pair {@link #firstPair}. */
  final int[] pairs;
  private final int[] firstPair;
  private final int[] numPairs;
  private final int[] tiles;
  private final int maxTiles;

  /**
   * @param runStarts the first row of each run, as {@link io.gpusort.engine.RunStarts#check}
   *     accepts them
   * @param tileItems items per output tile of the tile kernel ({@code gpusort_merge_tuning})
   */
  MergeTreePlan(int[] runStarts, int numRows, int tileItems) {
    int[] runs = offsetsOfNonEmptyRuns(runStarts, numRows);
    int[] pairList = new int[0];
    int pairCount = 0;
    int[] first = new int[32];
    int[] count = new int[32];
    int[] levelTiles = new int[32];
    int levels = 0;
    int widest = 0;
    // runs holds k + 1 offsets of the current level's k runs.
    while (numRows > 0 && (runs.length > 2 || levels == 0)) {
      int k = runs.length - 1;
      int pairsHere = (k + 1) / 2;
      pairList = Arrays.copyOf(pairList, INTS_PER_PAIR * (pairCount + pairsHere));
      int[] next = new int[pairsHere + 1];
      long levelTileCount = 0;
      for (int j = 0; j < pairsHere; j++) {
        int a = runs[2 * j];
        int m = runs[2 * j + 1];
        int e = runs[Math.min(2 * j + 2, k)];
        int at = INTS_PER_PAIR * (pairCount + j);
        pairList[at] = a;
        pairList[at + 1] = m - a;
        pairList[at + 2] = e - m;
        pairList[at + 3] = (int) levelTileCount;
        levelTileCount += ((long) e - a + tileItems - 1) / tileItems;
        next[j] = a;
      }
      next[pairsHere] = runs[k];
      first[levels] = pairCount;
      count[levels] = pairsHere;
      levelTiles[levels] = (int) levelTileCount;
      widest = Math.max(widest, (int) levelTileCount);
      pairCount += pairsHere;
      levels++;
      runs = next;
    }
    this.pairs = pairList;
    this.firstPair = Arrays.copyOf(first, levels);
    this.numPairs = Arrays.copyOf(count, levels);
    this.tiles = Arrays.copyOf(levelTiles, levels);
    this.maxTiles = widest;
  }

  /** The k + 1 offsets of the non-empty runs: 0, the starts of runs 2..k, numRows. */
  private static int[] offsetsOfNonEmptyRuns(int[] runStarts, int numRows) {
    int[] offsets = new int[runStarts.length + 1];
    int k = 0;
    for (int i = 0; i < runStarts.length; i++) {
      int end = i + 1 < runStarts.length ? runStarts[i + 1] : numRows;
      if (end > runStarts[i]) {
        offsets[k++] = runStarts[i];
      }
    }
    offsets[k] = numRows;
    return Arrays.copyOf(offsets, k + 1);
  }

  int levels() {
    return tiles.length;
  }

  /** Index of level {@code l}'s first pair in {@link #pairs} (in pairs, not ints). */
  int firstPair(int l) {
    return firstPair[l];
  }

  int numPairs(int l) {
    return numPairs[l];
  }

  /** Output tiles of level {@code l}: the tile kernel's grid. */
  int tiles(int l) {
    return tiles[l];
  }

  /** The most tiles of any level: the size of the splits buffer, which every level reuses. */
  int maxTiles() {
    return maxTiles;
  }

  /** Pairs of every level. */
  int totalPairs() {
    return pairs.length / INTS_PER_PAIR;
  }
}
