package io.gpusort.memory;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Off-heap blocks kept for reuse, in size classes (four per power of two, so a block wastes at
 * most a quarter of its size), within an {@link IdleLimit}: a block released while the limit's
 * idle bytes are full is freed at once, and a pool unused for the limit's idle timeout frees all
 * its idle blocks. Idle blocks do not count in {@link HostMemory#bytesInUse()}: only buffers
 * handed out do, so leak checks see a pooled buffer that was not closed exactly as they see an
 * allocated one.
 */
final class HostBufferPool {
  /** Pools that the trimming thread watches: the process's plain pool. */
  private static final List<HostBufferPool> WATCHED = new CopyOnWriteArrayList<>();

  /** The plain pool of this process. */
  static final HostBufferPool SHARED = watched(new HostBufferPool(NativeAllocator.UNSAFE,
      IdleLimit.PROCESS));

  static final long MIN_CLASS_BYTES = 64 << 10;
  private static Thread trimmer;

  private final NativeAllocator allocator;
  private final IdleLimit limit;
  private final Map<Long, ArrayDeque<Long>> idle = new HashMap<>();
  private long idleBytes;
  private long lastUseMillis = System.currentTimeMillis();
  /** Whether the trimming thread watches this pool. */
  private volatile boolean watched;

  HostBufferPool(NativeAllocator allocator, IdleLimit limit) {
    this.allocator = allocator;
    this.limit = limit;
  }

  /** Registers a pool of the process with the thread that frees idle memory after the timeout. */
  static HostBufferPool watched(HostBufferPool pool) {
    pool.watched = true;
    WATCHED.add(pool);
    return pool;
  }

  /**
   * A buffer of at least {@code sizeBytes}: an idle block of its size class, else a new one. A new
   * block is allocated outside the pool's lock: pinning a large block takes long, and the tasks
   * that find an idle block (or free one) meanwhile need not wait for it.
   */
  HostBuffer acquire(long sizeBytes) {
    long classBytes = sizeClass(sizeBytes);
    long address = takeIdle(classBytes);
    if (address == 0) {
      address = HostMemory.allocate(allocator, classBytes);
    }
    return HostBuffer.pooled(address, classBytes, this);
  }

  /** An idle block of {@code classBytes}, now counted in use, or 0 if there is none. */
  private synchronized long takeIdle(long classBytes) {
    lastUseMillis = System.currentTimeMillis();
    ArrayDeque<Long> free = idle.get(classBytes);
    if (free == null || free.isEmpty()) {
      return 0;
    }
    idleBytes -= classBytes;
    limit.removeIdle(classBytes);
    HostMemory.track(classBytes);
    return free.pop();
  }

  /**
   * Takes a block back: kept idle while the limit allows, else freed, outside the pool's lock
   * (freeing page-locked memory waits for the device).
   */
  void release(long address, long classBytes) {
    if (!keepIdle(address, classBytes)) {
      HostMemory.free(allocator, address, classBytes);
      return;
    }
    if (watched) {
      ensureTrimmer();
    }
  }

  private synchronized boolean keepIdle(long address, long classBytes) {
    lastUseMillis = System.currentTimeMillis();
    if (!limit.tryAddIdle(classBytes)) {
      return false;
    }
    idle.computeIfAbsent(classBytes, k -> new ArrayDeque<>()).push(address);
    idleBytes += classBytes;
    HostMemory.track(-classBytes);
    return true;
  }

  /** Frees every idle block (taken out under the lock, freed outside it). */
  void trim() {
    Map<Long, ArrayDeque<Long>> taken;
    synchronized (this) {
      if (idle.isEmpty()) {
        return;
      }
      taken = new HashMap<>(idle);
      idle.clear();
      limit.removeIdle(idleBytes);
      idleBytes = 0;
    }
    for (Map.Entry<Long, ArrayDeque<Long>> e : taken.entrySet()) {
      for (long address : e.getValue()) {
        HostMemory.track(e.getKey());
        HostMemory.free(allocator, address, e.getKey());
      }
    }
  }

  /** Frees every idle block if the pool has not been used for its limit's idle timeout. */
  void trimIfUnusedSince(long nowMillis) {
    boolean unused;
    synchronized (this) {
      unused = idleBytes > 0 && nowMillis - lastUseMillis >= limit.idleTimeoutMillis();
    }
    if (unused) {
      trim();
    }
  }

  synchronized long idleBytes() {
    return idleBytes;
  }

  /** Frees the idle blocks of every watched pool now. */
  static void trimWatched() {
    for (HostBufferPool pool : WATCHED) {
      pool.trim();
    }
  }

  /** Starts, once, the daemon thread that frees the idle blocks of pools left unused. */
  private static synchronized void ensureTrimmer() {
    if (trimmer != null) {
      return;
    }
    trimmer = new Thread(HostBufferPool::trimLoop, "gpusort-host-pool-trimmer");
    trimmer.setDaemon(true);
    trimmer.start();
  }

  private static void trimLoop() {
    while (true) {
      long timeoutMillis = IdleLimit.PROCESS.idleTimeoutMillis();
      try {
        // A quarter of the timeout: an unused pool is emptied within 1.25 timeouts.
        Thread.sleep(Math.max(10, Math.min(1000, timeoutMillis / 4)));
      } catch (InterruptedException e) {
        return;
      }
      long now = System.currentTimeMillis();
      for (HostBufferPool pool : WATCHED) {
        pool.trimIfUnusedSince(now);
      }
    }
  }

  /** The block size a request of {@code sizeBytes} gets: four classes per power of two. */
  static long sizeClass(long sizeBytes) {
    long size = Math.max(MIN_CLASS_BYTES, sizeBytes);
    long highest = Long.highestOneBit(size);
    if (highest == size) {
      return size;
    }
    long step = highest >> 2;
    return (size + step - 1) / step * step;
  }
}
