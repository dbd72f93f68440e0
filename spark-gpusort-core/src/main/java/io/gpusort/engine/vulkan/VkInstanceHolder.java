package io.gpusort.engine.vulkan;

import static org.lwjgl.system.MemoryStack.stackPush;

import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.List;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.EXTDebugUtils;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VK13;
import org.lwjgl.vulkan.VkApplicationInfo;
import org.lwjgl.vulkan.VkDebugUtilsMessengerCallbackDataEXT;
import org.lwjgl.vulkan.VkDebugUtilsMessengerCallbackEXT;
import org.lwjgl.vulkan.VkDebugUtilsMessengerCreateInfoEXT;
import org.lwjgl.vulkan.VkExtensionProperties;
import org.lwjgl.vulkan.VkInstance;
import org.lwjgl.vulkan.VkInstanceCreateInfo;
import org.lwjgl.vulkan.VkLayerProperties;
import org.lwjgl.vulkan.VkPhysicalDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code VkInstance} (API 1.2) this package created, with its debug messenger when debugging:
 * the validation layer where it is installed, and a {@code VK_EXT_debug_utils} messenger logging
 * through slf4j wherever the extension exists (the loader itself provides it, so loader and driver
 * messages are logged even without the layer).
 */
final class VkInstanceHolder implements AutoCloseable {
  static final String VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation";
  private static final Logger LOG = LoggerFactory.getLogger(VulkanContext.class);

  final VkInstance instance;
  /** Whether the validation layer is enabled. */
  final boolean validation;
  /** Whether {@code VK_EXT_debug_utils} is enabled (a messenger exists, objects can be named). */
  final boolean debugUtils;
  private final long messenger;
  private final VkDebugUtilsMessengerCallbackEXT callback;
  private boolean closed;
  /** Whether this is the instance of {@link #shared()}: close() then drops one user. */
  private boolean processWide;
  /** Users of the shared instance (calls of shared() not yet closed). */
  private int users;
  private static VkInstanceHolder shared;

  private VkInstanceHolder(VkInstance instance, boolean validation, long messenger,
      VkDebugUtilsMessengerCallbackEXT callback) {
    this.instance = instance;
    this.validation = validation;
    this.debugUtils = messenger != VK10.VK_NULL_HANDLE;
    this.messenger = messenger;
    this.callback = callback;
  }

  /**
   * The process's instance without debugging, shared by every context and device probe: each
   * call counts one user, each {@link #close()} of it one less, and the last close destroys it.
   * NVIDIA's driver (580, H200) refused vkCreateInstance with VK_ERROR_INCOMPATIBLE_DRIVER after
   * some tens of instances had been made and destroyed in one process, and crashed the JVM at exit
   * (in libEGL_nvidia) when an instance was still alive or was destroyed by a shutdown hook.
   */
  static synchronized VkInstanceHolder shared() {
    if (shared == null) {
      VkInstanceHolder created = create(false);
      created.processWide = true;
      shared = created;
    }
    shared.users++;
    return shared;
  }

  /** Drops one user of the shared instance; the last destroys it. */
  private static synchronized void releaseShared(VkInstanceHolder holder) {
    if (holder != shared || --holder.users > 0) {
      return;
    }
    shared = null;
    holder.processWide = false;
    holder.close();
  }

  /**
   * Creates an instance; with {@code debug}, the validation layer (or one warning where it is
   * absent) and a messenger. Throws {@link VulkanException} when {@code vkCreateInstance} fails.
   */
  static VkInstanceHolder create(boolean debug) {
    boolean validation = false;
    boolean debugUtils = false;
    if (debug) {
      validation = layerPresent(VALIDATION_LAYER);
      if (!validation) {
        LOG.warn("Vulkan debugging asked for, but the validation layer {} is not installed: "
            + "running without validation", VALIDATION_LAYER);
      }
      debugUtils = instanceExtensionPresent(null, EXTDebugUtils.VK_EXT_DEBUG_UTILS_EXTENSION_NAME)
          || (validation && instanceExtensionPresent(VALIDATION_LAYER,
              EXTDebugUtils.VK_EXT_DEBUG_UTILS_EXTENSION_NAME));
    }
    VkDebugUtilsMessengerCallbackEXT callback =
        debugUtils ? VkDebugUtilsMessengerCallbackEXT.create(VkInstanceHolder::onMessage) : null;
    try (MemoryStack stack = stackPush()) {
      VkApplicationInfo app = VkApplicationInfo.calloc(stack).sType$Default()
          .pApplicationName(stack.UTF8("spark-gpusort"))
          .pEngineName(stack.UTF8("io.gpusort"))
          // 1.3 where the device has it (full subgroups for the ballot-ranking radix pass); a
          // 1.2 device is still used at 1.2.
          .apiVersion(VK13.VK_API_VERSION_1_3);
      VkDebugUtilsMessengerCreateInfoEXT messengerInfo = null;
      VkInstanceCreateInfo info = VkInstanceCreateInfo.calloc(stack).sType$Default()
          .pApplicationInfo(app);
      if (validation) {
        info.ppEnabledLayerNames(stack.pointers(stack.UTF8(VALIDATION_LAYER)));
      }
      if (debugUtils) {
        info.ppEnabledExtensionNames(
            stack.pointers(stack.UTF8(EXTDebugUtils.VK_EXT_DEBUG_UTILS_EXTENSION_NAME)));
        messengerInfo = messengerInfo(stack, callback);
        // Chained so that messages about vkCreateInstance and vkDestroyInstance are logged too.
        info.pNext(messengerInfo.address());
      }
      PointerBuffer handle = stack.mallocPointer(1);
      int result = VK10.vkCreateInstance(info, null, handle);
      if (result != VK10.VK_SUCCESS) {
        throw new VulkanException("vkCreateInstance", result,
            "API 1.2" + (validation ? ", " + VALIDATION_LAYER : ""));
      }
      VkInstance instance = new VkInstance(handle.get(0), info);
      long messenger = VK10.VK_NULL_HANDLE;
      if (debugUtils) {
        LongBuffer messengerHandle = stack.mallocLong(1);
        result = EXTDebugUtils.vkCreateDebugUtilsMessengerEXT(
            instance, messengerInfo, null, messengerHandle);
        if (result != VK10.VK_SUCCESS) {
          VK10.vkDestroyInstance(instance, null);
          throw new VulkanException("vkCreateDebugUtilsMessengerEXT", result);
        }
        messenger = messengerHandle.get(0);
      }
      return new VkInstanceHolder(instance, validation, messenger, callback);
    } catch (RuntimeException | Error e) {
      if (callback != null) {
        callback.free();
      }
      throw e;
    }
  }

  /** The physical devices in {@code vkEnumeratePhysicalDevices} order. */
  List<VkPhysicalDevice> physicalDevices() {
    try (MemoryStack stack = stackPush()) {
      IntBuffer count = stack.mallocInt(1);
      VulkanException.check(VK10.vkEnumeratePhysicalDevices(instance, count, null),
          "vkEnumeratePhysicalDevices");
      PointerBuffer handles = stack.mallocPointer(count.get(0));
      VulkanException.check(VK10.vkEnumeratePhysicalDevices(instance, count, handles),
          "vkEnumeratePhysicalDevices");
      List<VkPhysicalDevice> devices = new ArrayList<>(count.get(0));
      for (int i = 0; i < count.get(0); i++) {
        devices.add(new VkPhysicalDevice(handles.get(i), instance));
      }
      return devices;
    }
  }

  /** Destroys the messenger and the instance, then frees the callback; idempotent. */
  @Override
  public void close() {
    if (processWide) {
      releaseShared(this);
      return;
    }
    if (closed) {
      return;
    }
    closed = true;
    if (messenger != VK10.VK_NULL_HANDLE) {
      EXTDebugUtils.vkDestroyDebugUtilsMessengerEXT(instance, messenger, null);
    }
    VK10.vkDestroyInstance(instance, null);
    if (callback != null) {
      callback.free();
    }
  }

  private static VkDebugUtilsMessengerCreateInfoEXT messengerInfo(MemoryStack stack,
      VkDebugUtilsMessengerCallbackEXT callback) {
    return VkDebugUtilsMessengerCreateInfoEXT.calloc(stack).sType$Default()
        .messageSeverity(EXTDebugUtils.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
            | EXTDebugUtils.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        .messageType(EXTDebugUtils.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
            | EXTDebugUtils.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
            | EXTDebugUtils.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
        .pfnUserCallback(callback);
  }

  /** The messenger's callback: runs on whichever thread made the call; must never throw. */
  private static int onMessage(int severity, int types, long callbackData, long userData) {
    try {
      String message = VkDebugUtilsMessengerCallbackDataEXT.create(callbackData).pMessageString();
      if ((severity & EXTDebugUtils.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0) {
        LOG.error("Vulkan: {}", message);
      } else {
        LOG.warn("Vulkan: {}", message);
      }
    } catch (RuntimeException e) {
      // An exception must not unwind into the driver.
      LOG.error("Vulkan debug callback failed", e);
    }
    return VK10.VK_FALSE;
  }

  private static boolean layerPresent(String name) {
    try (MemoryStack stack = stackPush()) {
      IntBuffer count = stack.mallocInt(1);
      VulkanException.check(VK10.vkEnumerateInstanceLayerProperties(count, null),
          "vkEnumerateInstanceLayerProperties");
      if (count.get(0) == 0) {
        return false;
      }
      // On the heap: 520 bytes a layer would crowd the thread's small MemoryStack.
      VkLayerProperties.Buffer layers = VkLayerProperties.malloc(count.get(0));
      try {
        VulkanException.check(VK10.vkEnumerateInstanceLayerProperties(count, layers),
            "vkEnumerateInstanceLayerProperties");
        for (int i = 0; i < count.get(0); i++) {
          if (name.equals(layers.get(i).layerNameString())) {
            return true;
          }
        }
        return false;
      } finally {
        layers.free();
      }
    }
  }

  /** Whether the loader (layer null) or that layer provides the instance extension. */
  private static boolean instanceExtensionPresent(String layer, String extension) {
    try (MemoryStack stack = stackPush()) {
      IntBuffer count = stack.mallocInt(1);
      VulkanException.check(
          VK10.vkEnumerateInstanceExtensionProperties((CharSequence) layer, count, null),
          "vkEnumerateInstanceExtensionProperties");
      if (count.get(0) == 0) {
        return false;
      }
      VkExtensionProperties.Buffer extensions = VkExtensionProperties.malloc(count.get(0));
      try {
        VulkanException.check(
            VK10.vkEnumerateInstanceExtensionProperties((CharSequence) layer, count, extensions),
            "vkEnumerateInstanceExtensionProperties");
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
