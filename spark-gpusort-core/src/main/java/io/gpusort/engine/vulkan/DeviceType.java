package io.gpusort.engine.vulkan;

import org.lwjgl.vulkan.VK10;

/** The kind of a Vulkan physical device, as {@code VkPhysicalDeviceType} reports it. */
public enum DeviceType {
  /** A separate GPU with its own memory. */
  DISCRETE_GPU,
  /** A GPU sharing the host's memory. */
  INTEGRATED_GPU,
  /** A GPU in a virtual machine. */
  VIRTUAL_GPU,
  /** A device that runs on the host's CPU cores (a software rasterizer such as lavapipe). */
  CPU,
  /** Anything else the driver reports. */
  OTHER;

  /** Whether the device is software running on the host's CPU ({@link #CPU}). */
  public boolean isSoftware() {
    return this == CPU;
  }

  /** The type for a {@code VkPhysicalDeviceType} value; {@link #OTHER} for an unknown one. */
  static DeviceType of(int physicalDeviceType) {
    switch (physicalDeviceType) {
      case VK10.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DISCRETE_GPU;
      case VK10.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return INTEGRATED_GPU;
      case VK10.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return VIRTUAL_GPU;
      case VK10.VK_PHYSICAL_DEVICE_TYPE_CPU: return CPU;
      default: return OTHER;
    }
  }
}
