package io.gpusort.memory;

import java.util.function.BooleanSupplier;

/**
 * An owned block of off-heap host memory, addressed by byte offset. {@link #close()} frees it (or,
 * for a buffer from {@link #acquire}, gives it back to the pool) and may be called more than once.
 * Accessors do not check bounds beyond Java assertions: callers stay within {@link #sizeBytes()}.
 */
public final class HostBuffer implements AutoCloseable {
  private static final Tally ACQUIRE_NANOS = new Tally();
  private final long sizeBytes;
  private final HostBufferPool pool;
  private final PinnedArena arena;
  private long address;

  private HostBuffer(long address, long sizeBytes, HostBufferPool pool, PinnedArena arena) {
    this.address = address;
    this.sizeBytes = sizeBytes;
    this.pool = pool;
    this.arena = arena;
  }

  /** Allocates {@code sizeBytes} of uninitialised off-heap memory. */
  public static HostBuffer allocate(long sizeBytes) {
    checkSize(sizeBytes);
    return new HostBuffer(HostMemory.allocate(sizeBytes), sizeBytes, null, null);
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
   * Like {@link #acquire}, from the process's page-locked arena once a GPU engine has started it
   * ({@link #usePinnedAllocator}): the buffers that go to and come from the device (row pages,
   * encoded keys, permutations), which the engine then moves by DMA with no staging copy. Where
   * the arena has no free range this large (full, still being pinned, or none), plain pooled
   * memory, which a GPU engine moves through its staging buffers: this never pins memory itself
   * and never waits for pinning.
   */
  public static HostBuffer acquireTransferable(long sizeBytes) {
    checkSize(sizeBytes);
    long start = System.nanoTime();
    try {
      PinnedArena arena = ProcessArena.arena();
      if (arena != null) {
        long classBytes = HostBufferPool.sizeClass(sizeBytes);
        long address = arena.tryAllocate(classBytes);
        if (address != 0) {
          return new HostBuffer(address, classBytes, null, arena);
        }
      }
      return HostBufferPool.SHARED.acquire(sizeBytes);
    } finally {
      ACQUIRE_NANOS.add(System.nanoTime() - start);
    }
  }

  /**
   * Sets how large the process's page-locked arena is made when a GPU engine first opens; once it
   * is made, later settings change nothing (it lives as long as the process).
   */
  public static void configureArena(ArenaSettings settings) {
    ProcessArena.configure(settings);
  }

  /**
   * Makes the arena's pinning wait before each chunk while {@code busy} says so (sorts running on
   * the device, which the pinning would hold back); for the arena now and one made later.
   */
  public static void pausePinningWhile(BooleanSupplier busy) {
    ProcessArena.pauseWhile(busy);
  }

  /**
   * Starts the process's page-locked arena on {@code allocator} (its size from {@link
   * #configureArena} and the host's share, {@code devicesOnHost} GPUs sharing the host), pinned by
   * background threads. The first registration wins; later calls return false and change
   * nothing.
   */
  public static boolean usePinnedAllocator(NativeAllocator allocator, int devicesOnHost) {
    return ProcessArena.start(allocator, devicesOnHost);
  }

  /**
   * How a GPU engine is to page-lock the arena's memory: from the settings given to {@link
   * #configureArena} last, or those the arena was made with.
   */
  public static PinMethod pinMethod() {
    return ProcessArena.settings().pinMethod();
  }

  /** Whether the process's arena is made (its settings can no longer change). */
  public static boolean arenaStarted() {
    return ProcessArena.arena() != null;
  }

  /** The process arena's figures; {@link PinnedArena.Stats#NONE} before a GPU engine opens. */
  public static PinnedArena.Stats arenaStats() {
    PinnedArena arena = ProcessArena.arena();
    return arena == null ? PinnedArena.Stats.NONE : arena.stats();
  }

  /** The process arena's {@link PinnedArena#pinningState}; "no arena" before one is made. */
  public static String arenaPinningState() {
    PinnedArena arena = ProcessArena.arena();
    return arena == null ? "no arena"
        : arena.pinningState() + " (" + ProcessArena.busyState() + ")";
  }

  /**
   * Waits until the process arena is pinned whole (or pinning stopped), at most {@code
   * timeoutMillis}; true if it is whole. For benchmarks and tests that must see page-locked
   * buffers; sorts never wait.
   */
  public static boolean awaitArena(long timeoutMillis) throws InterruptedException {
    PinnedArena arena = ProcessArena.arena();
    return arena != null && arena.awaitReady(timeoutMillis);
  }

  /** Nanoseconds the threads of this process have spent taking buffers for the device. */
  public static long acquireNanos() {
    return ACQUIRE_NANOS.sum();
  }

  /**
   * Bounds the memory this process's pool of plain buffers keeps idle for reuse
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

  /** Bytes this process's pool of plain buffers keeps idle now. */
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
    return arena != null;
  }

  private static void checkSize(long sizeBytes) {
    if (sizeBytes < 0) {
      throw new IllegalArgumentException("negative buffer size: " + sizeBytes);
    }
  }

  static HostBuffer pooled(long address, long sizeBytes, HostBufferPool pool) {
    return new HostBuffer(address, sizeBytes, pool, null);
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
      if (arena != null) {
        arena.release(address, sizeBytes);
      } else if (pool != null) {
        pool.release(address, sizeBytes);
      } else {
        HostMemory.free(address, sizeBytes);
      }
      address = 0;
    }
  }
}
