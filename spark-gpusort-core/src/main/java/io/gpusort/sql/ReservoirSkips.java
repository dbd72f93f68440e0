package io.gpusort.sql;

import java.util.SplittableRandom;

/**
 * Which rows a reservoir sample of {@code size} keeps after its first {@code size}, by skips
 * drawn from their distribution (Li's "Algorithm L", ACM TOMS 1994): a few random numbers per
 * kept row instead of one per row seen, so that the rows in between need not even be visited (a
 * batch of columns is skipped whole). The sample is uniform, as with one draw per row.
 *
 * <p>Rows {@code 0 .. size - 1} fill the reservoir; then the row at {@link #next()} replaces the
 * slot {@link #replace()} returns, which also moves {@link #next()} on.
 */
final class ReservoirSkips {
  /** A skip past every row a partition can hold, drawn when the kept rows grow very rare. */
  private static final long MAX_SKIP = Long.MAX_VALUE / 4;

  private final int size;
  private final SplittableRandom random;
  private double threshold;
  private long next;

  ReservoirSkips(int size, long seed) {
    if (size < 1) {
      throw new IllegalArgumentException("a reservoir of " + size + " rows");
    }
    this.size = size;
    this.random = new SplittableRandom(seed);
    this.threshold = Math.exp(Math.log(uniform()) / size);
    this.next = size - 1;
    skip();
  }

  /** The position of the next row the sample keeps (at least {@code size}). */
  long next() {
    return next;
  }

  /** The slot the row at {@link #next()} takes; moves {@link #next()} to the one kept after. */
  int replace() {
    int slot = random.nextInt(size);
    threshold *= Math.exp(Math.log(uniform()) / size);
    skip();
    return slot;
  }

  private void skip() {
    // A threshold that rounded to 1 would make log1p(-threshold) infinite.
    double w = Math.min(threshold, Math.nextDown(1.0));
    double rows = Math.floor(Math.log(uniform()) / Math.log1p(-w));
    next += 1 + (rows >= MAX_SKIP ? MAX_SKIP : (long) rows);
  }

  /** A uniform number in (0, 1): its logarithm is finite and negative. */
  private double uniform() {
    double u;
    do {
      u = random.nextDouble();
    } while (u == 0.0);
    return u;
  }
}
