package io.gpusort.merge;

/**
 * A streaming k-way merge of sorted sources with a tree of losers: each item taken costs about
 * log2(k) comparisons of the sources' current heads, and nothing is materialized. The sources
 * (sorted runs in memory or on disk) are named by their index; ties go to the lower index, so
 * that sources given in input order merge stably.
 *
 * <p>Use: {@link #next()} returns the source whose head is the smallest; the caller reads that
 * head, and the following {@code next()} advances that source before choosing again.
 */
public final class MergeTree {
  /** The sources: each has a current head once advanced, and may run out. */
  public interface Sources {
    /** Moves source {@code s} to its next item; false when it has none left. */
    boolean advance(int s);

    /** Compares the current heads of sources {@code a} and {@code b}, both not exhausted. */
    int compare(int a, int b);
  }

  private final Sources sources;
  private final int k;
  /** tree[0] is the winner; tree[1..k-1] the loser of the match at that node. */
  private final int[] tree;
  private final boolean[] exhausted;
  private int pending = -1;

  /** Advances every source once to its first head and builds the tree. */
  public MergeTree(int k, Sources sources) {
    if (k < 1) {
      throw new IllegalArgumentException("a merge needs at least one source: " + k);
    }
    this.sources = sources;
    this.k = k;
    this.tree = new int[k];
    this.exhausted = new boolean[k];
    for (int s = 0; s < k; s++) {
      exhausted[s] = !sources.advance(s);
    }
    build();
  }

  /**
   * Advances the source returned last, then returns the source with the smallest head, or -1
   * when every source is exhausted.
   */
  public int next() {
    if (pending >= 0) {
      int s = pending;
      pending = -1;
      exhausted[s] = !sources.advance(s);
      replay(s);
    }
    int winner = tree[0];
    if (exhausted[winner]) {
      return -1;
    }
    pending = winner;
    return winner;
  }

  private void build() {
    if (k == 1) {
      tree[0] = 0;
      return;
    }
    // winners[i] is the winner of the subtree rooted at node i; leaves are k..2k-1.
    int[] winners = new int[2 * k];
    for (int s = 0; s < k; s++) {
      winners[k + s] = s;
    }
    for (int node = k - 1; node >= 1; node--) {
      int a = winners[2 * node];
      int b = winners[2 * node + 1];
      if (beats(a, b)) {
        winners[node] = a;
        tree[node] = b;
      } else {
        winners[node] = b;
        tree[node] = a;
      }
    }
    tree[0] = winners[1];
  }

  private void replay(int source) {
    int winner = source;
    for (int node = (k + source) >>> 1; node >= 1; node >>>= 1) {
      int loser = tree[node];
      if (beats(loser, winner)) {
        tree[node] = winner;
        winner = loser;
      }
    }
    tree[0] = winner;
  }

  /** Whether source {@code a}'s head goes out before {@code b}'s; an exhausted source never wins. */
  private boolean beats(int a, int b) {
    if (exhausted[a]) {
      return false;
    }
    if (exhausted[b]) {
      return true;
    }
    int c = sources.compare(a, b);
    return c < 0 || (c == 0 && a < b);
  }
}
