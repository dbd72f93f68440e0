package io.gpusort.engine.vulkan;

import static org.lwjgl.system.MemoryStack.stackPush;

import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.KHRMaintenance4;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VK11;
import org.lwjgl.vulkan.VkExtensionProperties;
import org.lwjgl.vulkan.VkPhysicalDevice;
import org.lwjgl.vulkan.VkPhysicalDeviceDriverProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceFeatures;
import org.lwjgl.vulkan.VkPhysicalDeviceFeatures2;
import org.lwjgl.vulkan.VkPhysicalDeviceLimits;
import org.lwjgl.vulkan.VkPhysicalDeviceMaintenance3Properties;
import org.lwjgl.vulkan.VkPhysicalDeviceMaintenance4Properties;
import org.lwjgl.vulkan.VkPhysicalDeviceProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceProperties2;
import org.lwjgl.vulkan.VkPhysicalDeviceSubgroupProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan12Features;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan13Features;
import org.lwjgl.vulkan.VkQueueFamilyProperties;

/**
 * Reads what the engine needs to know about a physical device and decides whether it is usable.
 *
 * <p>The instance is created for API 1.2, so 1.3 structures must not be chained even on a 1.3
 * device: {@code maxBufferSize} is read through {@code VK_KHR_maintenance4}'s structure (the same
 * layout), where the device lists that extension.
 */
final class VkDeviceProbe {
  static final int MIN_SHARED_MEMORY_BYTES = 32768;
  static final int MIN_WORKGROUP_INVOCATIONS = 256;
  static final int REQUIRED_SUBGROUP_OPERATIONS = VK11.VK_SUBGROUP_FEATURE_BASIC_BIT
      | VK11.VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK11.VK_SUBGROUP_FEATURE_BALLOT_BIT;

  /** The queue family a context uses and its timestamp width; index -1 when none has compute. */
  record QueueFamily(int index, int timestampValidBits) {}

  private VkDeviceProbe() {}

  /** Everything {@link VulkanDeviceInfo} holds about the device at {@code index}. */
  static VulkanDeviceInfo describe(int index, VkPhysicalDevice device) {
    try (MemoryStack stack = stackPush()) {
      VkPhysicalDeviceProperties properties = VkPhysicalDeviceProperties.calloc(stack);
      VK10.vkGetPhysicalDeviceProperties(device, properties);
      int apiVersion = properties.apiVersion();
      VkPhysicalDeviceLimits limits = properties.limits();
      boolean v11 = atLeast(apiVersion, 1, 1);
      boolean v12 = atLeast(apiVersion, 1, 2);

      // Structures of 1.1 and 1.2 may only be chained where the device has that version.
      VkPhysicalDeviceSubgroupProperties subgroup =
          VkPhysicalDeviceSubgroupProperties.calloc(stack).sType$Default();
      VkPhysicalDeviceMaintenance3Properties maintenance3 =
          VkPhysicalDeviceMaintenance3Properties.calloc(stack).sType$Default();
      VkPhysicalDeviceMaintenance4Properties maintenance4 = null;
      VkPhysicalDeviceDriverProperties driver = null;
      if (v11) {
        maintenance3.pNext(subgroup.address());
        long chain = maintenance3.address();
        if (hasExtension(device, KHRMaintenance4.VK_KHR_MAINTENANCE_4_EXTENSION_NAME)) {
          maintenance4 = VkPhysicalDeviceMaintenance4Properties.calloc(stack)
              .sType(KHRMaintenance4.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES_KHR)
              .pNext(chain);
          chain = maintenance4.address();
        }
        if (v12) {
          driver = VkPhysicalDeviceDriverProperties.calloc(stack).sType$Default().pNext(chain);
          chain = driver.address();
        }
        VkPhysicalDeviceProperties2 properties2 =
            VkPhysicalDeviceProperties2.calloc(stack).sType$Default().pNext(chain);
        VK11.vkGetPhysicalDeviceProperties2(device, properties2);
      }

      boolean bufferDeviceAddress = false;
      boolean fullSubgroups = false;
      boolean shaderInt64;
      if (v12) {
        VkPhysicalDeviceVulkan12Features features12 =
            VkPhysicalDeviceVulkan12Features.calloc(stack).sType$Default();
        VkPhysicalDeviceVulkan13Features features13 = null;
        if (atLeast(apiVersion, 1, 3)) {
          features13 = VkPhysicalDeviceVulkan13Features.calloc(stack).sType$Default();
          features12.pNext(features13.address());
        }
        VkPhysicalDeviceFeatures2 features2 = VkPhysicalDeviceFeatures2.calloc(stack)
            .sType$Default().pNext(features12.address());
        VK11.vkGetPhysicalDeviceFeatures2(device, features2);
        bufferDeviceAddress = features12.bufferDeviceAddress();
        fullSubgroups = features13 != null && features13.computeFullSubgroups();
        shaderInt64 = features2.features().shaderInt64();
      } else {
        VkPhysicalDeviceFeatures features = VkPhysicalDeviceFeatures.calloc(stack);
        VK10.vkGetPhysicalDeviceFeatures(device, features);
        shaderInt64 = features.shaderInt64();
      }

      QueueFamily family = computeQueueFamily(device);
      long maxAllocationBytes = maintenance3.maxMemoryAllocationSize();
      long maxBufferBytes = maintenance4 == null ? maxAllocationBytes
          : minUnsigned(maxAllocationBytes, maintenance4.maxBufferSize());

      List<String> missing = new ArrayList<>();
      if (!v12) {
        missing.add("Vulkan " + versionString(apiVersion) + " (1.2 needed)");
      }
      if (family.index() < 0) {
        missing.add("no queue family with compute");
      }
      if (!bufferDeviceAddress) {
        missing.add("no bufferDeviceAddress");
      }
      if (!shaderInt64) {
        missing.add("no shaderInt64");
      }
      if ((subgroup.supportedStages() & VK10.VK_SHADER_STAGE_COMPUTE_BIT) == 0) {
        missing.add("no subgroup operations in compute shaders");
      }
      if ((subgroup.supportedOperations() & REQUIRED_SUBGROUP_OPERATIONS)
          != REQUIRED_SUBGROUP_OPERATIONS) {
        missing.add("subgroup operations lack basic, arithmetic or ballot");
      }
      if (limits.maxComputeSharedMemorySize() < MIN_SHARED_MEMORY_BYTES) {
        missing.add("maxComputeSharedMemorySize " + limits.maxComputeSharedMemorySize()
            + " < " + MIN_SHARED_MEMORY_BYTES);
      }
      if (limits.maxComputeWorkGroupInvocations() < MIN_WORKGROUP_INVOCATIONS
          || limits.maxComputeWorkGroupSize(0) < MIN_WORKGROUP_INVOCATIONS) {
        missing.add("workgroups of " + MIN_WORKGROUP_INVOCATIONS + " not supported "
            + "(maxComputeWorkGroupInvocations " + limits.maxComputeWorkGroupInvocations()
            + ", maxComputeWorkGroupSize[0] " + limits.maxComputeWorkGroupSize(0) + ")");
      }
      return new VulkanDeviceInfo(index, properties.deviceNameString(),
          DeviceType.of(properties.deviceType()), apiVersion,
          driver == null ? "" : driver.driverNameString(), missing.isEmpty(),
          missing.isEmpty() ? null : String.join("; ", missing), subgroup.subgroupSize(),
          fullSubgroups,
          maxBufferBytes, limits.maxComputeSharedMemorySize(), limits.maxComputeWorkGroupCount(0),
          family.index() >= 0 && family.timestampValidBits() > 0, limits.timestampPeriod());
    }
  }

  /**
   * The queue family a context uses: the first compute family without graphics (an async compute
   * queue, which on discrete GPUs does not share time with rendering), else the first with compute.
   * With {@code -Dgpusort.vulkan.preferUniversalQueue=true}, the first family with graphics and
   * compute instead, where there is one.
   */
  static QueueFamily computeQueueFamily(VkPhysicalDevice device) {
    // Diagnostics: whether NVIDIA's compute-only family is slower than its universal one is the
    // open question of BENCHMARKS.md (2026-11-30, Vulkan engine).
    boolean preferUniversal = Boolean.getBoolean("gpusort.vulkan.preferUniversalQueue");
    try (MemoryStack stack = stackPush()) {
      IntBuffer count = stack.mallocInt(1);
      VK10.vkGetPhysicalDeviceQueueFamilyProperties(device, count, null);
      VkQueueFamilyProperties.Buffer families =
          VkQueueFamilyProperties.calloc(count.get(0), stack);
      VK10.vkGetPhysicalDeviceQueueFamilyProperties(device, count, families);
      int any = -1;
      for (int i = 0; i < count.get(0); i++) {
        int flags = families.get(i).queueFlags();
        if ((flags & VK10.VK_QUEUE_COMPUTE_BIT) == 0) {
          continue;
        }
        if (((flags & VK10.VK_QUEUE_GRAPHICS_BIT) == 0) != preferUniversal) {
          return new QueueFamily(i, families.get(i).timestampValidBits());
        }
        if (any < 0) {
          any = i;
        }
      }
      return any < 0 ? new QueueFamily(-1, 0)
          : new QueueFamily(any, families.get(any).timestampValidBits());
    }
  }

  /** "major.minor.patch" of a packed API version. */
  static String versionString(int apiVersion) {
    return VK10.VK_API_VERSION_MAJOR(apiVersion) + "." + VK10.VK_API_VERSION_MINOR(apiVersion)
        + "." + VK10.VK_API_VERSION_PATCH(apiVersion);
  }

  private static boolean atLeast(int apiVersion, int major, int minor) {
    int deviceMajor = VK10.VK_API_VERSION_MAJOR(apiVersion);
    return deviceMajor > major
        || (deviceMajor == major && VK10.VK_API_VERSION_MINOR(apiVersion) >= minor);
  }

  /** The smaller of two VkDeviceSize values, which are unsigned. */
  private static long minUnsigned(long a, long b) {
    return Long.compareUnsigned(a, b) <= 0 ? a : b;
  }

  private static boolean hasExtension(VkPhysicalDevice device, String extension) {
    try (MemoryStack stack = stackPush()) {
      IntBuffer count = stack.mallocInt(1);
      if (VK10.vkEnumerateDeviceExtensionProperties(device, (CharSequence) null, count, null)
          != VK10.VK_SUCCESS || count.get(0) == 0) {
        return false;
      }
      // On the heap: a device lists a few hundred extensions of 260 bytes each.
      VkExtensionProperties.Buffer extensions = VkExtensionProperties.malloc(count.get(0));
      try {
        if (VK10.vkEnumerateDeviceExtensionProperties(device, (CharSequence) null, count,
            extensions) != VK10.VK_SUCCESS) {
          return false;
        }
        for (int i = 0; i < count.get(0); i++) {
          if (extension.equals(extensions.get(i).extensionNameString())) {
            return true;
          }
        }
        return false;
      } finally {
        extensions.free();
      }
    }
  }
}
