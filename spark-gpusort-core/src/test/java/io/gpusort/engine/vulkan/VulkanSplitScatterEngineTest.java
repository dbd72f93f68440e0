package io.gpusort.engine.vulkan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.engine.EngineReferenceTests;
import io.gpusort.engine.SortEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

/**
 * The reference suite on the Vulkan radix sort's two-bit-split scatter, the path of devices
 * without full subgroups of 8 to 32 invocations: the devices the tests run on (lavapipe, NVIDIA)
 * take the ballot-ranking scatter, so this class asks for the other one.
 */
@Tag("vulkan")
class VulkanSplitScatterEngineTest extends EngineReferenceTests {
  private static VulkanEngine shared;
  private VulkanEngine vulkan;

  @Override
  protected SortEngine createEngine() {
    if (shared == null) {
      shared = VulkanEngineTest.openOrSkip(Algorithm.RADIX, false);
    }
    vulkan = shared;
    return new VulkanEngineTest.KeepOpen(shared);
  }

  @AfterAll
  static void closeSharedEngine() {
    if (shared != null) {
      shared.close();
      shared = null;
    }
  }

  @AfterEach
  void deviceMemoryReturned() {
    if (vulkan != null) {
      assertEquals(0, vulkan.deviceBytesInUse(), "device bytes still held after the test's sorts");
    }
  }
}
