package io.gpusort.sql;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A sorted stream "coming back from the device" for tests: written over the pages only as far as
 * it was awaited, so that a reader that reads before it waits reads whatever the pages held.
 */
final class LazyArrival implements RowArrival {
  private final List<HostBuffer> pages;
  private final byte[] stream;
  long arrived;
  int awaits;
  int polls;
  boolean closed;

  LazyArrival(List<HostBuffer> pages, byte[] stream) {
    this.pages = pages;
    this.stream = stream;
  }

  /**
   * The sorted stream of the records at {@code records} (addresses, in sorted order) over
   * {@code numPages} pages, which are filled with garbage first: the copies back have not begun.
   */
  static LazyArrival sortedOver(IntFunction<HostBuffer> page, int numPages, long[] records,
      long totalBytes) {
    byte[] stream = new byte[(int) totalBytes];
    long at = 0;
    for (long record : records) {
      long size = RowPages.RECORD_HEADER_BYTES + HostMemory.getLong(record);
      HostMemory.copy(null, record, stream, HostMemory.BYTE_ARRAY_OFFSET + at, size);
      at += size;
    }
    List<HostBuffer> pages = new ArrayList<>();
    for (int k = 0; k < numPages; k++) {
      pages.add(page.apply(k));
      HostMemory.fill(pages.get(k).address(), pages.get(k).sizeBytes(), (byte) 0x5A);
    }
    return new LazyArrival(pages, stream);
  }

  /** The stream's bytes. */
  byte[] stream() {
    return stream;
  }

  @Override
  public void await(long bytes) {
    assertFalse(closed, "read after the arrival was closed");
    awaits++;
    long end = Math.min(bytes, stream.length);
    long pageStart = 0;
    for (int k = 0; k < pages.size() && pageStart < end; k++) {
      long capacity = RowPages.capacityBytes(pages.get(k));
      long from = Math.max(arrived, pageStart);
      long to = Math.min(end, pageStart + capacity);
      if (from < to) {
        HostMemory.copy(stream, HostMemory.BYTE_ARRAY_OFFSET + from, null,
            pages.get(k).address() + (from - pageStart), to - from);
      }
      pageStart += capacity;
    }
    arrived = Math.max(arrived, end);
  }

  @Override
  public void poll() {
    polls++;
  }

  @Override
  public void close() {
    await(stream.length);
    closed = true;
  }
}
