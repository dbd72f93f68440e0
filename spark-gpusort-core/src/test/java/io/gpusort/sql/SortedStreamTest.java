package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The row store's pages as the upload ahead sees them (each reported once, complete, in order),
 * and the sorted stream read back while it is still arriving: every byte is read only after the
 * arrival was asked for it.
 */
class SortedStreamTest {
  private static final long PAGE_BYTES = 4096;

  @RegisterExtension
  final TaskMemory memory = new TaskMemory();

  @Test
  void everyPageIsReportedOnceCompleteAndInOrder() {
    RowStore rows = new RowStore(memory.get(), PAGE_BYTES);
    List<HostBuffer> reported = new ArrayList<>();
    List<Long> reportedBytes = new ArrayList<>();
    rows.onPageFull((page, used) -> {
      reported.add(page);
      reportedBytes.add(used);
    });
    long[] pointers = append(rows, 3000, new SplittableRandom(7));
    assertTrue(rows.numPages() > 5, "too few pages to test: " + rows.numPages());
    try (HostBuffer none = HostBuffer.allocate(8)) {
      RowPages pages = rows.asPages(none, 0);
      // Every page but the one still being filled, each with the bytes it ended with.
      assertEquals(rows.numPages() - 1, reported.size());
      for (int k = 0; k < reported.size(); k++) {
        assertTrue(reported.get(k) == rows.page(k), "page " + k + " reported out of order");
        assertEquals(pages.usedBytes(k), reportedBytes.get(k), "page " + k + " changed after");
      }
    }
    assertEquals(rows.numPages() - 1, RowPages.pageOf(pointers[pointers.length - 1]));
    rows.freeAllBut(-1);
  }

  @Test
  void theStreamIsReadOnlyWhereItHasArrived() {
    RowStore rows = new RowStore(memory.get(), PAGE_BYTES);
    SplittableRandom random = new SplittableRandom(11);
    long[] pointers = append(rows, 2500, random);
    int n = pointers.length;
    // The sorted stream of a random order, built apart, then "copied back" only as asked for.
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      int j = random.nextInt(i + 1);
      order[i] = order[j];
      order[j] = i;
    }
    long total = rows.dataBytes();
    long[] records = new long[n];
    for (int i = 0; i < n; i++) {
      records[i] = rows.address(pointers[order[i]]) - RowStore.RECORD_HEADER_BYTES;
    }
    LazyArrival arrival = LazyArrival.sortedOver(rows::page, rows.numPages(), records, total);
    byte[] stream = arrival.stream();
    SortedStream sorted = new SortedStream(rows, total, arrival);
    UnsafeRow row = new UnsafeRow(1);
    long offset = 0;
    for (int i = 0; i < n; i++) {
      assertTrue(sorted.next(row), "stream ended at row " + i);
      byte[] expected = Arrays.copyOfRange(stream, (int) offset + RowStore.RECORD_HEADER_BYTES,
          (int) offset + RowStore.RECORD_HEADER_BYTES + row.getSizeInBytes());
      assertEquals(-1, Arrays.mismatch(expected, row.getBytes()), "row " + i);
      offset += RowStore.RECORD_HEADER_BYTES + row.getSizeInBytes();
    }
    assertFalse(sorted.next(row));
    assertEquals(total, arrival.arrived);
    assertTrue(arrival.awaits < rows.numPages() + n / 10,
        arrival.awaits + " waits for " + rows.numPages() + " pages: not a page at a time");
    rows.freeAllBut(-1);
  }

  @Test
  void aRunFindsItsRowsWithoutTheirLengthWords() {
    for (boolean oneSize : new boolean[] {false, true}) {
      RowStore rows = new RowStore(memory.get(), PAGE_BYTES);
      SplittableRandom random = new SplittableRandom(oneSize ? 5 : 13);
      int n = 3000;
      long[] pointers = new long[n];
      for (int i = 0; i < n; i++) {
        // Rows of many sizes, now and then one larger than a page (a page of its own); or one size.
        int size = oneSize ? 120 : i % 700 == 350 ? 8 * (600 + random.nextInt(200))
            : 8 * (1 + random.nextInt(25));
        pointers[i] = appendRow(rows, size, random);
      }
      assertTrue(rows.numPages() > 5, "too few pages to test: " + rows.numPages());
      assertEquals(oneSize ? 128 : 0, rows.fixedRecordBytes());
      int[] order = shuffled(n, random);
      long total = rows.dataBytes();
      long[] records = new long[n];
      int[] expectedSizes = new int[n];
      for (int i = 0; i < n; i++) {
        records[i] = rows.address(pointers[order[i]]) - RowStore.RECORD_HEADER_BYTES;
        expectedSizes[i] = rows.size(pointers[order[i]]);
      }
      LazyArrival arrival = LazyArrival.sortedOver(rows::page, rows.numPages(), records, total);
      byte[] stream = arrival.stream();
      HostBuffer index = HostBuffer.allocate(8L * n);
      HostBuffer permutation = HostBuffer.allocate(4L * n);
      for (int i = 0; i < n; i++) {
        HostMemory.putLong(index.address() + 8L * i, pointers[i]);
        HostMemory.putInt(permutation.address() + 4L * i, order[i]);
      }
      try (SortedRun run = new SortedRun(memory.get(), rows, index, HostBuffer.allocate(8), permutation,
          n, 1, 0, arrival)) {
        int[] sizes = new int[n];
        run.sortedRowSizes(0, n, sizes);
        assertArrayEquals(expectedSizes, sizes, "sizes from the row index");
        // Read from the start and from inside: the rows are the stream's, byte for byte, while
        // the pages' records (the length words included) are garbage until they arrive.
        for (int from : new int[] {0, 1234}) {
          SortedStream sorted = run.stream(from);
          long offset = 0;
          for (int i = 0; i < from; i++) {
            offset += RowStore.RECORD_HEADER_BYTES + expectedSizes[i];
          }
          UnsafeRow row = new UnsafeRow(1);
          for (int i = from; i < n; i++) {
            assertTrue(sorted.next(row), "stream ended at row " + i);
            assertEquals(expectedSizes[i], row.getSizeInBytes(), "row " + i);
            int at = (int) offset + RowStore.RECORD_HEADER_BYTES;
            byte[] expected = Arrays.copyOfRange(stream, at, at + expectedSizes[i]);
            assertEquals(-1, Arrays.mismatch(expected, row.getBytes()), "row " + i);
            offset += RowStore.RECORD_HEADER_BYTES + expectedSizes[i];
          }
          assertFalse(sorted.next(row));
        }
      }
    }
  }

  private static int[] shuffled(int n, SplittableRandom random) {
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      int j = random.nextInt(i + 1);
      order[i] = order[j];
      order[j] = i;
    }
    return order;
  }

  private static long appendRow(RowStore rows, int size, SplittableRandom random) {
    byte[] bytes = new byte[size];
    random.nextBytes(bytes);
    UnsafeRow row = new UnsafeRow(1);
    row.pointTo(bytes, size);
    assertTrue(rows.tryMakeRoom(size));
    return rows.append(row);
  }

  /** Rows of 8 to 200 bytes, first word its index; returns their pointers. */
  private static long[] append(RowStore rows, int n, SplittableRandom random) {
    long[] pointers = new long[n];
    for (int i = 0; i < n; i++) {
      int size = 8 * (1 + random.nextInt(25));
      byte[] bytes = new byte[size];
      random.nextBytes(bytes);
      UnsafeRow row = new UnsafeRow(1);
      row.pointTo(bytes, size);
      assertTrue(rows.tryMakeRoom(size));
      pointers[i] = rows.append(row);
    }
    return pointers;
  }
}
