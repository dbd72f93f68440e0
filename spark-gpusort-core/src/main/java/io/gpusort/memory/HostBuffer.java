package io.gpusort.memory;

/**
 * An owned block of off-heap host memory, addressed by byte offset. {@link #close()} frees it and
 * may be called more than once. Accessors do not check bounds beyond Java assertions: callers stay
 * within {@link #sizeBytes()}.
 */
public final class HostBuffer implements AutoCloseable {
  private final long sizeBytes;
  private long address;

  private HostBuffer(long address, long sizeBytes) {
    this.address = address;
    this.sizeBytes = sizeBytes;
  }

  /** Allocates {@code sizeBytes} of uninitialised off-heap memory. */
  public static HostBuffer allocate(long sizeBytes) {
    if (sizeBytes < 0) {
      throw new IllegalArgumentException("negative buffer size: " + sizeBytes);
    }
    return new HostBuffer(HostMemory.allocate(sizeBytes), sizeBytes);
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
      HostMemory.free(address, sizeBytes);
      address = 0;
    }
  }
}
