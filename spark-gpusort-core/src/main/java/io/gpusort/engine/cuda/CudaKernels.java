package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import io.gpusort.kernels.KernelBinaries;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * The kernels of {@code kernels/cuda}, loaded into one context from the fatbins on the classpath
 * (or the files named by {@code gpusort.kernels.cuda.<module>}), with the launch tuning each module
 * exports for the device's family (kernels/cuda/tuning.cuh).
 */
final class CudaKernels implements AutoCloseable {
  private final CUmodule radix;
  private final CUmodule oddeven;
  private final CUmodule rows;
  private final CUmodule merge;

  final CUfunction radixHistogram32;
  final CUfunction radixHistogram64;
  final CUfunction radixNarrowHistogram;
  final CUfunction radixScan;
  final CUfunction radixOnesweep32;
  final CUfunction radixOnesweep64;
  final CUfunction radixOnesweep64Narrow;
  final CUfunction radixGather64;
  final CUfunction radixNarrow;
  final CUfunction oddevenBlockSort32;
  final CUfunction oddevenBlockSort64;
  final CUfunction oddevenPartition32;
  final CUfunction oddevenPartition64;
  final CUfunction oddevenMerge32;
  final CUfunction oddevenMerge64;
  final CUfunction rowsSource;
  final CUfunction rowsGatherFixed;
  final CUfunction rowsRecordBytes;
  final CUfunction rowsScanTiles;
  final CUfunction rowsScanTileSums;
  final CUfunction rowsScanApply;
  final CUfunction rowsGatherVar;
  final CUfunction mergeTreePartition64;
  final CUfunction mergeTreeTile64;

  final int histThreads;
  final int histItems;
  final int sweepThreads32;
  final int sweepItems32;
  final int sweepThreads64;
  final int sweepItems64;
  private final OddEvenTuning oddeven32;
  private final OddEvenTuning oddeven64;
  /** Threads of a merge-tree tile block and items per thread (gpusort_merge_tuning). */
  final int mergeTreeThreads;
  final int mergeTreeItems;

  /** Launch shape of the odd-even kernels for one key width (gpusort_oddeven_tuning). */
  record OddEvenTuning(int sortThreads, int sortItems, int mergeThreads, int mergeItems) {
    long sortTile() {
      return (long) sortThreads * sortItems;
    }

    long mergeTile() {
      return (long) mergeThreads * mergeItems;
    }
  }

  /** Loads the modules into the current context. */
  CudaKernels() {
    radix = load("radix");
    CUmodule second = null;
    CUmodule third = null;
    CUmodule fourth = null;
    try {
      second = load("oddeven");
      oddeven = second;
      third = load("rows");
      rows = third;
      fourth = load("merge");
      merge = fourth;
      radixHistogram32 = function(radix, "radix_histogram_u32");
      radixHistogram64 = function(radix, "radix_histogram_u64");
      radixNarrowHistogram = function(radix, "radix_narrow_histogram");
      radixScan = function(radix, "radix_scan");
      radixOnesweep32 = function(radix, "radix_onesweep_u32");
      radixOnesweep64 = function(radix, "radix_onesweep_u64");
      radixOnesweep64Narrow = function(radix, "radix_onesweep_u64_narrow");
      radixGather64 = function(radix, "radix_gather_u64");
      radixNarrow = function(radix, "radix_narrow");
      oddevenBlockSort32 = function(oddeven, "oddeven_block_sort_u32");
      oddevenBlockSort64 = function(oddeven, "oddeven_block_sort_u64");
      oddevenPartition32 = function(oddeven, "oddeven_merge_partition_u32");
      oddevenPartition64 = function(oddeven, "oddeven_merge_partition_u64");
      oddevenMerge32 = function(oddeven, "oddeven_merge_pass_u32");
      oddevenMerge64 = function(oddeven, "oddeven_merge_pass_u64");
      rowsSource = function(rows, "rows_source");
      rowsGatherFixed = function(rows, "rows_gather_fixed");
      rowsRecordBytes = function(rows, "rows_record_bytes");
      rowsScanTiles = function(rows, "rows_scan_tiles");
      rowsScanTileSums = function(rows, "rows_scan_tile_sums");
      rowsScanApply = function(rows, "rows_scan_apply");
      rowsGatherVar = function(rows, "rows_gather_var");
      mergeTreePartition64 = function(merge, "merge_tree_partition_u64");
      mergeTreeTile64 = function(merge, "merge_tree_tile_u64");
      int[] t = readTable(radix, "gpusort_radix_tuning", 6);
      histThreads = t[0];
      histItems = t[1];
      sweepThreads32 = t[2];
      sweepItems32 = t[3];
      sweepThreads64 = t[4];
      sweepItems64 = t[5];
      int[] o = readTable(oddeven, "gpusort_oddeven_tuning", 8);
      oddeven32 = new OddEvenTuning(o[0], o[1], o[2], o[3]);
      oddeven64 = new OddEvenTuning(o[4], o[5], o[6], o[7]);
      int[] m = readTable(merge, "gpusort_merge_tuning", 2);
      mergeTreeThreads = m[0];
      mergeTreeItems = m[1];
    } catch (RuntimeException e) {
      cuModuleUnload(radix);
      if (second != null) {
        cuModuleUnload(second);
      }
      if (third != null) {
        cuModuleUnload(third);
      }
      if (fourth != null) {
        cuModuleUnload(fourth);
      }
      throw e;
    }
  }

  /** Keys per onesweep tile, for keys of {@code keyBytes} bytes. */
  int sweepTile(int keyBytes) {
    return keyBytes == 4 ? sweepThreads32 * sweepItems32 : sweepThreads64 * sweepItems64;
  }

  /** Items per output tile of the merge tree's tile kernel. */
  int mergeTreeTile() {
    return mergeTreeThreads * mergeTreeItems;
  }

  /** The odd-even launch shape for keys of {@code keyBytes} bytes. */
  OddEvenTuning oddeven(int keyBytes) {
    return keyBytes == 4 ? oddeven32 : oddeven64;
  }

  private static CUmodule load(String name) {
    byte[] image = KernelBinaries.load(name);
    CUmodule module = new CUmodule();
    Cuda.check(cuModuleLoadData(module, image), "cuModuleLoadData",
        "module " + name + ", " + image.length + " bytes");
    return module;
  }

  private static CUfunction function(CUmodule module, String name) {
    CUfunction function = new CUfunction();
    Cuda.check(cuModuleGetFunction(function, module, name), "cuModuleGetFunction", name);
    return function;
  }

  private static int[] readTable(CUmodule module, String name, int length) {
    CUdeviceptr pointer = new CUdeviceptr();
    long[] sizeBytes = new long[1];
    Cuda.check(cuModuleGetGlobal(pointer, sizeBytes, module, name), "cuModuleGetGlobal", name);
    if (sizeBytes[0] != 4L * length) {
      throw new CudaException("cuModuleGetGlobal", jcuda.driver.CUresult.CUDA_ERROR_INVALID_VALUE,
          name + " has " + sizeBytes[0] + " bytes, expected " + 4 * length);
    }
    int[] values = new int[length];
    Cuda.check(cuMemcpyDtoH(Pointer.to(values), pointer, 4L * length), "cuMemcpyDtoH", name);
    return values;
  }

  @Override
  public void close() {
    cuModuleUnload(radix);
    cuModuleUnload(oddeven);
    cuModuleUnload(rows);
    cuModuleUnload(merge);
  }
}
