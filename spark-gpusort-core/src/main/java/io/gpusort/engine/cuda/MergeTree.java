package io.gpusort.engine.cuda;

import io.gpusort.engine.RunStarts;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import jcuda.driver.CUdeviceptr;

/**
 * The device sequence of the merge tree (kernels/cuda/merge.cu): sorted runs of 64-bit keys put
 * in order by pairwise merge-path merges, level after level, stable (ties to the earlier run). The
 * plan ({@link MergeTreePlan}) is built on the host from the runs' starts and uploaded once.
 */
final class MergeTree {
  private static final int PARTITION_THREADS = 256;

  private MergeTree() {}

  /**
   * Returns the device address of the permutation of the {@code n} keys at {@code keys} (one
   * 64-bit word each, read, then overwritten from the second level on), made of the sorted runs
   * starting at {@code runStarts}; null when there is nothing to merge (no rows, or one non-empty
   * run: the input order is sorted). Buffers come from {@code owner}.
   */
  static CUdeviceptr merge(Workspace ws, DeviceSort owner, CUdeviceptr keys, int n,
      int[] runStarts) {
    if (RunStarts.nonEmpty(runStarts, n) <= 1) {
      return null;
    }
    CudaKernels k = ws.device.kernels;
    MergeTreePlan plan = new MergeTreePlan(runStarts, n, k.mergeTreeTile());
    int levels = plan.levels();
    CUdeviceptr pairs = uploadPairs(ws, owner, plan);
    CUdeviceptr splits = owner.scratch(4L * plan.maxTiles());
    // Level l reads keys[l % 2] and values[(l + 1) % 2], writes keys[(l + 1) % 2] and values[l % 2]
    // (merge.cu); the last level writes no keys, so one level needs neither spare buffer.
    CUdeviceptr[] keyBuffers = {keys, levels > 1 ? owner.scratch(8L * n) : null};
    CUdeviceptr[] values = {owner.scratch(4L * n), levels > 1 ? owner.scratch(4L * n) : null};
    for (int l = 0; l < levels; l++) {
      CUdeviceptr levelPairs = pairs.withByteOffset(16L * plan.firstPair(l));
      int numPairs = plan.numPairs(l);
      int tiles = plan.tiles(l);
      CUdeviceptr keysIn = keyBuffers[l % 2];
      CUdeviceptr keysOut = l + 1 < levels ? keyBuffers[(l + 1) % 2] : null;
      CUdeviceptr valuesIn = l == 0 ? null : values[(l + 1) % 2];
      Launch.kernel("merge_tree_partition_u64", k.mergeTreePartition64,
          (tiles + PARTITION_THREADS - 1) / PARTITION_THREADS, PARTITION_THREADS, ws.stream,
          keysIn, levelPairs, numPairs, tiles, splits);
      Launch.kernel("merge_tree_tile_u64", k.mergeTreeTile64, tiles, k.mergeTreeThreads,
          ws.stream, keysIn, valuesIn, keysOut, values[l % 2], levelPairs, numPairs, splits);
    }
    return values[(levels - 1) % 2];
  }

  private static CUdeviceptr uploadPairs(Workspace ws, DeviceSort owner, MergeTreePlan plan) {
    long bytes = 4L * plan.pairs.length;
    CUdeviceptr pairs = owner.scratch(bytes);
    try (HostBuffer host = HostBuffer.acquire(bytes)) {
      HostMemory.copyFromArray(plan.pairs, 0, host.address(), plan.pairs.length);
      Transfers.upload(ws, host.address(), false, pairs, bytes);
      // The host buffer goes back to its pool: the copy must have left it.
      ws.synchronize();
    }
    return pairs;
  }
}
