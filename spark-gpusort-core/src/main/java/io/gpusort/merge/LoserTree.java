package io.gpusort.merge;

/**
 * K-way merge of sorted runs of int items (row ids) into an array, with the streaming tree of
 * losers of {@link MergeTree}: each output item costs about log2(k) comparisons.
 */
public final class LoserTree {
  private LoserTree() {}

  /**
   * Merges runs of {@code items}: run {@code r} is {@code items[runStarts[r] .. runStarts[r+1])},
   * each already ascending under {@code cmp}. Returns all items in ascending order; items that
   * compare equal come out in no particular order.
   */
  public static int[] merge(int[] items, int[] runStarts, IntComparator cmp) {
    int k = runStarts.length - 1;
    if (k <= 0) {
      return new int[0];
    }
    int total = runStarts[k] - runStarts[0];
    int[] out = new int[total];
    if (k == 1) {
      System.arraycopy(items, runStarts[0], out, 0, total);
      return out;
    }
    // pos[r] is the head of run r once advanced; it starts one before the run.
    int[] pos = new int[k];
    for (int r = 0; r < k; r++) {
      pos[r] = runStarts[r] - 1;
    }
    MergeTree tree = new MergeTree(k, new MergeTree.Sources() {
      @Override
      public boolean advance(int r) {
        return ++pos[r] < runStarts[r + 1];
      }

      @Override
      public int compare(int a, int b) {
        return cmp.compare(items[pos[a]], items[pos[b]]);
      }
    });
    for (int n = 0; n < total; n++) {
      out[n] = items[pos[tree.next()]];
    }
    return out;
  }
}
