package io.gpusort.engine;

import io.gpusort.config.GpuSortConf;
import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import java.io.Serializable;

/**
 * What an engine is asked for: which engine, which GPU algorithm, which device and how much of its
 * memory. Read once per sort from the session's configuration and the task's GPU resources.
 *
 * @param engine the engine demanded, or {@code AUTO}
 * @param algorithm the GPU algorithm; the CPU engine ignores it
 * @param cudaDevice the CUDA device ordinal, or -1 for the default (0)
 * @param deviceMemoryBudgetBytes device memory a GPU engine may hold; 0 for its own default
 * @param concurrentGpuTasks tasks that may sort on one GPU at the same time
 * @param vulkanDevice the Vulkan device index, or -1 for the best hardware device
 * @param vulkanAllowSoftware whether the Vulkan engine may choose a software device itself
 * @param vulkanDebug whether the Vulkan engine enables the validation layer
 */
public record EngineOptions(EngineChoice engine, Algorithm algorithm, int cudaDevice,
    long deviceMemoryBudgetBytes, int concurrentGpuTasks, int vulkanDevice,
    boolean vulkanAllowSoftware, boolean vulkanDebug) implements Serializable {

  public EngineOptions {
    if (engine == null || algorithm == null) {
      throw new IllegalArgumentException("engine and algorithm are required");
    }
    if (cudaDevice < -1 || deviceMemoryBudgetBytes < 0 || concurrentGpuTasks < 1
        || vulkanDevice < -1) {
      throw new IllegalArgumentException("bad engine options: device=" + cudaDevice + " budget="
          + deviceMemoryBudgetBytes + " concurrentTasks=" + concurrentGpuTasks
          + " vulkanDevice=" + vulkanDevice);
    }
  }

  /** The options of the CUDA and CPU engines, with the Vulkan keys at their defaults. */
  public EngineOptions(EngineChoice engine, Algorithm algorithm, int cudaDevice,
      long deviceMemoryBudgetBytes, int concurrentGpuTasks) {
    this(engine, algorithm, cudaDevice, deviceMemoryBudgetBytes, concurrentGpuTasks,
        GpuSortConf.VULKAN_DEVICE.defaultValue(), GpuSortConf.VULKAN_ALLOW_SOFTWARE.defaultValue(),
        GpuSortConf.VULKAN_DEBUG.defaultValue());
  }

  /** The defaults of every key, with {@code engine} demanded. */
  public static EngineOptions defaults(EngineChoice engine) {
    return new EngineOptions(engine, GpuSortConf.ALGORITHM.defaultValue(),
        GpuSortConf.CUDA_DEVICE.defaultValue(), GpuSortConf.DEVICE_MEMORY_BYTES.defaultValue(),
        GpuSortConf.CONCURRENT_GPU_TASKS.defaultValue());
  }

  /** The options in {@code conf}. */
  public static EngineOptions of(GpuSortConf conf) {
    return new EngineOptions(conf.get(GpuSortConf.ENGINE), conf.get(GpuSortConf.ALGORITHM),
        conf.get(GpuSortConf.CUDA_DEVICE), conf.get(GpuSortConf.DEVICE_MEMORY_BYTES),
        conf.get(GpuSortConf.CONCURRENT_GPU_TASKS), conf.get(GpuSortConf.VULKAN_DEVICE),
        conf.get(GpuSortConf.VULKAN_ALLOW_SOFTWARE), conf.get(GpuSortConf.VULKAN_DEBUG));
  }

  public EngineOptions withAlgorithm(Algorithm value) {
    return new EngineOptions(engine, value, cudaDevice, deviceMemoryBudgetBytes,
        concurrentGpuTasks, vulkanDevice, vulkanAllowSoftware, vulkanDebug);
  }

  public EngineOptions withCudaDevice(int value) {
    return new EngineOptions(engine, algorithm, value, deviceMemoryBudgetBytes, concurrentGpuTasks,
        vulkanDevice, vulkanAllowSoftware, vulkanDebug);
  }

  public EngineOptions withDeviceMemoryBudget(long bytes) {
    return new EngineOptions(engine, algorithm, cudaDevice, bytes, concurrentGpuTasks,
        vulkanDevice, vulkanAllowSoftware, vulkanDebug);
  }

  /** The Vulkan device to open and whether a software device may be chosen without a name. */
  public EngineOptions withVulkanDevice(int index, boolean allowSoftware) {
    return new EngineOptions(engine, algorithm, cudaDevice, deviceMemoryBudgetBytes,
        concurrentGpuTasks, index, allowSoftware, vulkanDebug);
  }
}
