package io.gpusort.engine.vulkan;

import static org.lwjgl.system.MemoryStack.stackPush;

import io.gpusort.engine.vulkan.VulkanContext.BufferKind;
import java.util.ArrayList;
import java.util.List;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.AMDDeviceCoherentMemory;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VK11;
import org.lwjgl.vulkan.VkPhysicalDevice;
import org.lwjgl.vulkan.VkPhysicalDeviceMemoryProperties;

/** A device's memory types, and which one each {@link BufferKind} is allocated from. */
final class VkMemoryTypes {
  private static final int DEVICE_LOCAL = VK10.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  private static final int HOST_VISIBLE = VK10.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  private static final int HOST_COHERENT = VK10.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  private static final int HOST_CACHED = VK10.VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  /** Types that need a feature this engine does not enable, or that buffers cannot use. */
  private static final int EXCLUDED = VK10.VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT
      | VK11.VK_MEMORY_PROPERTY_PROTECTED_BIT
      | AMDDeviceCoherentMemory.VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD
      | AMDDeviceCoherentMemory.VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;

  private final int[] propertyFlags;

  private VkMemoryTypes(int[] propertyFlags) {
    this.propertyFlags = propertyFlags;
  }

  static VkMemoryTypes of(VkPhysicalDevice device) {
    try (MemoryStack stack = stackPush()) {
      VkPhysicalDeviceMemoryProperties properties = VkPhysicalDeviceMemoryProperties.calloc(stack);
      VK10.vkGetPhysicalDeviceMemoryProperties(device, properties);
      int[] flags = new int[properties.memoryTypeCount()];
      for (int i = 0; i < flags.length; i++) {
        flags[i] = properties.memoryTypes(i).propertyFlags();
      }
      return new VkMemoryTypes(flags);
    }
  }

  /**
   * The memory type for a buffer of {@code kind} among {@code allowedTypeBits} (the buffer's
   * {@code memoryTypeBits}), or -1 when none qualifies.
   *
   * <p>DEVICE prefers device-local memory that the host cannot see, leaving the host-visible
   * device-local window (the PCIe BAR, often 256 MiB) free. UPLOAD and DOWNLOAD need host-visible
   * coherent memory and prefer it outside the device (staging in host RAM, as the BAR is small);
   * DOWNLOAD prefers host-cached memory first, since the host reads it.
   */
  int choose(int allowedTypeBits, BufferKind kind) {
    int best = -1;
    int bestScore = -1;
    for (int i = 0; i < propertyFlags.length; i++) {
      int flags = propertyFlags[i];
      if ((allowedTypeBits & (1 << i)) == 0 || (flags & EXCLUDED) != 0) {
        continue;
      }
      int score = score(flags, kind);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    return best;
  }

  private static int score(int flags, BufferKind kind) {
    boolean deviceLocal = (flags & DEVICE_LOCAL) != 0;
    boolean hostVisible = (flags & HOST_VISIBLE) != 0;
    switch (kind) {
      case DEVICE:
        return (deviceLocal ? 2 : 0) + (hostVisible ? 0 : 1);
      case UPLOAD:
        return (flags & (HOST_VISIBLE | HOST_COHERENT)) != (HOST_VISIBLE | HOST_COHERENT) ? -1
            : deviceLocal ? 0 : 1;
      case DOWNLOAD:
        return (flags & (HOST_VISIBLE | HOST_COHERENT)) != (HOST_VISIBLE | HOST_COHERENT) ? -1
            : ((flags & HOST_CACHED) != 0 ? 2 : 0) + (deviceLocal ? 0 : 1);
      default:
        throw new AssertionError(kind);
    }
  }

  /** The type's properties in words, e.g. "memory type 0: device-local, host-visible". */
  String describe(int type) {
    int flags = propertyFlags[type];
    List<String> words = new ArrayList<>();
    if ((flags & DEVICE_LOCAL) != 0) {
      words.add("device-local");
    }
    if ((flags & HOST_VISIBLE) != 0) {
      words.add("host-visible");
    }
    if ((flags & HOST_COHERENT) != 0) {
      words.add("host-coherent");
    }
    if ((flags & HOST_CACHED) != 0) {
      words.add("host-cached");
    }
    return "memory type " + type + (words.isEmpty() ? "" : ": " + String.join(", ", words));
  }

  /** Every type, described, for messages when none fits. */
  String describeAll() {
    List<String> types = new ArrayList<>();
    for (int i = 0; i < propertyFlags.length; i++) {
      types.add(describe(i));
    }
    return String.join("; ", types);
  }
}
