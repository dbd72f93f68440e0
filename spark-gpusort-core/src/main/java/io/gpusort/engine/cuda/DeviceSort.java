package io.gpusort.engine.cuda;

import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUdeviceptr;

/**
 * The device side of one piece's sort: key columns already on the device in, the device address
 * of the permutation out (null when the input order is already sorted). Owns the working buffers
 * it allocates; {@link #close()} returns them.
 */
final class DeviceSort implements AutoCloseable {
  private final Workspace ws;
  private final DeviceBuffer columns;
  private final int words;
  private final int n;
  private final boolean narrow;
  private final List<DeviceBuffer> owned = new ArrayList<>();
  /** Set once the first digit counts are on their way to the host (see enqueueFirstCounts). */
  private boolean countsEnqueued;
  private CUdeviceptr[] narrowKeys;

  /**
   * @param columns {@code words} key columns of {@code n} 64-bit words each, most significant
   *     first; overwritten by the sort
   * @param narrow whether the keys have at most 32 significant bits (the high half of word 0)
   */
  DeviceSort(Workspace ws, DeviceBuffer columns, int words, int n, boolean narrow) {
    this.ws = ws;
    this.columns = columns;
    this.words = words;
    this.n = n;
    this.narrow = narrow;
  }

  /** A working buffer owned by this sort, returned by {@link #close()}. */
  CUdeviceptr scratch(long sizeBytes) {
    DeviceBuffer buffer = ws.device.memory.allocate(sizeBytes, DeviceFaults.Phase.SORT);
    owned.add(buffer);
    return buffer.pointer();
  }

  private CUdeviceptr column(int w) {
    return columns.at(8L * w * n);
  }

  /**
   * Enqueues the digit counts of the first word the radix sort reads, without waiting for them: a
   * pipeline starts this for the next batch before it waits on the current one.
   */
  void enqueueFirstCounts() {
    if (narrow) {
      narrowKeys = new CUdeviceptr[] {scratch(4L * n), scratch(4L * n)};
      RadixSorter.enqueueCounts(ws, 4, narrowKeys[0], column(0), n);
    } else {
      RadixSorter.enqueueCounts(ws, 8, column(words - 1), null, n);
    }
    countsEnqueued = true;
  }

  /** LSD radix sort, one word at a time from the least significant. */
  CUdeviceptr radix() {
    if (!countsEnqueued) {
      enqueueFirstCounts();
    }
    if (narrow) {
      CUdeviceptr[] keys = narrowKeys;
      ws.synchronize();
      int[] passes = RadixSorter.activePasses(ws, 4, n);
      if (passes.length == 0) {
        return null;
      }
      CUdeviceptr[] values = {scratch(4L * n), scratch(4L * n)};
      int result = RadixSorter.sortPairs(ws, 4, keys, values, true, false, n, passes);
      return values[result];
    }
    CUdeviceptr spareKeys = null;
    CUdeviceptr gathered = null;
    CUdeviceptr[] valueBuffers = null;
    CUdeviceptr permutation = null;
    for (int w = words - 1; w >= 0; w--) {
      // Digit counts do not depend on order: count the column as uploaded, and skip gathering it
      // when every digit is constant.
      int[] passes;
      if (w == words - 1) {
        ws.synchronize();
        passes = RadixSorter.activePasses(ws, 8, n);
      } else {
        passes = RadixSorter.countDigits(ws, 8, column(w), null, n);
      }
      if (passes.length == 0) {
        continue;
      }
      if (spareKeys == null) {
        spareKeys = scratch(8L * n);
        valueBuffers = new CUdeviceptr[] {scratch(4L * n), scratch(4L * n)};
      }
      CUdeviceptr source = column(w);
      CUdeviceptr[] values;
      if (permutation == null) {
        values = valueBuffers;
      } else {
        if (gathered == null) {
          gathered = scratch(8L * n);
        }
        CudaKernels k = ws.device.kernels;
        Launch.kernel("radix_gather_u64", k.radixGather64,
            Launch.strideGrid(n, 256, ws.device.multiprocessors), 256, ws.stream, column(w),
            permutation, gathered, n);
        source = gathered;
        CUdeviceptr other = permutation == valueBuffers[0] ? valueBuffers[1] : valueBuffers[0];
        values = new CUdeviceptr[] {permutation, other};
      }
      CUdeviceptr[] keys = {source, spareKeys};
      int result = RadixSorter.sortPairs(ws, 8, keys, values, permutation == null, false, n,
          passes);
      permutation = values[result];
    }
    return permutation;
  }

  /** The odd-even hybrid: tiles by Batcher's network, then merge-path passes. */
  CUdeviceptr oddeven() {
    return OddEvenSorter.sort(ws, this, columns, words, n, narrow);
  }

  /**
   * The merge tree over sorted runs of one-word keys (kernels/cuda/merge.cu); null when the input
   * order is sorted already (one non-empty run). The key column is overwritten.
   *
   * @param runStarts the first row of each run, each run in ascending order
   */
  CUdeviceptr mergeRuns(int[] runStarts) {
    if (words != 1) {
      throw new IllegalStateException("the merge tree takes keys of one word, not " + words);
    }
    return MergeTree.merge(ws, this, column(0), n, runStarts);
  }

  @Override
  public void close() {
    for (DeviceBuffer b : owned) {
      b.close();
    }
    owned.clear();
  }
}
