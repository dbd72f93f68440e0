package io.gpusort.sql;

import io.gpusort.memory.HostBuffer;
import java.io.IOException;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.TaskMemoryManager;

/**
 * The execution memory of one sort in one task, taken from the task's {@link TaskMemoryManager}
 * in its Tungsten mode (on-heap, or off-heap when {@code spark.memory.offHeap.enabled}), as
 * Spark's own sorter takes it. The sort's buffers are native memory (row pages, row index, encoded
 * keys, permutations: the engines and the GPU's DMA read them by address, page-locked once a GPU
 * engine runs), counted here in the task's mode before they are taken, as is the engines' working
 * memory.
 *
 * <p>When another consumer of the task needs memory, Spark calls {@link #spill}, which asks the
 * sort to write what it holds to disk. Requests that come from the sort's own acquisitions are
 * answered with 0: the sort spills explicitly when it is refused, never from inside its own call.
 * Requests from another thread are answered with 0 too, since the sort's state belongs to its
 * task thread.
 */
final class SortMemory extends MemoryConsumer {
  /** What the sort does when Spark asks it to free memory. */
  interface Spiller {
    /** Writes what can be written to disk and frees it; returns the bytes freed. */
    long spillForOthers() throws IOException;
  }

  private final Thread owner = Thread.currentThread();
  private Spiller spiller;
  private long peakBytes;

  SortMemory(TaskMemoryManager taskMemory) {
    super(taskMemory, taskMemory.pageSizeBytes(), taskMemory.getTungstenMemoryMode());
  }

  void setSpiller(Spiller spiller) {
    this.spiller = spiller;
  }

  /** Counts {@code bytes} more as held; false, with nothing counted, when Spark refuses them. */
  boolean tryReserve(long bytes) {
    if (bytes <= 0) {
      return true;
    }
    long granted = acquireMemory(bytes);
    if (granted < bytes) {
      freeMemory(granted);
      return false;
    }
    peakBytes = Math.max(peakBytes, getUsed());
    return true;
  }

  /** Gives back {@code bytes} counted by {@link #tryReserve}. */
  void unreserve(long bytes) {
    if (bytes > 0) {
      freeMemory(bytes);
    }
  }

  /**
   * Native memory of {@code bytes} or more that the device can read (page-locked once a GPU engine
   * runs), counted in this task's mode; null when Spark or the OS refused it.
   */
  HostBuffer tryAcquireNative(long bytes) {
    long counted = HostBuffer.sizeClassBytes(bytes);
    if (!tryReserve(counted)) {
      return null;
    }
    try {
      return HostBuffer.acquireTransferable(bytes);
    } catch (OutOfMemoryError e) {
      unreserve(counted);
      return null;
    }
  }

  /** Frees a buffer from {@link #tryAcquireNative} and its count. */
  void releaseNative(HostBuffer buffer) {
    long size = buffer.sizeBytes();
    buffer.close();
    unreserve(size);
  }

  /** The most bytes this sort held at once. */
  long peakBytes() {
    return peakBytes;
  }

  @Override
  public long spill(long size, MemoryConsumer trigger) throws IOException {
    if (trigger == this || spiller == null || Thread.currentThread() != owner) {
      return 0;
    }
    return spiller.spillForOthers();
  }

  @Override
  public String toString() {
    return "GpuSort memory (" + getUsed() + " bytes held, " + getMode() + ")";
  }
}
