package io.gpusort.engine.cuda;

import jcuda.driver.CUdeviceptr;

/**
 * Device memory from a {@link DeviceMemoryPool}: {@link #close()} gives it back to the pool, and
 * may be called more than once.
 */
final class DeviceBuffer implements AutoCloseable {
  private final DeviceMemoryPool pool;
  private final CUdeviceptr pointer;
  private final long sizeBytes;
  private boolean closed;

  DeviceBuffer(DeviceMemoryPool pool, CUdeviceptr pointer, long sizeBytes) {
    this.pool = pool;
    this.pointer = pointer;
    this.sizeBytes = sizeBytes;
  }

  CUdeviceptr pointer() {
    if (closed) {
      throw new IllegalStateException("device buffer of " + sizeBytes + " bytes is closed");
    }
    return pointer;
  }

  /** A pointer {@code byteOffset} bytes into the buffer. */
  CUdeviceptr at(long byteOffset) {
    return byteOffset == 0 ? pointer() : pointer().withByteOffset(byteOffset);
  }

  long sizeBytes() {
    return sizeBytes;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      pool.release(pointer, sizeBytes);
    }
  }
}
