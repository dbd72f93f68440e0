package io.gpusort.engine.cuda;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;

import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;

/** Kernel launches with checked results and argument lists built from pointers and ints. */
final class Launch {
  private Launch() {}

  /** Launches {@code function} on a 1-D grid; {@code args} are device pointers, Integers (32-bit) and Longs (64-bit). */
  static void kernel(String name, CUfunction function, long gridBlocks, int blockThreads,
      CUstream stream, Object... args) {
    if (gridBlocks <= 0) {
      return;
    }
    if (gridBlocks > Integer.MAX_VALUE) {
      throw new CudaException("cuLaunchKernel", jcuda.driver.CUresult.CUDA_ERROR_INVALID_VALUE,
          name + ": grid of " + gridBlocks + " blocks");
    }
    NativePointerObject[] params = new NativePointerObject[args.length];
    for (int i = 0; i < args.length; i++) {
      Object arg = args[i];
      if (arg instanceof Pointer p) {
        params[i] = Pointer.to(p);
      } else if (arg instanceof Integer v) {
        params[i] = Pointer.to(new int[] {v});
      } else if (arg instanceof Long v) {
        params[i] = Pointer.to(new long[] {v});
      } else if (arg == null) {
        params[i] = Pointer.to(new long[] {0L});
      } else {
        throw new IllegalArgumentException(name + ": unsupported kernel argument " + arg);
      }
    }
    Cuda.check(cuLaunchKernel(function, (int) gridBlocks, 1, 1, blockThreads, 1, 1, 0, stream,
        Pointer.to(params), null), "cuLaunchKernel", name + " with " + gridBlocks + " blocks of "
        + blockThreads);
  }

  /** Blocks for a grid-stride kernel over {@code n} items: enough to fill the device. */
  static long strideGrid(long n, int blockThreads, int multiprocessors) {
    return Math.max(1, Math.min((n + blockThreads - 1) / blockThreads, 8L * multiprocessors));
  }
}
