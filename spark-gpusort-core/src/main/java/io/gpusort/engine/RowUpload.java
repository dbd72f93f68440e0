package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;

/**
 * A run's row pages sent to an engine's device while the run is still being taken in
 * ({@link SortEngine#openRowUpload}): each page goes as soon as it is full, so that by the time the
 * run is sealed most of its rows are already there and {@link SortEngine#gatherRows(RowPages,
 * HostBuffer, RowUpload)} sends only the rest. A page handed over must not change until the
 * gather has started or the upload is closed. Where the upload {@link #takesStagedRows}, rows may
 * instead go through a few staging buffers ({@link #send}), their pages written only by the
 * gather's copy back, or by {@link #restorePages} before the host reads them.
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

  /**
   * Whether this upload takes rows staged outside their pages ({@link #send}): the intake may then
   * write each stretch of rows into a small buffer kept in the CPU's cache and leave the page
   * itself unwritten until the sorted rows come back into it.
   */
  default boolean takesStagedRows() {
    return false;
  }

  /**
   * Starts copying {@code bytes} bytes at {@code sourceOffset} of {@code source} to the device as
   * the bytes at {@code offset} of {@code page}, the run's page being filled (the last one sent
   * to, or the next), the stretches of a page coming in order and back to back. {@code source}
   * may be the page itself; otherwise the page need not hold the bytes: the upload brings them
   * back into it should it stop, or on {@link #restorePages}. Does not wait for the copy: {@code
   * source} may be written again after {@link #awaitRead}.
   *
   * @return false, nothing sent, where the upload has stopped or stops now; every page it was
   *     given then holds its bytes, and the caller writes this stretch into the page itself
   * @throws IllegalStateException where the upload stopped and could not bring rows back: they
   *     are lost, and the task must fail
   */
  default boolean send(HostBuffer page, long offset, HostBuffer source, long sourceOffset,
      long bytes) {
    return false;
  }

  /**
   * Whether {@link #send} can copy from {@code source} while the task goes on (a GPU's DMA needs
   * page-locked memory).
   */
  default boolean canSendFrom(HostBuffer source) {
    return false;
  }

  /** Waits until no copy of this upload reads {@code source} any more. */
  default void awaitRead(HostBuffer source) {}

  /**
   * Brings back into their pages the bytes {@link #send} took from elsewhere, so that the pages
   * hold every row; a no-op where they do already.
   *
   * @throws IllegalStateException where the device failed and the rows are lost
   */
  default void restorePages() {}

  /** Pages sent so far, a prefix of the run's pages; 0 once the upload stopped. */
  int numPages();

  /** Waits for copies in flight and gives back what the device holds for them; idempotent. */
  @Override
  void close();
}
