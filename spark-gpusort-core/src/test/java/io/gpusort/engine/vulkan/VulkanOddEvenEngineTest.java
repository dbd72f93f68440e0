package io.gpusort.engine.vulkan;

import io.gpusort.config.GpuSortConf.Algorithm;
import org.junit.jupiter.api.Tag;

/**
 * The reference suite on the Vulkan engine's odd-even hybrid (Batcher tiles, merge passes).
 */
@Tag("vulkan")
class VulkanOddEvenEngineTest extends VulkanReferenceSuite {
  @Override
  protected VulkanEngine open() {
    return openOrSkip(Algorithm.ODDEVEN);
  }
}
