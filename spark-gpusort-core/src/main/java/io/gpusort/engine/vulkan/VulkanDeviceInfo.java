package io.gpusort.engine.vulkan;

/**
 * One physical device as the loader reports it, and whether the engine can use it.
 *
 * <p>A device is usable when it has Vulkan 1.2, a queue family with compute, the features
 * {@code bufferDeviceAddress} and {@code shaderInt64}, subgroup operations basic, arithmetic and
 * ballot in compute shaders, at least 32 KiB of shared memory and workgroups of 256 invocations
 * in x. The limits are those of the device, whether usable or not; those the driver did not report
 * (an old device) are 0.
 *
 * @param index the device's position in {@code vkEnumeratePhysicalDevices}, as {@link
 *     Vulkan#choose} takes it
 * @param name {@code deviceName}, e.g. {@code "llvmpipe (LLVM 15.0.6, 256 bits)"}
 * @param type the kind of device
 * @param apiVersion the device's Vulkan version, packed as {@code VK_MAKE_API_VERSION}
 * @param driverName the driver's name ({@code VkPhysicalDeviceDriverProperties}), or {@code ""}
 *     where the device does not report it
 * @param usable whether the engine can run on it
 * @param unusableReason every requirement it misses, separated by {@code "; "}; null when usable
 * @param subgroupSize invocations per subgroup (8 on lavapipe, 32 on NVIDIA, 32 or 64 on AMD)
 * @param fullSubgroups whether compute pipelines can require full subgroups (the Vulkan 1.3
 *     feature {@code computeFullSubgroups}), which the ballot-ranking radix pass needs
 * @param maxBufferBytes the largest buffer {@link VulkanContext#createBuffer} accepts:
 *     {@code min(maxMemoryAllocationSize, maxBufferSize)}, the latter where the device reports it
 *     ({@code VK_KHR_maintenance4}, core in 1.3)
 * @param maxSharedMemoryBytes {@code maxComputeSharedMemorySize}
 * @param maxWorkGroupCountX {@code maxComputeWorkGroupCount[0]}
 * @param timestamps whether the compute queue family the context uses has timestamps
 *     ({@code timestampValidBits > 0})
 * @param timestampPeriodNs nanoseconds per timestamp tick
 */
public record VulkanDeviceInfo(int index, String name, DeviceType type, int apiVersion,
    String driverName, boolean usable, String unusableReason, int subgroupSize,
    boolean fullSubgroups,
    long maxBufferBytes, int maxSharedMemoryBytes, int maxWorkGroupCountX, boolean timestamps,
    double timestampPeriodNs) {

  /**
   * Whether the radix passes rank with subgroup ballots (radix_rank.comp): subgroups of 8 to 32
   * invocations that divide the scatter workgroup and can be required full.
   */
  public boolean ballotRanking() {
    return fullSubgroups && subgroupSize >= 8 && subgroupSize <= 32
        && VulkanTuning.RADIX_THREADS % subgroupSize == 0;
  }
}
