package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;

import io.gpusort.engine.EngineStats;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import jcuda.driver.CUdeviceptr;

/**
 * Device memory of one device, under a byte budget, with freed blocks kept for reuse in size
 * classes ({@code cuMemAlloc} and {@code cuMemFree} are slow and {@code cuMemFree} synchronises
 * the device). Blocks held by callers and blocks kept idle both count against the budget; idle
 * blocks are freed first when an allocation would exceed it.
 *
 * <p>Callers make the device's context current before calling.
 */
final class DeviceMemoryPool {
  /** Sizes are rounded up to a multiple of this, and to powers of two under {@link #EXACT_FROM}. */
  private static final long GRANULE_BYTES = 2L << 20;
  private static final long EXACT_FROM = 256L << 20;

  private final long budgetBytes;
  private final Map<Long, ArrayDeque<CUdeviceptr>> idle = new HashMap<>();
  private long idleBytes;
  private long inUseBytes;
  private long peakInUseBytes;

  DeviceMemoryPool(long budgetBytes) {
    this.budgetBytes = budgetBytes;
  }

  long budgetBytes() {
    return budgetBytes;
  }

  /**
   * A block of at least {@code sizeBytes}, for {@code phase} of a sort (where tests inject
   * failures, {@link DeviceFaults}); null for memory outside any sort (a workspace's own words).
   *
   * @throws DeviceMemoryExhaustedException when the budget or the device cannot supply it
   */
  synchronized DeviceBuffer allocate(long sizeBytes, DeviceFaults.Phase phase) {
    if (phase != null) {
      DeviceFaults.check(phase, sizeBytes);
    }
    long classBytes = sizeClass(sizeBytes);
    ArrayDeque<CUdeviceptr> free = idle.get(classBytes);
    if (free != null && !free.isEmpty()) {
      idleBytes -= classBytes;
      return handOut(free.pop(), classBytes);
    }
    if (inUseBytes + idleBytes + classBytes > budgetBytes) {
      trim();
    }
    if (inUseBytes + classBytes > budgetBytes) {
      throw new DeviceMemoryExhaustedException("device memory budget of " + budgetBytes
          + " bytes exceeded: " + inUseBytes + " in use, " + classBytes + " more asked for");
    }
    CUdeviceptr pointer = new CUdeviceptr();
    int result = timedAlloc(pointer, classBytes);
    if (result != jcuda.driver.CUresult.CUDA_SUCCESS) {
      trim();
      result = timedAlloc(pointer, classBytes);
    }
    if (result == jcuda.driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
      throw new DeviceMemoryExhaustedException("cuMemAlloc of " + classBytes
          + " bytes: out of device memory (" + inUseBytes + " bytes in use by this engine)");
    }
    Cuda.check(result, "cuMemAlloc", classBytes + " bytes");
    return handOut(pointer, classBytes);
  }

  private static int timedAlloc(CUdeviceptr pointer, long bytes) {
    long start = System.nanoTime();
    int result = cuMemAlloc(pointer, bytes);
    EngineStats.recordDeviceAlloc(System.nanoTime() - start);
    return result;
  }

  private static int timedFree(CUdeviceptr pointer) {
    long start = System.nanoTime();
    int result = cuMemFree(pointer);
    EngineStats.recordDeviceAlloc(System.nanoTime() - start);
    return result;
  }

  private DeviceBuffer handOut(CUdeviceptr pointer, long classBytes) {
    inUseBytes += classBytes;
    peakInUseBytes = Math.max(peakInUseBytes, inUseBytes);
    return new DeviceBuffer(this, pointer, classBytes);
  }

  synchronized void release(CUdeviceptr pointer, long classBytes) {
    inUseBytes -= classBytes;
    idle.computeIfAbsent(classBytes, k -> new ArrayDeque<>()).push(pointer);
    idleBytes += classBytes;
    notifyAll();
  }

  /**
   * Waits until the bytes in use drop below {@code inUseSeenBytes} (another task gave memory
   * back) or {@code timeoutNanos} pass; returns whether they dropped.
   */
  synchronized boolean awaitRelease(long inUseSeenBytes, long timeoutNanos)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (inUseBytes >= inUseSeenBytes) {
      long leftNanos = deadline - System.nanoTime();
      if (leftNanos <= 0) {
        return false;
      }
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, leftNanos);
    }
    return true;
  }

  /** Frees every idle block. */
  synchronized void trim() {
    for (Map.Entry<Long, ArrayDeque<CUdeviceptr>> e : idle.entrySet()) {
      for (CUdeviceptr pointer : e.getValue()) {
        Cuda.check(timedFree(pointer), "cuMemFree", e.getKey() + " bytes");
      }
    }
    idle.clear();
    idleBytes = 0;
  }

  /** Bytes handed out and not yet released. */
  synchronized long inUseBytes() {
    return inUseBytes;
  }

  /** Bytes allocated on the device: in use plus idle. */
  synchronized long allocatedBytes() {
    return inUseBytes + idleBytes;
  }

  synchronized long peakInUseBytes() {
    return peakInUseBytes;
  }

  static long sizeClass(long sizeBytes) {
    long size = Math.max(GRANULE_BYTES, sizeBytes);
    if (size < EXACT_FROM) {
      long highest = Long.highestOneBit(size);
      return highest == size ? size : highest << 1;
    }
    return (size + GRANULE_BYTES - 1) / GRANULE_BYTES * GRANULE_BYTES;
  }
}
