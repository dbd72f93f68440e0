package io.gpusort.engine.cuda;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;

/**
 * The device sequence of the odd-even hybrid (kernels/cuda/oddeven.cu): tiles sorted by Batcher's
 * odd-even merge sort, then merged pairwise by merge path until one run is left. Keys wider than
 * 64 bits are sorted one word at a time from the least significant, each word's sort giving
 * positions in the order so far, composed with it by a gather.
 */
final class OddEvenSorter {
  private OddEvenSorter() {}

  /** Returns the device address of the permutation of the {@code n} rows in {@code columns}. */
  static CUdeviceptr sort(Workspace ws, DeviceSort owner, DeviceBuffer columns, int words, int n,
      boolean narrow) {
    CudaKernels k = ws.device.kernels;
    long grid = Launch.strideGrid(n, 256, ws.device.multiprocessors);
    int keyBytes = narrow ? 4 : 8;
    Buffers b = new Buffers(owner, keyBytes, n, k);
    if (narrow) {
      CUdeviceptr keys = owner.scratch(4L * n);
      Launch.kernel("radix_narrow", k.radixNarrow, grid, 256, ws.stream, columns.pointer(), keys,
          n);
      return sortPairs(ws, b, keys, n);
    }
    CUdeviceptr permutation = null;
    CUdeviceptr gathered = words > 1 ? owner.scratch(8L * n) : null;
    CUdeviceptr[] composed = words > 1
        ? new CUdeviceptr[] {owner.scratch(4L * n), owner.scratch(4L * n)} : null;
    for (int w = words - 1; w >= 0; w--) {
      CUdeviceptr column = columns.at(8L * w * n);
      if (permutation == null) {
        // Copied out of the sort's value buffers, which the next word's sort reuses.
        CUdeviceptr positions = sortPairs(ws, b, column, n);
        if (w == 0) {
          return positions;
        }
        Cuda.check(jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync(composed[0], positions, 4L * n,
            ws.stream), "cuMemcpyDtoDAsync", 4L * n + " bytes");
        permutation = composed[0];
        continue;
      }
      Launch.kernel("radix_gather_u64", k.radixGather64, grid, 256, ws.stream, column,
          permutation, gathered, n);
      CUdeviceptr positions = sortPairs(ws, b, gathered, n);
      CUdeviceptr next = permutation == composed[0] ? composed[1] : composed[0];
      Launch.kernel("radix_gather_u32", k.radixGather32, grid, 256, ws.stream, permutation,
          positions, next, n);
      permutation = next;
    }
    return permutation;
  }

  /** The ping-pong buffers and merge splits of one piece, shared by its words' sorts. */
  private static final class Buffers {
    final int keyBytes;
    final CUdeviceptr[] keys;
    final CUdeviceptr[] values;
    final CUdeviceptr splits;

    Buffers(DeviceSort owner, int keyBytes, int n, CudaKernels k) {
      this.keyBytes = keyBytes;
      keys = new CUdeviceptr[] {owner.scratch((long) keyBytes * n),
          owner.scratch((long) keyBytes * n)};
      values = new CUdeviceptr[] {owner.scratch(4L * n), owner.scratch(4L * n)};
      long mergeTile = k.oddeven(keyBytes).mergeTile();
      splits = owner.scratch(4L * ((n + mergeTile - 1) / mergeTile + 1));
    }
  }

  /** Sorts (keys, position) pairs; returns where the sorted positions are. */
  private static CUdeviceptr sortPairs(Workspace ws, Buffers b, CUdeviceptr keysIn, int n) {
    CudaKernels k = ws.device.kernels;
    int keyBytes = b.keyBytes;
    CudaKernels.OddEvenTuning t = k.oddeven(keyBytes);
    long tile = t.sortTile();
    long mergeTile = t.mergeTile();
    // Pairwise merges only: oddeven.cu's 4-way passes measured slower on the H200 (12.4 against
    // 9.6 ms for 1e8 32-bit pairs, spark-gpusort-examples/BENCHMARKS.md).
    int passes = 0;
    for (long run = tile; run < n; run *= 2) {
      passes++;
    }
    CUdeviceptr[] keys = b.keys;
    CUdeviceptr[] values = b.values;
    // Buffer 0 is "out": the block sort writes there when the pass count is even, so that the
    // last pass ends there.
    int dst = passes % 2 == 0 ? 0 : 1;
    CUfunction blockSort = keyBytes == 4 ? k.oddevenBlockSort32 : k.oddevenBlockSort64;
    Launch.kernel("oddeven_block_sort", blockSort, (n + tile - 1) / tile, t.sortThreads(),
        ws.stream, keysIn, null, keys[dst], values[dst], n);
    if (passes == 0) {
      return values[dst];
    }
    long outputTiles = (n + mergeTile - 1) / mergeTile;
    CUdeviceptr splits = b.splits;
    CUfunction partition = keyBytes == 4 ? k.oddevenPartition32 : k.oddevenPartition64;
    CUfunction merge = keyBytes == 4 ? k.oddevenMerge32 : k.oddevenMerge64;
    int src = dst;
    for (long run = tile; run < n; run *= 2) {
      dst = 1 - src;
      Launch.kernel("oddeven_merge_partition", partition, (outputTiles + 1 + 255) / 256, 256,
          ws.stream, keys[src], n, (int) run, splits);
      Launch.kernel("oddeven_merge_pass", merge, outputTiles, t.mergeThreads(), ws.stream,
          keys[src], values[src], keys[dst], values[dst], n, (int) run, splits);
      src = dst;
    }
    return values[src];
  }
}
