package io.gpusort.memory;

/**
 * Where a pool's blocks come from: plain off-heap memory, or page-locked ("pinned") memory that a
 * GPU engine registers so that its transfers run at full bus speed with no staging copy.
 */
public interface NativeAllocator {
  /** Returns the address of {@code sizeBytes} of new memory; throws if none can be had. */
  long allocate(long sizeBytes);

  /** Frees a block returned by {@link #allocate} with the same size. */
  void free(long address, long sizeBytes);

  /** Whether blocks are page-locked and can be the source or target of asynchronous DMA. */
  boolean pinned();

  /**
   * Whether {@link #allocate} holds the process's memory map while it runs, so that every other
   * thread that maps memory or loads a class waits for it (the driver's own page-locking
   * allocation): such an allocator must not run beside tasks.
   */
  default boolean holdsMemoryMap() {
    return false;
  }

  /** Plain off-heap memory. */
  NativeAllocator UNSAFE = new NativeAllocator() {
    @Override
    public long allocate(long sizeBytes) {
      return HostMemory.UNSAFE.allocateMemory(Math.max(1, sizeBytes));
    }

    @Override
    public void free(long address, long sizeBytes) {
      HostMemory.UNSAFE.freeMemory(address);
    }

    @Override
    public boolean pinned() {
      return false;
    }
  };
}
