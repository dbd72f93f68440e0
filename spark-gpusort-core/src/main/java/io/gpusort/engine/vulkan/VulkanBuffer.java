package io.gpusort.engine.vulkan;

import io.gpusort.engine.vulkan.VulkanContext.BufferKind;

/**
 * A Vulkan buffer bound to its own device memory, made by {@link VulkanContext#createBuffer}.
 * Shaders reach it through {@link #deviceAddress()} (buffer references in GLSL); the host reaches
 * UPLOAD and DOWNLOAD buffers through {@link #mappedAddress()}, which stays mapped until close.
 */
public final class VulkanBuffer implements AutoCloseable {
  final VulkanContext context;
  final long buffer;
  final long memory;
  /** Bytes of the memory allocation, at least {@link #sizeBytes}. */
  final long allocationBytes;
  private final long id;
  private final long sizeBytes;
  private final BufferKind kind;
  private final long deviceAddress;
  private final long mappedAddress;
  private volatile boolean closed;

  VulkanBuffer(VulkanContext context, long id, long buffer, long memory, long sizeBytes,
      long allocationBytes, BufferKind kind, long deviceAddress, long mappedAddress) {
    this.context = context;
    this.id = id;
    this.buffer = buffer;
    this.memory = memory;
    this.sizeBytes = sizeBytes;
    this.allocationBytes = allocationBytes;
    this.kind = kind;
    this.deviceAddress = deviceAddress;
    this.mappedAddress = mappedAddress;
  }

  /** The bytes asked for at creation: valid offsets are 0 to sizeBytes() - 1. */
  public long sizeBytes() {
    return sizeBytes;
  }

  /** The memory the buffer lives in. */
  public BufferKind kind() {
    return kind;
  }

  /**
   * vkGetBufferDeviceAddress of the buffer: what a shader's buffer reference (a {@code uint64_t}
   * push constant) points at. Valid until close.
   *
   * @throws IllegalStateException when the buffer is closed
   */
  public long deviceAddress() {
    requireOpen();
    return deviceAddress;
  }

  /**
   * Host address of the mapping (UPLOAD, DOWNLOAD), {@link #sizeBytes()} bytes, coherent: host
   * writes need no flush, but must be done before the submission that reads them, and host reads
   * of results only after {@link CommandRecorder#submitAndWait()} returns.
   *
   * @throws IllegalStateException for DEVICE, or when the buffer is closed
   */
  public long mappedAddress() {
    if (kind == BufferKind.DEVICE) {
      throw new IllegalStateException(this + " is not host-visible: it has no mapping");
    }
    requireOpen();
    return mappedAddress;
  }

  /**
   * Destroys the buffer and frees its memory (unmapping it). Idempotent; a no-op once the context
   * has closed. Must not be called while a submission using the buffer runs.
   */
  @Override
  public void close() {
    if (!closed) {
      context.release(this);
    }
  }

  /** E.g. "DEVICE buffer #3 (4194304 bytes)". */
  @Override
  public String toString() {
    return kind + " buffer #" + id + " (" + sizeBytes + " bytes)";
  }

  boolean isClosed() {
    return closed;
  }

  void markClosed() {
    closed = true;
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }
}
