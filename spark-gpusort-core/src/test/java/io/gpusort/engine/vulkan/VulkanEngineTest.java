package io.gpusort.engine.vulkan;

import io.gpusort.config.GpuSortConf.Algorithm;
import org.junit.jupiter.api.Tag;

/**
 * The reference suite on the Vulkan engine's radix sort, with the scatter the device takes
 * (ballot ranking on lavapipe and NVIDIA).
 */
@Tag("vulkan")
class VulkanEngineTest extends VulkanReferenceSuite {
  @Override
  protected VulkanEngine open() {
    return openOrSkip(Algorithm.RADIX);
  }
}
