package io.gpusort.engine;

/**
 * The sorted stream of a gather ({@link SortEngine#gatherRows(RowPages,
 * io.gpusort.memory.HostBuffer, RowUpload)}) on its way back into the pages: the engine returns
 * once the copies are under way, and a reader waits for each stretch of the stream before it reads
 * it, so that the output starts with the first page back rather than the last.
 *
 * <p>{@link #close} waits for the rest, and must be called before the pages are freed or written.
 */
public interface RowArrival extends AutoCloseable {
  /** A stream already in its pages. */
  RowArrival DONE = new RowArrival() {
    @Override
    public void await(long bytes) {}

    @Override
    public void close() {}
  };

  /**
   * Waits until the first {@code bytes} bytes of the sorted stream are in the pages.
   *
   * @throws IllegalStateException if the device failed while copying them: the rows are lost
   */
  void await(long bytes);

  /**
   * Gives back, without waiting, what the engine holds for the stream if every byte of it is
   * already back; a reader calls it now and then, so that a stream read slowly holds nothing on
   * the device once it has arrived.
   */
  default void poll() {}

  /**
   * Nanoseconds the copies back took on the device's clock, once {@link #close} returned; 0 where
   * not measured.
   */
  default long fromDeviceNanos() {
    return 0;
  }

  /** Waits for the whole stream and frees what the device held for it; idempotent. */
  @Override
  void close();
}
