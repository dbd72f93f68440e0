package io.gpusort.engine.cuda;

import io.gpusort.engine.NativeLibraries;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Loading the CUDA driver through JCuda, once per process, and checking call results.
 *
 * <p>Loading never throws: on a machine without {@code libcuda} or without a device the engine is
 * simply unavailable, with the reason kept for logs and for tests that skip themselves.
 */
public final class Cuda {
  private static final Object LOCK = new Object();
  private static volatile String unavailableReason;
  private static volatile int deviceCount = -1;

  private Cuda() {}

  /** Whether the driver loaded and reports at least one device. */
  public static boolean available() {
    load();
    return deviceCount > 0;
  }

  /** Why {@link #available()} is false; null when it is true. */
  public static String unavailableReason() {
    load();
    return deviceCount > 0 ? null : unavailableReason;
  }

  /** Devices the driver reports; 0 when the driver is missing. */
  public static int deviceCount() {
    load();
    return Math.max(0, deviceCount);
  }

  private static void load() {
    if (deviceCount >= 0) {
      return;
    }
    synchronized (LOCK) {
      if (deviceCount >= 0) {
        return;
      }
      int count = 0;
      String reason = null;
      try {
        NativeLibraries.loadJCuda();
        JCudaDriver.setExceptionsEnabled(false);
        int result = JCudaDriver.cuInit(0);
        if (result != CUresult.CUDA_SUCCESS) {
          reason = "cuInit failed: " + CUresult.stringFor(result);
        } else {
          int[] devices = new int[1];
          result = JCudaDriver.cuDeviceGetCount(devices);
          if (result != CUresult.CUDA_SUCCESS) {
            reason = "cuDeviceGetCount failed: " + CUresult.stringFor(result);
          } else if (devices[0] == 0) {
            reason = "the CUDA driver reports no device";
          } else {
            count = devices[0];
          }
        }
      } catch (LinkageError | SecurityException e) {
        // No libcuda.so.1 (a machine without the NVIDIA driver), or JCuda's native library could
        // not be extracted or loaded here.
        reason = "the CUDA driver library could not be loaded: " + e;
      }
      unavailableReason = reason;
      deviceCount = count;
    }
  }

  /** Throws {@link CudaException} naming {@code call} unless {@code result} is success. */
  static void check(int result, String call) {
    if (result != CUresult.CUDA_SUCCESS) {
      throw new CudaException(call, result, null);
    }
  }

  /** As {@link #check(int, String)}, with the sizes or arguments involved in the message. */
  static void check(int result, String call, String detail) {
    if (result != CUresult.CUDA_SUCCESS) {
      throw new CudaException(call, result, detail);
    }
  }
}
