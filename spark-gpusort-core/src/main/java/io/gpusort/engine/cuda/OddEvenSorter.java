package io.gpusort.engine.cuda;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;

/**
 * The device sequence of the odd-even hybrid (kernels/cuda/oddeven.cu): tiles sorted by Batcher's
 * odd-even merge sort, then merged pairwise by merge path until one run is left. Keys wider than
 * 64 bits are sorted one word at a time from the least significant: each word, gathered in the
 * order so far, is sorted with that order's row numbers as its values, so the values that come
 * out are the order of all words sorted so far.
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
      return sortPairs(ws, b, keys, null, n);
    }
    // The sort's value buffers hold each word's result; the next word's sort reads it as its
    // values while it writes into those buffers, which the kernels allow (oddeven.cu: the block
    // sort reads a tile's values before it writes any, and the passes start after it).
    CUdeviceptr permutation = sortPairs(ws, b, columns.at(8L * (words - 1) * n), null, n);
    CUdeviceptr gathered = words > 1 ? owner.scratch(8L * n) : null;
    for (int w = words - 2; w >= 0; w--) {
      Launch.kernel("radix_gather_u64", k.radixGather64, grid, 256, ws.stream,
          columns.at(8L * w * n), permutation, gathered, n);
      permutation = sortPairs(ws, b, gathered, permutation, n);
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

  /**
   * Stably sorts {@code n} (key, value) pairs, the values {@code valuesIn} or, when it is null, the
   * input positions; returns where the sorted values are (one of {@code b.values}).
   */
  private static CUdeviceptr sortPairs(Workspace ws, Buffers b, CUdeviceptr keysIn,
      CUdeviceptr valuesIn, int n) {
    CudaKernels k = ws.device.kernels;
    int keyBytes = b.keyBytes;
    CudaKernels.OddEvenTuning t = k.oddeven(keyBytes);
    long tile = t.sortTile();
    long mergeTile = t.mergeTile();
    // Pairwise merges: every 4-way pass tried measured slower on the H200
    // (spark-gpusort-examples/BENCHMARKS.md).
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
        ws.stream, keysIn, valuesIn, keys[dst], values[dst], n);
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
