package io.gpusort.sql;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import scala.Tuple2;

/**
 * The map side of the global sort's exchange, after the partition's sort: cuts the sorted rows at
 * the range bounds and hands them on as {@link RowChunk}s, each with its output partition, in
 * sorted order (so the chunks of one output partition come one after another, its block). Where
 * the cuts are known ahead (a partition sorted in one run whose keys are exact: one binary search
 * per bound, {@link RangeBounds#cutSorted}), rows are only counted; otherwise each row is compared
 * with the next bound as it passes, its position the tie-breaker.
 */
final class ChunkCutter implements Iterator<Tuple2<Integer, RowChunk>> {
  private final SortOutput rows;
  private final RangeBounds bounds;
  private final int partition;
  private final RowKeys keys;
  /** Where each bound cuts the sorted rows, or null to compare each row with the next bound. */
  private final int[] cuts;
  private final boolean keysExact;
  private final long totalRows;
  private final long[] words;
  /** Key words each row carries in its chunk: none where the reducer encodes keys itself. */
  private final int chunkWords;
  /** The position of the next row to take. */
  private long position;
  /** Whether the row at {@link #position} - 1 was read but not yet put in a chunk. */
  private UnsafeRow pending;
  private int pendingTarget;
  /** The output partition of the rows being chunked. */
  private int target;

  /**
   * @param rows the partition's sorted rows, their keys readable ({@link SortOutput#keyWord});
   *     null when it has none
   * @param keysExact whether every key of the partition is exact (none truncated)
   */
  ChunkCutter(SortOutput rows, RangeBounds bounds, int partition, RowKeys keys, int[] cuts,
      boolean keysExact) {
    this.rows = rows;
    this.totalRows = rows == null ? 0 : rows.numRows();
    this.bounds = bounds;
    this.partition = partition;
    this.keys = keys;
    this.cuts = cuts;
    this.keysExact = keysExact;
    this.words = new long[keys.numWords];
    this.chunkWords = keys.shipsKeys ? keys.numWords : 0;
  }

  @Override
  public boolean hasNext() {
    return pending != null || position < totalRows;
  }

  @Override
  public Tuple2<Integer, RowChunk> next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    if (pending == null) {
      readNext();
    }
    int chunkTarget = pendingTarget;
    // The rows left for this output partition: known from the cuts, else guessed from the rows
    // and partitions left (twice the share, and the chunk grows if that was short).
    long remainingInTarget = cuts == null
        ? 2 * (totalRows - position + 1) / (bounds.numBounds() - chunkTarget + 1)
        : (chunkTarget < cuts.length ? cuts[chunkTarget] : totalRows) - position + 1;
    long avgEntry = RowChunk.entryBytes(chunkWords, pending.getSizeInBytes());
    RowChunk chunk = new RowChunk(chunkWords, remainingInTarget * avgEntry);
    if (!keysExact) {
      chunk.markKeysInexact();
    }
    while (pending != null && pendingTarget == chunkTarget && !chunk.isFull()) {
      chunk.add(words, pending);
      pending = null;
      if (position < totalRows) {
        readNext();
      }
    }
    return new Tuple2<>(chunkTarget, chunk);
  }

  /** Reads the row at {@link #position} into {@link #pending}, with its key and target. */
  private void readNext() {
    // The sorted output checks for a killed task every few thousand rows.
    UnsafeRow row = (UnsafeRow) rows.next();
    if (chunkWords > 0 || cuts == null) {
      for (int w = 0; w < words.length; w++) {
        words[w] = rows.keyWord(w);
      }
    }
    long at = position++;
    if (cuts != null) {
      while (target < cuts.length && at >= cuts[target]) {
        target++;
      }
    } else {
      while (target < bounds.numBounds()
          && bounds.isAfter(target, words, row, partition, at, keys.ordering)) {
        target++;
      }
    }
    pending = row;
    pendingTarget = target;
  }
}
