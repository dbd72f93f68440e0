package io.gpusort.sql;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The boundaries between the output partitions of a global sort.
 *
 * <p>A row's position is its sort key followed by a tie-breaker, its (input partition, row index)
 * pair. Since the tie-breaker makes every row distinct, boundaries drawn from a sample split even
 * a key that fills most of the input, or an input whose keys are all equal, across output
 * partitions; and since the key comes first, every row of output partition {@code p} still sorts
 * at or before every row of partition {@code p + 1}, whatever the tie-breakers are. That holds even
 * when a recomputed input arrives in another order: balance may suffer, order cannot.
 */
final class RangeBounds implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One sampled (or bounding) row: its key words, its row when keys are truncated, its place. */
  static final class Point implements Serializable {
    private static final long serialVersionUID = 1L;

    final long[] words;
    /** The row, kept only when the layout needs exact tie-breaking. */
    final UnsafeRow row;
    final int partition;
    final long index;
    /** How many input rows this sample stands for. */
    double weight;

    Point(long[] words, UnsafeRow row, int partition, long index) {
      this.words = words;
      this.row = row;
      this.partition = partition;
      this.index = index;
    }
  }

  /** What sampling one input partition found. */
  static final class PartitionSample implements Serializable {
    private static final long serialVersionUID = 1L;

    final long numRows;
    final long numBytes;
    final List<Point> points;

    PartitionSample(long numRows, long numBytes, List<Point> points) {
      this.numRows = numRows;
      this.numBytes = numBytes;
      this.points = points;
    }
  }

  private final Point[] bounds;
  private final boolean exact;

  private RangeBounds(Point[] bounds, boolean exact) {
    this.bounds = bounds;
    this.exact = exact;
  }

  int numPartitions() {
    return bounds.length + 1;
  }

  /**
   * Samples up to {@code sampleSize} rows of one input partition uniformly (reservoir sampling,
   * seeded by the partition index so a retried task samples the same rows).
   */
  static PartitionSample sample(Iterator<InternalRow> rows, int partition, int sampleSize,
      RowKeys keys, TaskContext task) {
    Reservoir reservoir = new Reservoir(sampleSize, partition);
    long n = 0;
    long bytes = 0;
    while (rows.hasNext()) {
      if (task != null && (n & 4095) == 4095) {
        task.killTaskIfInterrupted();
      }
      InternalRow row = rows.next();
      if (reservoir.wants(n)) {
        UnsafeRow kept = keys.asUnsafe(row);
        bytes += kept.getSizeInBytes();
        reservoir.keep(kept.copy(), n);
      } else {
        bytes += row instanceof UnsafeRow unsafe ? unsafe.getSizeInBytes()
            : keys.asUnsafe(row).getSizeInBytes();
      }
      n++;
    }
    return reservoir.sample(n, bytes, partition, keys);
  }

  /**
   * As {@link #sample}, from a partition's batches of columns (the key columns of a columnar
   * scan): only the rows kept are read, a batch without one is passed over whole, and each made
   * into a row of the sort's input by {@code widen} where it is not null. Bytes are not counted
   * (0); the caller knows the rows' size.
   */
  static PartitionSample sampleBatches(Iterator<ColumnarBatch> batches, int partition,
      int sampleSize, RowKeys keys, UnsafeProjection widen, TaskContext task) {
    Reservoir reservoir = new Reservoir(sampleSize, partition);
    long n = 0;
    while (batches.hasNext()) {
      if (task != null) {
        task.killTaskIfInterrupted();
      }
      ColumnarBatch batch = batches.next();
      int numRows = batch.numRows();
      for (long at = reservoir.nextWanted(n); at < n + numRows; at = reservoir.nextWanted(at + 1)) {
        InternalRow row = batch.getRow((int) (at - n));
        reservoir.keep(keys.asUnsafe(widen == null ? row : widen.apply(row)).copy(), at);
      }
      n += numRows;
    }
    return reservoir.sample(n, 0, partition, keys);
  }

  /** The rows a sample keeps so far, with their positions. */
  private static final class Reservoir {
    private final int size;
    private final ReservoirSkips skips;
    private final List<UnsafeRow> rows = new ArrayList<>();
    private final long[] indices;

    Reservoir(int size, int partition) {
      this.size = Math.max(1, size);
      this.skips = new ReservoirSkips(this.size, 0x9E3779B97F4A7C15L * (partition + 1));
      this.indices = new long[this.size];
    }

    /** Whether the row at position {@code n} (rows are offered in order) is kept. */
    boolean wants(long n) {
      return rows.size() < size || n == skips.next();
    }

    /** The first position at or after {@code n} that {@link #wants}. */
    long nextWanted(long n) {
      return rows.size() < size ? n : Math.max(n, skips.next());
    }

    /** Keeps {@code row} (a copy of its own), the row at position {@code n}, which it wants. */
    void keep(UnsafeRow row, long n) {
      if (rows.size() < size) {
        indices[rows.size()] = n;
        rows.add(row);
      } else {
        int slot = skips.replace();
        rows.set(slot, row);
        indices[slot] = n;
      }
    }

    PartitionSample sample(long numRows, long numBytes, int partition, RowKeys keys) {
      List<Point> points = new ArrayList<>(rows.size());
      for (int i = 0; i < rows.size(); i++) {
        long[] words = new long[keys.numWords];
        keys.encoder.encode(rows.get(i), words);
        points.add(new Point(words, keys.exact ? rows.get(i) : null, partition, indices[i]));
      }
      return new PartitionSample(numRows, numBytes, points);
    }
  }

  /**
   * Chooses boundaries that split the sampled rows, weighted by how many rows each stands for,
   * into {@code numPartitions} parts of about equal weight.
   */
  static RangeBounds choose(List<PartitionSample> samples, int numPartitions, boolean exact,
      LazilyGeneratedOrdering ordering) {
    List<Point> points = new ArrayList<>();
    double totalWeight = 0;
    for (PartitionSample s : samples) {
      for (Point p : s.points) {
        p.weight = (double) s.numRows / s.points.size();
        points.add(p);
      }
      totalWeight += s.numRows;
    }
    Comparator<Point> byPosition = (a, b) -> comparePoints(a, b, exact, ordering);
    points.sort(byPosition);
    List<Point> chosen = new ArrayList<>();
    double step = totalWeight / numPartitions;
    double cumulative = 0;
    double target = step;
    for (int i = 0; i < points.size() && chosen.size() < numPartitions - 1; i++) {
      cumulative += points.get(i).weight;
      if (cumulative >= target) {
        chosen.add(points.get(i));
        target += step;
      }
    }
    return new RangeBounds(chosen.toArray(new Point[0]), exact);
  }

  /**
   * The output partition of a row: the first whose upper bound is at or after the row's position.
   */
  int partitionOf(long[] words, UnsafeRow row, int partition, long index,
      LazilyGeneratedOrdering ordering) {
    int lo = 0;
    int hi = bounds.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (compareToPoint(words, row, partition, index, bounds[mid], ordering) <= 0) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  /** The key words of the row at a position of a sorted run. */
  @FunctionalInterface
  interface SortedKeys {
    void wordsAt(int position, long[] out);
  }

  /**
   * Where the bounds cut {@code numRows} rows of input partition {@code partition} sorted by key,
   * each row's tie-breaker its position in that order: {@code cuts[b]} is the first position after
   * bound {@code b}, so output partition {@code p} takes positions {@code [cuts[p - 1], cuts[p])}
   * (from 0, up to {@code numRows}). One binary search per bound, none per row. For keys that
   * need no exact comparison ({@link #exact} false), or whose words in this run are exact (equal
   * words, equal rows): the rows themselves are not read. Where truncated keys' words tie with a
   * bound's, {@code tieIsEqual} tells from the bound's row whether the two keys are equal (then
   * positions decide, as for exact keys); null where it cannot say so, for the caller to compare
   * each row.
   *
   * @param tieIsEqual for keys {@link #exact}: whether a run key whose words equal a bound's
   *     equals it (given the bound's row); ignored otherwise
   */
  int[] cutSorted(int numRows, int partition, SortedKeys keys, int numWords,
      java.util.function.Predicate<UnsafeRow> tieIsEqual) {
    int[] cuts = new int[bounds.length];
    long[] words = new long[numWords];
    int lo = 0;
    for (int b = 0; b < bounds.length; b++) {
      int hi = numRows;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        keys.wordsAt(mid, words);
        int c = compareWords(words, bounds[b].words);
        if (c == 0) {
          if (exact && !tieIsEqual.test(bounds[b].row)) {
            return null;
          }
          c = Integer.compare(partition, bounds[b].partition);
          c = c != 0 ? c : Long.compare(mid, bounds[b].index);
        }
        if (c <= 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      cuts[b] = lo;
    }
    return cuts;
  }

  /** Bounds between output partitions: one fewer than the partitions. */
  int numBounds() {
    return bounds.length;
  }

  /** Whether a row sorts after bound {@code b}: it belongs to a later output partition. */
  boolean isAfter(int b, long[] words, UnsafeRow row, int partition, long index,
      LazilyGeneratedOrdering ordering) {
    return compareToPoint(words, row, partition, index, bounds[b], ordering) > 0;
  }

  private int compareToPoint(long[] words, UnsafeRow row, int partition, long index, Point b,
      LazilyGeneratedOrdering ordering) {
    int c = compareWords(words, b.words);
    if (c != 0) {
      return c;
    }
    if (exact) {
      c = ordering.compare(row, b.row);
      if (c != 0) {
        return c;
      }
    }
    c = Integer.compare(partition, b.partition);
    return c != 0 ? c : Long.compare(index, b.index);
  }

  private static int comparePoints(Point a, Point b, boolean exact,
      LazilyGeneratedOrdering ordering) {
    int c = compareWords(a.words, b.words);
    if (c == 0 && exact) {
      c = ordering.compare(a.row, b.row);
    }
    if (c == 0) {
      c = Integer.compare(a.partition, b.partition);
    }
    return c != 0 ? c : Long.compare(a.index, b.index);
  }

  static int compareWords(long[] a, long[] b) {
    int mismatch = Arrays.mismatch(a, b);
    return mismatch < 0 ? 0 : Long.compareUnsigned(a[mismatch], b[mismatch]);
  }
}
