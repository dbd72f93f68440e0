package io.gpusort.sql;

import io.gpusort.merge.MergeTree;
import java.util.List;

/**
 * Sorted runs as the sources of a {@link MergeTree}: their current rows compared by encoded key,
 * then by Spark's ordering where truncated keys tie. For the output stage and for merging spilled
 * runs into fewer files.
 */
final class CursorMerge implements MergeTree.Sources {
  private final RowCursor[] cursors;
  private final RowKeys keys;

  CursorMerge(List<? extends RowCursor> cursors, RowKeys keys) {
    this.cursors = cursors.toArray(new RowCursor[0]);
    this.keys = keys;
  }

  /** A merge tree over the runs, each advanced to its first row. */
  MergeTree tree() {
    return new MergeTree(cursors.length, this);
  }

  @Override
  public boolean advance(int s) {
    return cursors[s].advance();
  }

  @Override
  public int compare(int a, int b) {
    RowCursor x = cursors[a];
    RowCursor y = cursors[b];
    for (int w = 0; w < keys.numWords; w++) {
      int c = Long.compareUnsigned(x.keyWord(w), y.keyWord(w));
      if (c != 0) {
        return c;
      }
    }
    return keys.exact ? keys.ordering.compare(x.row(), y.row()) : 0;
  }
}
