package io.gpusort.engine.vulkan;

import io.gpusort.config.GpuSortConf.Algorithm;
import org.junit.jupiter.api.Tag;

/**
 * The reference suite on the Vulkan radix sort's two-bit-split scatter, the path of devices
 * without full subgroups of 8 to 32 invocations: the devices the tests run on (lavapipe, NVIDIA)
 * take the ballot-ranking scatter, so this class asks for the other one.
 */
@Tag("vulkan")
class VulkanSplitScatterEngineTest extends VulkanReferenceSuite {
  @Override
  protected VulkanEngine open() {
    return openOrSkip(Algorithm.RADIX, false);
  }
}
