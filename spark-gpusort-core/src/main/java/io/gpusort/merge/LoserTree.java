package io.gpusort.merge;

/**
 * K-way merge of sorted runs with a tree of losers: each output item costs about log2(k)
 * comparisons, one per level, against the losers stored on the path from its run's leaf.
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
    int[] pos = new int[k];
    int[] end = new int[k];
    for (int r = 0; r < k; r++) {
      pos[r] = runStarts[r];
      end[r] = runStarts[r + 1];
    }
    // tree[0] holds the winner; tree[1..k-1] the loser of the match at that node. Leaves are the
    // virtual nodes k..2k-1, leaf k+r standing for run r.
    int[] tree = new int[k];
    build(tree, pos, end, items, cmp, k);
    for (int n = 0; n < total; n++) {
      int winner = tree[0];
      out[n] = items[pos[winner]];
      pos[winner]++;
      replay(tree, winner, pos, end, items, cmp, k);
    }
    return out;
  }

  private static void build(int[] tree, int[] pos, int[] end, int[] items, IntComparator cmp,
      int k) {
    // winners[i] is the winner of the subtree rooted at node i (internal nodes 1..k-1).
    int[] winners = new int[2 * k];
    for (int r = 0; r < k; r++) {
      winners[k + r] = r;
    }
    for (int node = k - 1; node >= 1; node--) {
      int a = winners[2 * node];
      int b = winners[2 * node + 1];
      if (beats(a, b, pos, end, items, cmp)) {
        winners[node] = a;
        tree[node] = b;
      } else {
        winners[node] = b;
        tree[node] = a;
      }
    }
    tree[0] = winners[1];
  }

  private static void replay(int[] tree, int run, int[] pos, int[] end, int[] items,
      IntComparator cmp, int k) {
    int winner = run;
    for (int node = (k + run) >>> 1; node >= 1; node >>>= 1) {
      int loser = tree[node];
      if (beats(loser, winner, pos, end, items, cmp)) {
        tree[node] = winner;
        winner = loser;
      }
    }
    tree[0] = winner;
  }

  /** Whether run {@code a}'s head goes out before run {@code b}'s; an exhausted run never wins. */
  private static boolean beats(int a, int b, int[] pos, int[] end, int[] items,
      IntComparator cmp) {
    if (pos[a] >= end[a]) {
      return false;
    }
    if (pos[b] >= end[b]) {
      return true;
    }
    int c = cmp.compare(items[pos[a]], items[pos[b]]);
    return c < 0 || (c == 0 && a < b);
  }
}
