package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.LongFunction;

/**
 * Random records for the gather tests, laid out in pages as {@link RowPages} describes (each an
 * 8-byte length, then that many bytes of random longs; a new page wherever the next record would
 * not fit), a random permutation of them, the sorted stream a gather in that order must give, and
 * the stream read back out of the pages. Owns every buffer it allocates: closing frees the pages,
 * the pointers and the permutation, so a gather's {@link RowArrival} must be closed first.
 */
public final class RandomRecords implements AutoCloseable {
  /** Told of each page as soon as it is full (not of the last page), as the row store's is. */
  @FunctionalInterface
  public interface PageFull {
    void full(HostBuffer page, long usedBytes);
  }

  private final LongFunction<HostBuffer> allocate;
  private final List<HostBuffer> pages = new ArrayList<>();
  private HostBuffer pointers;
  private HostBuffer permutation;
  private RowPages rows;
  private int[] perm;

  /** @param allocate the host memory of the pages, the pointers and the permutation */
  public RandomRecords(LongFunction<HostBuffer> allocate) {
    this.allocate = allocate;
  }

  /**
   * Writes {@code numRows} records of {@code minRowBytes..maxRowBytes} bytes of row (multiples of
   * 8) into pages of {@code pageBytes}; every record of one size when the two bounds are equal.
   *
   * @param pageFull told of each page as it becomes full; may be null
   */
  public RowPages write(SplittableRandom random, int numRows, int minRowBytes, int maxRowBytes,
      long pageBytes, PageFull pageFull) {
    if (pointers != null) {
      throw new IllegalStateException("records already written");
    }
    pointers = allocate.apply(8L * Math.max(1, numRows));
    List<Long> used = new ArrayList<>();
    long total = 0;
    long pageUsed = pageBytes;
    for (int r = 0; r < numRows; r++) {
      int rowBytes = 8 * (minRowBytes / 8 + random.nextInt((maxRowBytes - minRowBytes) / 8 + 1));
      if (pageUsed + 8 + rowBytes > pageBytes) {
        if (pageFull != null && !pages.isEmpty()) {
          pageFull.full(pages.get(pages.size() - 1), pageUsed);
        }
        pages.add(allocate.apply(pageBytes));
        used.add(0L);
        pageUsed = 0;
      }
      int page = pages.size() - 1;
      long at = pages.get(page).address() + pageUsed;
      HostMemory.putLong(at, rowBytes);
      for (int k = 0; k < rowBytes; k += 8) {
        HostMemory.putLong(at + 8 + k, random.nextLong());
      }
      HostMemory.putLong(pointers.address() + 8L * r, RowPages.pointer(page, pageUsed));
      pageUsed += 8 + rowBytes;
      used.set(page, pageUsed);
      total += 8 + rowBytes;
    }
    int fixed = minRowBytes == maxRowBytes ? 8 + minRowBytes : 0;
    rows = new RowPages(pages, used.stream().mapToLong(Long::longValue).toArray(), pointers,
        numRows, total, fixed);
    return rows;
  }

  /** A random permutation of the written rows, in a buffer of ints. */
  public HostBuffer shuffle(SplittableRandom random) {
    if (rows == null || permutation != null) {
      throw new IllegalStateException("shuffle once, after write");
    }
    int n = rows.numRows();
    permutation = allocate.apply(4L * Math.max(1, n));
    perm = new int[n];
    for (int i = 0; i < n; i++) {
      int j = random.nextInt(i + 1);
      perm[i] = perm[j];
      perm[j] = i;
    }
    HostMemory.copyFromArray(perm, 0, permutation.address(), n);
    return permutation;
  }

  /** The records in the permutation's order, as a gather must stream them; before the gather. */
  public byte[] expectedStream() {
    if (perm == null) {
      throw new IllegalStateException("shuffle first");
    }
    byte[] expected = new byte[(int) rows.recordBytes()];
    long at = 0;
    for (int row : perm) {
      long record = rows.recordAddress(row);
      long size = 8 + HostMemory.getLong(record);
      HostMemory.copy(null, record, expected, HostMemory.BYTE_ARRAY_OFFSET + at, size);
      at += size;
    }
    return expected;
  }

  /**
   * The sorted stream read out of the pages page by page, each page only once {@code arrival}
   * (null where the stream is already in the pages) says it is back.
   */
  public byte[] readStream(RowArrival arrival) {
    long total = rows.recordBytes();
    byte[] actual = new byte[(int) total];
    long done = 0;
    for (int k = 0; k < pages.size() && done < total; k++) {
      long length = Math.min(RowPages.capacityBytes(pages.get(k)), total - done);
      if (arrival != null) {
        arrival.await(done + length);
      }
      HostMemory.copy(null, pages.get(k).address(), actual, HostMemory.BYTE_ARRAY_OFFSET + done,
          length);
      done += length;
    }
    return actual;
  }

  @Override
  public void close() {
    pages.forEach(HostBuffer::close);
    if (pointers != null) {
      pointers.close();
    }
    if (permutation != null) {
      permutation.close();
    }
  }
}
