package io.gpusort.memory;

/**
 * How a GPU engine page-locks the arena's memory (spark.gpusort.memory.pinned.method). Measured on
 * the lent H100 host (2026-12-07, {@code kernels/gpu-host/pin-cost.c}, 8 GiB by two threads while
 * a third maps, touches and unmaps 256 KiB again and again, 67 us a step alone): the driver's own
 * allocation pinned 2.7 GiB/s and held that third thread up to 83 ms at the 99th percentile;
 * memory of the process's own, its pages faulted in first and then registered, 4.4 GiB/s with
 * small pages and 14 GiB/s with huge pages, the third thread's steps at 0.2 and 0.08 ms.
 */
public enum PinMethod {
  /**
   * The process maps the memory, asks for transparent huge pages, faults each page in and then
   * registers it with the driver; where huge pages fault in slowly (a host whose memory must be
   * compacted first), the following chunks take ordinary pages.
   */
  HUGEPAGES,
  /** As {@link #HUGEPAGES} on ordinary pages. */
  PAGES,
  /**
   * The driver allocates and page-locks it at once ({@code cuMemHostAlloc}): holds the process's
   * memory map while it faults every page in, so other threads that map memory or load classes
   * wait.
   */
  DRIVER
}
