package io.gpusort.memory;

/**
 * An owned block of off-heap host memory, addressed by byte offset. {@link #close()} frees it (or,
 * for a buffer from {@link #acquire}, gives it back to the pool) and may be called more than once.
 * Accessors do not check bounds beyond Java assertions: callers stay within {@link #sizeBytes()}.
 */
public final class HostBuffer implements AutoCloseable {
  private final long sizeBytes;
  private final HostBufferPool pool;
  private long address;

  private HostBuffer(long address, long sizeBytes, HostBufferPool pool) {
    this.address = address;
    this.sizeBytes = sizeBytes;
    this.pool = pool;
  }

  /** Allocates {@code sizeBytes} of uninitialised off-heap memory. */
  public static HostBuffer allocate(long sizeBytes) {
    checkSize(sizeBytes);
    return new HostBuffer(HostMemory.allocate(sizeBytes), sizeBytes, null);
  }

  /**
   * A buffer of at least {@code sizeBytes} from the process-wide pool, uninitialised; closing it
   * gives the memory back to the pool. For the working buffers of each sort: memory the process
   * has touched once is much cheaper to use again than fresh pages (measured on the 2-core CI
   * machines: about 40 us per fresh 4 KiB page, 1 s for the 240 MB of a 10M-row sort).
   */
  public static HostBuffer acquire(long sizeBytes) {
    checkSize(sizeBytes);
    return HostBufferPool.SHARED.acquire(sizeBytes);
  }

  /**
   * Like {@link #acquire}, from page-locked memory once a GPU engine has registered its allocator
   * with {@link #usePinnedAllocator}: the buffers that go to and come from the device (encoded
   * keys, permutations), which the engine can then transfer with no staging copy. Before that, or with
   * no GPU engine, the same as {@link #acquire}.
   */
  public static HostBuffer acquireTransferable(long sizeBytes) {
    checkSize(sizeBytes);
    HostBufferPool pool = HostBufferPool.pinned;
    if (pool != null) {
      try {
        return pool.acquire(sizeBytes);
      } catch (RuntimeException e) {
        // Page-locked memory is limited by the OS: plain memory still works, only slower to move.
      }
    }
    return HostBufferPool.SHARED.acquire(sizeBytes);
  }

  /**
   * Makes {@link #acquireTransferable} take page-locked memory from {@code allocator}, keeping at
   * most {@code maxIdleBytes} of it for reuse. The first registration wins; later calls return
   * false and change nothing.
   */
  public static boolean usePinnedAllocator(NativeAllocator allocator, long maxIdleBytes) {
    synchronized (HostBufferPool.class) {
      if (HostBufferPool.pinned != null) {
        return false;
      }
      HostBufferPool.pinned = new HostBufferPool(allocator, maxIdleBytes);
      return true;
    }
  }

  /** Whether this buffer is page-locked memory that a GPU engine can DMA to and from directly. */
  public boolean isPinned() {
    return pool != null && pool.pinned();
  }

  private static void checkSize(long sizeBytes) {
    if (sizeBytes < 0) {
      throw new IllegalArgumentException("negative buffer size: " + sizeBytes);
    }
  }

  static HostBuffer pooled(long address, long sizeBytes, HostBufferPool pool) {
    return new HostBuffer(address, sizeBytes, pool);
  }

  /** The native address of byte 0; valid until {@link #close()}. */
  public long address() {
    checkOpen();
    return address;
  }

  public long sizeBytes() {
    return sizeBytes;
  }

  public boolean isClosed() {
    return address == 0;
  }

  public long getLong(long byteOffset) {
    assert byteOffset >= 0 && byteOffset + 8 <= sizeBytes : byteOffset;
    return HostMemory.getLong(address + byteOffset);
  }

  public void putLong(long byteOffset, long value) {
    assert byteOffset >= 0 && byteOffset + 8 <= sizeBytes : byteOffset;
    HostMemory.putLong(address + byteOffset, value);
  }

  public int getInt(long byteOffset) {
    assert byteOffset >= 0 && byteOffset + 4 <= sizeBytes : byteOffset;
    return HostMemory.getInt(address + byteOffset);
  }

  public void putInt(long byteOffset, int value) {
    assert byteOffset >= 0 && byteOffset + 4 <= sizeBytes : byteOffset;
    HostMemory.putInt(address + byteOffset, value);
  }

  private void checkOpen() {
    if (address == 0) {
      throw new IllegalStateException("host buffer of " + sizeBytes + " bytes is closed");
    }
  }

  @Override
  public synchronized void close() {
    if (address != 0) {
      if (pool != null) {
        pool.release(address, sizeBytes);
      } else {
        HostMemory.free(address, sizeBytes);
      }
      address = 0;
    }
  }
}
