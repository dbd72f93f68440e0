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
   * A buffer of {@link #sizeClassBytes}({@code sizeBytes}) from the process-wide pool,
   * uninitialised; closing it gives the memory back to the pool. For the working buffers of each sort: memory the process
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
   * Makes {@link #acquireTransferable} take page-locked memory from {@code allocator}, kept idle
   * for reuse within the same limit as the plain pool ({@link #configurePools}). The first
   * registration wins; later calls return false and change nothing.
   */
  public static boolean usePinnedAllocator(NativeAllocator allocator) {
    synchronized (HostBufferPool.class) {
      if (HostBufferPool.pinned != null) {
        return false;
      }
      HostBufferPool.pinned = HostBufferPool.watched(new HostBufferPool(allocator,
          IdleLimit.PROCESS));
      return true;
    }
  }

  /**
   * Bounds the memory this process's pools (plain and page-locked together) keep idle for reuse
   * to {@code maxIdleBytes}, and frees a pool's idle memory once it has not been used for
   * {@code idleTimeoutMillis}. Lowering the bound frees the idle memory now.
   */
  public static void configurePools(long maxIdleBytes, long idleTimeoutMillis) {
    IdleLimit limit = IdleLimit.PROCESS;
    boolean lowered = maxIdleBytes < limit.maxIdleBytes();
    limit.set(maxIdleBytes, idleTimeoutMillis);
    if (lowered || maxIdleBytes < limit.idleBytes()) {
      HostBufferPool.trimWatched();
    }
  }

  /** Bytes this process's pools keep idle now, plain and page-locked together. */
  public static long pooledIdleBytes() {
    return IdleLimit.PROCESS.idleBytes();
  }

  /** The bound set by {@link #configurePools}. */
  public static long poolMaxIdleBytes() {
    return IdleLimit.PROCESS.maxIdleBytes();
  }

  /** Frees the idle memory of this process's pools now. */
  public static void trimPools() {
    HostBufferPool.trimWatched();
  }

  /**
   * The size of the buffer that {@link #acquire} or {@link #acquireTransferable} returns for
   * {@code sizeBytes}: what a caller that accounts memory reserves before taking one.
   */
  public static long sizeClassBytes(long sizeBytes) {
    checkSize(sizeBytes);
    return HostBufferPool.sizeClass(sizeBytes);
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
