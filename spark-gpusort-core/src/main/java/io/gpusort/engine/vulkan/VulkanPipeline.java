package io.gpusort.engine.vulkan;

import org.lwjgl.vulkan.VK10;

/**
 * A compute pipeline made by {@link VulkanContext#createPipeline}: one shader, no descriptor sets,
 * its parameters (buffer device addresses, sizes) passed as push constants with each dispatch.
 */
public final class VulkanPipeline implements AutoCloseable {
  final VulkanContext context;
  final long layout;
  final long pipeline;
  private final String name;
  private final int pushConstantBytes;
  private volatile boolean closed;

  VulkanPipeline(VulkanContext context, String name, int pushConstantBytes, long layout,
      long pipeline) {
    this.context = context;
    this.name = name;
    this.pushConstantBytes = pushConstantBytes;
    this.layout = layout;
    this.pipeline = pipeline;
  }

  /** The name given at creation. */
  public String name() {
    return name;
  }

  /** The push-constant bytes each {@link CommandRecorder#dispatch} must pass (0 to 128). */
  public int pushConstantBytes() {
    return pushConstantBytes;
  }

  /**
   * Destroys the pipeline and its layout. Idempotent; a no-op once the context has closed. Must
   * not be called while a submission using the pipeline runs.
   */
  @Override
  public void close() {
    if (!closed) {
      context.release(this);
    }
  }

  @Override
  public String toString() {
    return "pipeline '" + name + "'";
  }

  boolean isClosed() {
    return closed;
  }

  void destroyHandles() {
    closed = true;
    VK10.vkDestroyPipeline(context.device, pipeline, null);
    VK10.vkDestroyPipelineLayout(context.device, layout, null);
  }
}
