package io.gpusort.engine.cuda;

import jcuda.Pointer;

/**
 * A JCuda {@link Pointer} for a raw host address, and the address of one the driver filled in:
 * host memory here is addressed by {@code long} (off-heap buffers can exceed 2 GiB), which
 * JCuda's public API does not expose.
 */
final class NativePointer extends Pointer {
  /** An empty pointer for the driver to fill (as {@code cuMemHostAlloc} does). */
  NativePointer() {}

  /** A pointer to {@code address}. */
  NativePointer(long address) {
    super(address);
  }

  long address() {
    return getNativePointer() + getByteOffset();
  }
}
