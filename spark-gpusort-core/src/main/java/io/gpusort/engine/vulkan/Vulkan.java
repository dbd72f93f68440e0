package io.gpusort.engine.vulkan;

import io.gpusort.engine.NativeLibraries;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.lwjgl.system.FunctionProvider;
import org.lwjgl.vulkan.VK;
import org.lwjgl.vulkan.VK12;
import org.lwjgl.vulkan.VkPhysicalDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loading the Vulkan loader through LWJGL, once per process, and the physical devices it reports.
 *
 * <p>Loading never throws: on a machine without {@code libvulkan.so.1} or without a Vulkan 1.2
 * driver the engine is simply unavailable, with the reason kept for logs and for tests that skip
 * themselves.
 */
public final class Vulkan {
  private static final Logger LOG = LoggerFactory.getLogger(Vulkan.class);
  private static final Object LOCK = new Object();
  /** Preference among usable devices when none is requested: lower first. */
  private static final Comparator<VulkanDeviceInfo> PREFERENCE =
      Comparator.comparingInt(device -> rank(device.type()));

  private static volatile boolean loaded;
  private static String unavailableReason;
  private static List<VulkanDeviceInfo> devices = List.of();

  private Vulkan() {}

  /**
   * Whether the Vulkan loader (libvulkan.so.1, through LWJGL's VK.create()) loads and an instance
   * (API 1.2) can be created. Never throws; caches the answer.
   */
  public static boolean available() {
    load();
    return unavailableReason == null;
  }

  /** Why {@link #available()} is false (e.g. "libvulkan.so.1 not found: ..."), or null. */
  public static String unavailableReason() {
    load();
    return unavailableReason;
  }

  /**
   * Every physical device, usable or not, in the loader's order (index i at position i); empty
   * when !available(). Cached after the first call.
   */
  public static List<VulkanDeviceInfo> devices() {
    load();
    return devices;
  }

  /**
   * The device to use: requestedIndex >= 0 picks that one (it must be usable, software or not,
   * else empty); -1 picks the best usable one: discrete > integrated > virtual > other; a CPU
   * (software) device such as lavapipe only when allowSoftware. Among equals the lowest index
   * wins. Empty when none qualifies.
   *
   * @throws IllegalArgumentException when {@code requestedIndex < -1}
   */
  public static Optional<VulkanDeviceInfo> choose(int requestedIndex, boolean allowSoftware) {
    if (requestedIndex < -1) {
      throw new IllegalArgumentException("device index " + requestedIndex
          + ": must be -1 (the best) or a device's index");
    }
    List<VulkanDeviceInfo> all = devices();
    if (requestedIndex >= 0) {
      return requestedIndex < all.size() && all.get(requestedIndex).usable()
          ? Optional.of(all.get(requestedIndex)) : Optional.empty();
    }
    return all.stream()
        .filter(VulkanDeviceInfo::usable)
        .filter(device -> allowSoftware || !device.type().isSoftware())
        .min(PREFERENCE);
  }

  private static int rank(DeviceType type) {
    switch (type) {
      case DISCRETE_GPU: return 0;
      case INTEGRATED_GPU: return 1;
      case VIRTUAL_GPU: return 2;
      case OTHER: return 3;
      default: return 4;  // CPU: only when software is allowed
    }
  }

  private static void load() {
    if (loaded) {
      return;
    }
    synchronized (LOCK) {
      if (loaded) {
        return;
      }
      try {
        NativeLibraries.configureLwjgl();
        createLoader();
        int loaderVersion = VK.getInstanceVersionSupported();
        if (loaderVersion < VK12.VK_API_VERSION_1_2) {
          unavailableReason = "the Vulkan loader supports only "
              + VkDeviceProbe.versionString(loaderVersion) + " (1.2 needed)";
        } else {
          devices = enumerate();
        }
      } catch (UnsatisfiedLinkError e) {
        unavailableReason = "libvulkan.so.1 not found: " + e.getMessage();
      } catch (LinkageError | RuntimeException e) {
        // LWJGL's own native library could not be extracted or loaded, or no instance could be
        // created (VulkanException: no driver, an incompatible one).
        unavailableReason = "Vulkan could not be initialized: " + e;
      }
      if (unavailableReason != null) {
        LOG.debug("Vulkan unavailable: {}", unavailableReason);
      } else {
        LOG.debug("Vulkan devices: {}", devices);
      }
      loaded = true;
    }
  }

  /** VK.create() once per process; another library in this JVM may have done it already. */
  private static void createLoader() {
    FunctionProvider provider;
    try {
      provider = VK.getFunctionProvider();
    } catch (RuntimeException notCreated) {
      provider = null;
    }
    if (provider == null) {
      VK.create();
    }
  }

  private static List<VulkanDeviceInfo> enumerate() {
    try (VkInstanceHolder instance = VkInstanceHolder.shared()) {
      List<VkPhysicalDevice> physicalDevices = instance.physicalDevices();
      List<VulkanDeviceInfo> found = new ArrayList<>(physicalDevices.size());
      for (int i = 0; i < physicalDevices.size(); i++) {
        found.add(VkDeviceProbe.describe(i, physicalDevices.get(i)));
      }
      return Collections.unmodifiableList(found);
    }
  }
}
