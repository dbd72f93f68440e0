package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;

/**
 * A run's row pages sent to an engine's device while the run is still being taken in
 * ({@link SortEngine#openRowUpload}): each page goes as soon as it is full, so that by the time the
 * run is sealed most of its rows are already there and {@link SortEngine#gatherRows(RowPages,
 * HostBuffer, RowUpload)} sends only the rest. A page handed over must not change until the
 * gather has started or the upload is closed.
 *
 * <p>Used by one thread. An upload that cannot go on (device memory short, a page not
 * page-locked, a failed copy) stops silently: the gather then sends what it lacks itself.
 */
public interface RowUpload extends AutoCloseable {
  /**
   * Starts copying the first {@code usedBytes} bytes of {@code page}, the run's next page, to the
   * device; does not wait for the copy.
   */
  void add(HostBuffer page, long usedBytes);

  /** Pages sent so far, a prefix of the run's pages; 0 once the upload stopped. */
  int numPages();

  /** Waits for copies in flight and gives back what the device holds for them; idempotent. */
  @Override
  void close();
}
