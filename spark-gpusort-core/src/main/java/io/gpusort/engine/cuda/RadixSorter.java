package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;

import io.gpusort.memory.HostMemory;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;

/**
 * The device sequence of the LSD radix sort (kernels/cuda/radix.cu): one histogram pass over the
 * keys, then one onesweep pass per digit that is not constant over the input.
 */
final class RadixSorter {
  static final int FLAG_VALUES_IOTA = 1;
  static final int FLAG_NO_KEYS_OUT = 2;

  private RadixSorter() {}

  /**
   * Counts the digits of {@code keys} (or, with {@code narrowFrom} set, of the high halves of those
   * 64-bit words, written as 32-bit keys into {@code keys}) and returns the passes whose digit is
   * not constant, least significant first.
   */
  static int[] countDigits(Workspace ws, int keyBytes, CUdeviceptr keys, CUdeviceptr narrowFrom,
      int n) {
    enqueueCounts(ws, keyBytes, keys, narrowFrom, n);
    ws.synchronize();
    return activePasses(ws, keyBytes, n);
  }

  /**
   * Enqueues the histogram and scan of {@link #countDigits} and the copy of the counts to the
   * host, without waiting: {@link #activePasses} reads them once the stream has got there.
   */
  static void enqueueCounts(Workspace ws, int keyBytes, CUdeviceptr keys, CUdeviceptr narrowFrom,
      int n) {
    CudaKernels k = ws.device.kernels;
    int passes = keyBytes == 4 ? 4 : 8;
    CUdeviceptr counts = ws.scratch.at(ws.countsOffset());
    Cuda.check(cuMemsetD32Async(counts, 0, passes * Workspace.RADIX, ws.stream),
        "cuMemsetD32Async", "digit counts");
    long grid = Math.min((n + (long) k.histThreads * k.histItems - 1)
        / ((long) k.histThreads * k.histItems), 8L * ws.device.multiprocessors);
    if (narrowFrom != null) {
      Launch.kernel("radix_narrow_histogram", k.radixNarrowHistogram, grid, k.histThreads,
          ws.stream, narrowFrom, keys, n, counts);
    } else {
      CUfunction f = keyBytes == 4 ? k.radixHistogram32 : k.radixHistogram64;
      Launch.kernel("radix_histogram", f, grid, k.histThreads, ws.stream, keys, n, counts);
    }
    Launch.kernel("radix_scan", k.radixScan, passes, Workspace.RADIX, ws.stream, counts,
        ws.scratch.at(ws.offsetsOffset()));
    Cuda.check(cuMemcpyDtoHAsync(ws.countsHost, counts, 4L * passes * Workspace.RADIX, ws.stream),
        "cuMemcpyDtoHAsync", "digit counts");
  }

  /** The passes whose digit is not constant, from counts the stream has copied to the host. */
  static int[] activePasses(Workspace ws, int keyBytes, int n) {
    int passes = keyBytes == 4 ? 4 : 8;
    int[] active = new int[passes];
    int numActive = 0;
    long base = ws.countsHost.address();
    for (int p = 0; p < passes; p++) {
      boolean constant = false;
      for (int d = 0; d < Workspace.RADIX && !constant; d++) {
        constant = HostMemory.getInt(base + 4L * (p * Workspace.RADIX + d)) == n;
      }
      if (!constant) {
        active[numActive++] = p;
      }
    }
    return java.util.Arrays.copyOf(active, numActive);
  }

  /**
   * Runs the onesweep passes {@code passes} (from {@link #countDigits}, whose offsets are still in
   * the workspace) over pairs that start in {@code keys[0]} and {@code values[0]}
   * ({@code values[0]} unused when {@code iotaValues}: the value is then the position). Returns which of the two
   * buffers holds the result: {@code passes.length % 2}.
   *
   * <p>When the sorted keys are not wanted, 64-bit keys whose remaining digits fit in 32 bits move
   * as 32-bit keys from then on: the pass before the first such digit writes {@code key >>
   * narrowShift} (a third less traffic per pass; five 64-bit passes of 40-bit keys become one
   * 64-bit and four 32-bit passes). Both key buffers must hold {@code n} keys of {@code keyBytes}.
   */
  static int sortPairs(Workspace ws, int keyBytes, CUdeviceptr[] keys, CUdeviceptr[] values,
      boolean iotaValues, boolean keysNeeded, int n, int[] passes) {
    CudaKernels k = ws.device.kernels;
    int numPasses = passes.length;
    int narrowAt = -1;
    int narrowShift = 0;
    if (keyBytes == 8 && !keysNeeded && numPasses >= 2) {
      int j = 0;
      while ((passes[numPasses - 1] + 1 - passes[j]) * 8 > 32) {
        j++;
      }
      narrowAt = Math.max(j - 1, 0);
      narrowShift = passes[j] * 8;
    }
    long tiles = tiles(n, k.sweepTile(keyBytes));
    long tiles32 = tiles(n, k.sweepTile(4));
    DeviceBuffer lookback = ws.lookback(Math.max(tiles, tiles32));
    CUdeviceptr tileCounters = ws.scratch.at(ws.tileCountersOffset());
    Cuda.check(cuMemsetD32Async(tileCounters, 0, Workspace.MAX_PASSES, ws.stream),
        "cuMemsetD32Async", "tile counters");
    for (int i = 0; i < numPasses; i++) {
      int pass = passes[i];
      int flags = (i == 0 && iotaValues ? FLAG_VALUES_IOTA : 0)
          | (i == numPasses - 1 && !keysNeeded ? FLAG_NO_KEYS_OUT : 0);
      int from = i % 2;
      int to = 1 - from;
      CUdeviceptr offsets = ws.scratch.at(ws.offsetsOffset() + 4L * pass * Workspace.RADIX);
      CUdeviceptr counter = tileCounters.withByteOffset(4L * i);
      int generation = ws.nextGeneration();
      if (narrowAt >= 0 && i > narrowAt) {
        Launch.kernel("radix_onesweep_u32", k.radixOnesweep32, tiles32, k.sweepThreads32,
            ws.stream, keys[from], keys[to], values[from], values[to], n,
            pass * 8 - narrowShift, offsets, lookback.pointer(), counter, generation, flags);
      } else if (i == narrowAt) {
        Launch.kernel("radix_onesweep_u64_narrow", k.radixOnesweep64Narrow, tiles,
            k.sweepThreads64, ws.stream, keys[from], keys[to], values[from], values[to], n,
            pass * 8, offsets, lookback.pointer(), counter, generation, flags, narrowShift);
      } else {
        CUfunction sweep = keyBytes == 4 ? k.radixOnesweep32 : k.radixOnesweep64;
        int threads = keyBytes == 4 ? k.sweepThreads32 : k.sweepThreads64;
        Launch.kernel("radix_onesweep", sweep, tiles, threads, ws.stream, keys[from], keys[to],
            values[from], values[to], n, pass * 8, offsets, lookback.pointer(), counter,
            generation, flags);
      }
    }
    return numPasses % 2;
  }

  private static long tiles(int n, int tile) {
    return (n + (long) tile - 1) / tile;
  }
}
