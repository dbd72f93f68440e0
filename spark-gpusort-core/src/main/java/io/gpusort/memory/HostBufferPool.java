package io.gpusort.memory;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Off-heap blocks kept for reuse, in power-of-two size classes, up to a cap of idle bytes. Idle
 * blocks do not count in {@link HostMemory#bytesInUse()}: only buffers handed out do, so leak
 * checks see a pooled buffer that was not closed exactly as they see an allocated one.
 */
final class HostBufferPool {
  /** The pool of this process; its idle cap comes from {@code gpusort.memory.poolMaxIdleBytes}. */
  static final HostBufferPool SHARED = new HostBufferPool(
      Long.getLong("gpusort.memory.poolMaxIdleBytes", 2L << 30));

  /** The pinned pool, once a GPU engine has registered its allocator; null before. */
  static volatile HostBufferPool pinned;

  private static final long MIN_CLASS_BYTES = 64 << 10;

  private final NativeAllocator allocator;
  private final long maxIdleBytes;
  private final Map<Long, ArrayDeque<Long>> idle = new HashMap<>();
  private long idleBytes;

  HostBufferPool(long maxIdleBytes) {
    this(NativeAllocator.UNSAFE, maxIdleBytes);
  }

  HostBufferPool(NativeAllocator allocator, long maxIdleBytes) {
    this.allocator = allocator;
    this.maxIdleBytes = maxIdleBytes;
  }

  boolean pinned() {
    return allocator.pinned();
  }

  synchronized HostBuffer acquire(long sizeBytes) {
    long classBytes = sizeClass(sizeBytes);
    ArrayDeque<Long> free = idle.get(classBytes);
    long address;
    if (free != null && !free.isEmpty()) {
      address = free.pop();
      idleBytes -= classBytes;
      HostMemory.track(classBytes);
    } else {
      address = HostMemory.allocate(allocator, classBytes);
    }
    return HostBuffer.pooled(address, classBytes, this);
  }

  synchronized void release(long address, long classBytes) {
    if (idleBytes + classBytes > maxIdleBytes) {
      HostMemory.free(allocator, address, classBytes);
      return;
    }
    idle.computeIfAbsent(classBytes, k -> new ArrayDeque<>()).push(address);
    idleBytes += classBytes;
    HostMemory.track(-classBytes);
  }

  /** Frees every idle block. */
  synchronized void trim() {
    for (Map.Entry<Long, ArrayDeque<Long>> e : idle.entrySet()) {
      for (long address : e.getValue()) {
        HostMemory.track(e.getKey());
        HostMemory.free(allocator, address, e.getKey());
      }
    }
    idle.clear();
    idleBytes = 0;
  }

  synchronized long idleBytes() {
    return idleBytes;
  }

  private static long sizeClass(long sizeBytes) {
    long size = Math.max(MIN_CLASS_BYTES, sizeBytes);
    long highest = Long.highestOneBit(size);
    return highest == size ? size : highest << 1;
  }
}
