package io.gpusort.sql;

import java.io.IOException;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.unsafe.memory.MemoryAllocator;
import org.apache.spark.unsafe.memory.MemoryBlock;

/**
 * The execution memory of one sort in one task, taken from the task's {@link TaskMemoryManager}
 * in its Tungsten mode (on-heap, or off-heap when {@code spark.memory.offHeap.enabled}), as
 * Spark's own sorter takes it. Blocks for rows and row pointers are allocated in that mode; the
 * sort's native buffers (encoded keys, permutations, which the engines and the GPU's DMA read by
 * address) and the engines' working memory are counted here too, in the same mode, before they are
 * taken.
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
  private final MemoryAllocator allocator;
  private Spiller spiller;
  private long peakBytes;

  SortMemory(TaskMemoryManager taskMemory) {
    super(taskMemory, taskMemory.pageSizeBytes(), taskMemory.getTungstenMemoryMode());
    this.allocator = getMode() == MemoryMode.ON_HEAP ? MemoryAllocator.HEAP
        : MemoryAllocator.UNSAFE;
  }

  void setSpiller(Spiller spiller) {
    this.spiller = spiller;
  }

  /** The task's page size: rows are stored in blocks of about this size. */
  long pageSizeBytes() {
    return taskMemoryManager.pageSizeBytes();
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

  /** A block of {@code bytes} in this task's memory mode, counted; null when refused. */
  MemoryBlock tryAllocate(long bytes) {
    if (!tryReserve(bytes)) {
      return null;
    }
    MemoryBlock block = allocateReserved(bytes);
    if (block == null) {
      unreserve(bytes);
    }
    return block;
  }

  /**
   * A block of {@code bytes} already counted by {@link #tryReserve}; null when the JVM or the OS
   * has less memory than Spark's accounting thought (the reservation stays).
   */
  MemoryBlock allocateReserved(long bytes) {
    try {
      return allocator.allocate(bytes);
    } catch (OutOfMemoryError e) {
      return null;
    }
  }

  /** Frees a block from {@link #tryAllocate} and its count. */
  void free(MemoryBlock block) {
    long size = block.size();
    allocator.free(block);
    unreserve(size);
  }

  /** Frees a block from {@link #allocateReserved}, leaving its count held. */
  void freeReserved(MemoryBlock block) {
    allocator.free(block);
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
