package io.gpusort.engine;

import io.gpusort.memory.Tally;

/**
 * Counts of this process's sorts on the engines, for the plugin's metrics (Spark's metrics
 * system): the SQL node's metrics show the same figures per query, these add them up for the
 * executor. Updated by the sort operator after each engine call (the merges by the engine that
 * merged); read at any time.
 */
public final class EngineStats {
  private static final Tally CALLS = new Tally();
  private static final Tally ROWS = new Tally();
  private static final Tally GPU_ROWS = new Tally();
  private static final Tally BYTES_TO_DEVICE = new Tally();
  private static final Tally BYTES_FROM_DEVICE = new Tally();
  private static final Tally FALLBACKS = new Tally();
  private static final Tally SORT_NANOS = new Tally();
  private static final Tally MERGED_ROWS = new Tally();
  private static final Tally MERGED_RUNS = new Tally();
  private static final Tally DEVICE_RETRIES = new Tally();
  private static final Tally DEVICE_ALLOCS = new Tally();
  private static final Tally DEVICE_ALLOC_NANOS = new Tally();
  /** This thread's rows and sort nanoseconds: a Spark task runs on one thread. */
  private static final ThreadLocal<long[]> THREAD = ThreadLocal.withInitial(() -> new long[2]);

  private EngineStats() {}

  /**
   * One engine call of {@code chunks} batches: {@code rows} rows whose keys took {@code keyBytes};
   * on a GPU engine the keys went to the device and a 4-byte row index came back for each row.
   */
  public static void recordCall(SortEngine engine, int chunks, long rows, long keyBytes) {
    CALLS.add(chunks);
    ROWS.add(rows);
    THREAD.get()[0] += rows;
    if (isGpu(engine)) {
      GPU_ROWS.add(rows);
      BYTES_TO_DEVICE.add(keyBytes);
      BYTES_FROM_DEVICE.add(4L * rows);
    }
  }

  /** A partition a GPU engine failed on, sorted on the CPU engine instead. */
  public static void recordFallback() {
    FALLBACKS.increment();
  }

  /**
   * One {@link SortEngine#sortRuns} call that a device answered by merging the {@code runs}
   * non-empty sorted runs of {@code rows} rows (rather than sorting their concatenation).
   */
  public static void recordMerge(long rows, int runs) {
    MERGED_ROWS.add(rows);
    MERGED_RUNS.add(runs);
  }

  /**
   * A device allocation that failed and was answered without the CPU engine: by waiting for
   * memory, trying again in smaller pieces, sorting instead of merging, or gathering on the host.
   */
  public static void recordDeviceRetry() {
    DEVICE_RETRIES.increment();
  }

  /**
   * A call into the device's driver that took or gave back device memory ({@code cuMemAlloc},
   * {@code cuMemFree}) and took {@code nanos}: the first query pays for these, later ones reuse
   * what the engine keeps.
   */
  public static void recordDeviceAlloc(long nanos) {
    DEVICE_ALLOCS.increment();
    DEVICE_ALLOC_NANOS.add(nanos);
  }

  /** Calls that took or gave back device memory ({@link #recordDeviceAlloc}). */
  public static long deviceAllocs() {
    return DEVICE_ALLOCS.sum();
  }

  /** Time spent in them. */
  public static long deviceAllocNanos() {
    return DEVICE_ALLOC_NANOS.sum();
  }

  /** Failed device allocations answered on the device or the host ({@link #recordDeviceRetry}). */
  public static long deviceRetries() {
    return DEVICE_RETRIES.sum();
  }

  /** Rows put in order by merging sorted runs on a device ({@link #recordMerge}). */
  public static long mergedRows() {
    return MERGED_ROWS.sum();
  }

  /** Sorted runs merged on a device ({@link #recordMerge}). */
  public static long mergedRuns() {
    return MERGED_RUNS.sum();
  }

  /** Time spent sorting (encoding, engine calls, tie-breaks, merges). */
  public static void recordSortNanos(long nanos) {
    SORT_NANOS.add(nanos);
    THREAD.get()[1] += nanos;
  }

  /** Rows sorted by the calling thread so far. */
  public static long threadRows() {
    return THREAD.get()[0];
  }

  /** Sort time of the calling thread so far. */
  public static long threadSortNanos() {
    return THREAD.get()[1];
  }

  /** Whether the engine sorts on a device (its keys go over a bus), by its name. */
  public static boolean isGpu(SortEngine engine) {
    return !"cpu".equals(engine.name());
  }

  public static long engineCalls() {
    return CALLS.sum();
  }

  public static long rows() {
    return ROWS.sum();
  }

  public static long gpuRows() {
    return GPU_ROWS.sum();
  }

  public static long bytesToDevice() {
    return BYTES_TO_DEVICE.sum();
  }

  public static long bytesFromDevice() {
    return BYTES_FROM_DEVICE.sum();
  }

  public static long fallbacks() {
    return FALLBACKS.sum();
  }

  public static long sortNanos() {
    return SORT_NANOS.sum();
  }
}
