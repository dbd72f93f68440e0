package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * What one sort on a device needs besides its data, kept between sorts: a stream, the digit
 * counts and offsets, the look-back words of the onesweep passes (zeroed once, then kept apart
 * pass by pass by a generation number), and page-locked staging for host buffers that are not.
 *
 * <p>Used by one task at a time ({@link CudaDevice#begin}).
 */
final class Workspace implements AutoCloseable {
  /** Bytes of one staging slice: transfers of plain host memory go through two of these. */
  static final long STAGING_SLICE_BYTES = 64L << 20;
  static final int MAX_PASSES = 8;
  static final int RADIX = 256;
  /** Generations fit 30 bits of a look-back word (radix.cu). */
  private static final int MAX_GENERATION = (1 << 30) - 1;

  final CudaDevice device;
  final CUstream stream = new CUstream();
  /** counts[8][256], offsets[8][256], tile counters[8], as 32-bit words. */
  final DeviceBuffer scratch;
  /** Page-locked copy of the counts, read by the host to skip constant digits. */
  final NativePointer countsHost = new NativePointer();
  final NativePointer[] staging = {new NativePointer(), new NativePointer()};
  final CUevent[] stagingFree = {new CUevent(), new CUevent()};
  private final boolean[] stagingAllocated = new boolean[2];
  private final boolean[] eventCreated = new boolean[2];
  private boolean countsAllocated;
  private boolean streamCreated;
  private DeviceBuffer lookback;
  private long lookbackTiles;
  private int generation;

  Workspace(CudaDevice device) {
    this.device = device;
    DeviceBuffer buffer = null;
    try {
      Cuda.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      streamCreated = true;
      Cuda.check(cuMemHostAlloc(countsHost, 4L * MAX_PASSES * RADIX, 0), "cuMemHostAlloc",
          "digit counts");
      countsAllocated = true;
      for (int i = 0; i < 2; i++) {
        Cuda.check(cuEventCreate(stagingFree[i], CUevent_flags.CU_EVENT_DISABLE_TIMING),
            "cuEventCreate");
        eventCreated[i] = true;
      }
      buffer = device.memory.allocate(4L * (2 * MAX_PASSES * RADIX + MAX_PASSES), null);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    scratch = buffer;
  }

  long countsOffset() {
    return 0;
  }

  long offsetsOffset() {
    return 4L * MAX_PASSES * RADIX;
  }

  long tileCountersOffset() {
    return 8L * MAX_PASSES * RADIX;
  }

  /**
   * Look-back words for {@code tiles} tiles, grown (and zeroed) as needed. Growing resets the
   * generations, since the new words are all zero.
   */
  DeviceBuffer lookback(long tiles) {
    if (tiles > lookbackTiles) {
      if (lookback != null) {
        lookback.close();
        lookback = null;
        lookbackTiles = 0;
      }
      long capacity = Math.max(tiles, 1024);
      DeviceBuffer buffer = device.memory.allocate(8L * RADIX * capacity, DeviceFaults.Phase.SORT);
      lookback = buffer;
      lookbackTiles = buffer.sizeBytes() / (8L * RADIX);
      zeroLookback();
    }
    return lookback;
  }

  /** The next generation of look-back words, zeroing them when the numbers run out. */
  int nextGeneration() {
    if (generation == MAX_GENERATION) {
      zeroLookback();
    }
    return ++generation;
  }

  private void zeroLookback() {
    Cuda.check(cuMemsetD32Async(lookback.pointer(), 0, lookback.sizeBytes() / 4, stream),
        "cuMemsetD32Async", lookback.sizeBytes() + " bytes of look-back words");
    generation = 0;
  }

  /** Device bytes this workspace holds. */
  long deviceBytes() {
    return (scratch == null ? 0 : scratch.sizeBytes())
        + (lookback == null ? 0 : lookback.sizeBytes());
  }

  /** Page-locked staging slice {@code i} (0 or 1), allocated on first use. */
  NativePointer staging(int i) {
    if (!stagingAllocated[i]) {
      Cuda.check(cuMemHostAlloc(staging[i], STAGING_SLICE_BYTES, 0), "cuMemHostAlloc",
          STAGING_SLICE_BYTES + " bytes of staging");
      stagingAllocated[i] = true;
    }
    return staging[i];
  }

  void synchronize() {
    Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }

  @Override
  public void close() {
    if (streamCreated) {
      cuStreamSynchronize(stream);
    }
    if (lookback != null) {
      lookback.close();
      lookback = null;
    }
    if (scratch != null) {
      scratch.close();
    }
    for (int i = 0; i < 2; i++) {
      if (stagingAllocated[i]) {
        cuMemFreeHost(staging[i]);
        stagingAllocated[i] = false;
      }
      if (eventCreated[i]) {
        cuEventDestroy(stagingFree[i]);
        eventCreated[i] = false;
      }
    }
    if (countsAllocated) {
      cuMemFreeHost(countsHost);
      countsAllocated = false;
    }
    if (streamCreated) {
      cuStreamDestroy(stream);
      streamCreated = false;
    }
  }

  static {
    // Calls are checked one by one; JCuda's own exceptions would lose the call's sizes.
    JCudaDriver.setExceptionsEnabled(false);
  }
}
