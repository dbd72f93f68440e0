package io.gpusort.memory;

import io.gpusort.config.GpuSortConf;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bound on idle memory that one or more {@link HostBufferPool}s keep for reuse, and how long
 * a pool may sit unused before its idle blocks are freed. Pools sharing a limit count their idle
 * bytes together: the process's plain and page-locked pools share {@link #PROCESS}.
 */
final class IdleLimit {
  /**
   * The limit of this process's pools, at the defaults of its settings until
   * {@link HostBuffer#configurePools} sets it.
   */
  static final IdleLimit PROCESS = new IdleLimit(GpuSortConf.POOL_MAX_IDLE_BYTES.defaultValue(),
      GpuSortConf.POOL_IDLE_TIMEOUT.defaultValue());

  private volatile long maxIdleBytes;
  private volatile long idleTimeoutMillis;
  private final AtomicLong idleBytes = new AtomicLong();

  IdleLimit(long maxIdleBytes, long idleTimeoutMillis) {
    set(maxIdleBytes, idleTimeoutMillis);
  }

  void set(long maxIdleBytes, long idleTimeoutMillis) {
    if (maxIdleBytes < 0 || idleTimeoutMillis < 0) {
      throw new IllegalArgumentException("negative pool limit: maxIdleBytes=" + maxIdleBytes
          + " idleTimeoutMillis=" + idleTimeoutMillis);
    }
    this.maxIdleBytes = maxIdleBytes;
    this.idleTimeoutMillis = idleTimeoutMillis;
  }

  long maxIdleBytes() {
    return maxIdleBytes;
  }

  long idleTimeoutMillis() {
    return idleTimeoutMillis;
  }

  /** Idle bytes of every pool under this limit. */
  long idleBytes() {
    return idleBytes.get();
  }

  /** Counts {@code bytes} more as idle if that stays within the limit; false (nothing counted) if not. */
  boolean tryAddIdle(long bytes) {
    while (true) {
      long idle = idleBytes.get();
      if (idle + bytes > maxIdleBytes) {
        return false;
      }
      if (idleBytes.compareAndSet(idle, idle + bytes)) {
        return true;
      }
    }
  }

  void removeIdle(long bytes) {
    idleBytes.addAndGet(-bytes);
  }
}
