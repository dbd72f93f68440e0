package io.gpusort.engine.vulkan;

import io.gpusort.engine.EngineException;
import org.lwjgl.vulkan.EXTDebugReport;
import org.lwjgl.vulkan.EXTFullScreenExclusive;
import org.lwjgl.vulkan.EXTImageCompressionControl;
import org.lwjgl.vulkan.KHRDisplaySwapchain;
import org.lwjgl.vulkan.KHRGlobalPriority;
import org.lwjgl.vulkan.KHRSurface;
import org.lwjgl.vulkan.KHRSwapchain;
import org.lwjgl.vulkan.NVGLSLShader;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VK11;
import org.lwjgl.vulkan.VK12;
import org.lwjgl.vulkan.VK13;

/**
 * A failed Vulkan call: the message names the call, the {@code VkResult}'s name and number, and
 * any sizes given, e.g. {@code vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)
 * (4294967296 bytes, device-local)}.
 */
public final class VulkanException extends EngineException {
  private static final long serialVersionUID = 1L;

  private final int result;

  /**
   * A failure of {@code call} with {@code result}.
   *
   * @param call the Vulkan function that failed, e.g. {@code "vkAllocateMemory"}
   * @param result the {@code VkResult} it returned
   */
  public VulkanException(String call, int result) {
    this(call, result, null);
  }

  /**
   * A failure of {@code call} with {@code result}; {@code detail} (the sizes or arguments involved,
   * e.g. {@code "4294967296 bytes, device-local"}) is appended in parentheses unless null or empty.
   */
  public VulkanException(String call, int result, String detail) {
    super(call + " failed: " + resultName(result) + " (" + result + ")"
        + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")"));
    this.result = result;
  }

  /** The {@code VkResult} code of the failed call. */
  public int result() {
    return result;
  }

  /**
   * The name of a {@code VkResult}: every core code (1.0 to 1.3) and the common extension codes by
   * name, e.g. {@code "VK_ERROR_DEVICE_LOST"}; any other value as {@code "VkResult <n>"}.
   */
  public static String resultName(int result) {
    switch (result) {
      case VK10.VK_SUCCESS: return "VK_SUCCESS";
      case VK10.VK_NOT_READY: return "VK_NOT_READY";
      case VK10.VK_TIMEOUT: return "VK_TIMEOUT";
      case VK10.VK_EVENT_SET: return "VK_EVENT_SET";
      case VK10.VK_EVENT_RESET: return "VK_EVENT_RESET";
      case VK10.VK_INCOMPLETE: return "VK_INCOMPLETE";
      case VK10.VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
      case VK10.VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
      case VK10.VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
      case VK10.VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
      case VK10.VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
      case VK10.VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
      case VK10.VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
      case VK10.VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
      case VK10.VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
      case VK10.VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
      case VK10.VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
      case VK10.VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
      case VK10.VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
      case VK11.VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
      case VK11.VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
      case VK12.VK_ERROR_FRAGMENTATION: return "VK_ERROR_FRAGMENTATION";
      case VK12.VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS:
        return "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS";
      case VK13.VK_PIPELINE_COMPILE_REQUIRED: return "VK_PIPELINE_COMPILE_REQUIRED";
      case KHRSurface.VK_ERROR_SURFACE_LOST_KHR: return "VK_ERROR_SURFACE_LOST_KHR";
      case KHRSurface.VK_ERROR_NATIVE_WINDOW_IN_USE_KHR: return "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR";
      case KHRSwapchain.VK_SUBOPTIMAL_KHR: return "VK_SUBOPTIMAL_KHR";
      case KHRSwapchain.VK_ERROR_OUT_OF_DATE_KHR: return "VK_ERROR_OUT_OF_DATE_KHR";
      case KHRDisplaySwapchain.VK_ERROR_INCOMPATIBLE_DISPLAY_KHR:
        return "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR";
      case EXTDebugReport.VK_ERROR_VALIDATION_FAILED_EXT: return "VK_ERROR_VALIDATION_FAILED_EXT";
      case NVGLSLShader.VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
      case KHRGlobalPriority.VK_ERROR_NOT_PERMITTED_KHR: return "VK_ERROR_NOT_PERMITTED_KHR";
      case EXTFullScreenExclusive.VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT:
        return "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT";
      case EXTImageCompressionControl.VK_ERROR_COMPRESSION_EXHAUSTED_EXT:
        return "VK_ERROR_COMPRESSION_EXHAUSTED_EXT";
      default: return "VkResult " + result;
    }
  }

  /** Throws a {@link VulkanException} naming {@code call} unless {@code result} is VK_SUCCESS. */
  public static void check(int result, String call) {
    if (result != VK10.VK_SUCCESS) {
      throw new VulkanException(call, result);
    }
  }

  /**
   * As {@link #check(int, String)}, with {@code detail} (the sizes or arguments involved) in the
   * message.
   */
  public static void check(int result, String call, String detail) {
    if (result != VK10.VK_SUCCESS) {
      throw new VulkanException(call, result, detail);
    }
  }
}
