package io.gpusort.engine.vulkan;

import static org.lwjgl.system.MemoryStack.stackPush;

import io.gpusort.engine.EngineException;
import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.util.Objects;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VkBufferCopy;
import org.lwjgl.vulkan.VkCommandBuffer;
import org.lwjgl.vulkan.VkFenceCreateInfo;
import org.lwjgl.vulkan.VkMemoryBarrier;
import org.lwjgl.vulkan.VkSubmitInfo;

/**
 * One primary command buffer being recorded, made by {@link VulkanContext#begin()}: dispatches,
 * barriers, copies, fills and timestamps, then one {@link #submitAndWait()}.
 *
 * <p>Commands run in order of recording only as far as {@link #barrier()}s order them: two
 * dispatches without a barrier between them may overlap. Used by one thread.
 */
public final class CommandRecorder implements AutoCloseable {
  private static final long FENCE_WAIT_NANOS = 10_000_000_000L;
  private static final int COMPUTE_AND_TRANSFER = VK10.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
      | VK10.VK_PIPELINE_STAGE_TRANSFER_BIT;

  private final VulkanContext context;
  private final VkCommandBuffer commandBuffer;
  private final int maxGroupsX;
  private VulkanPipeline bound;
  private long queryPool = VK10.VK_NULL_HANDLE;
  /** Bit s set when slot s has a timestamp recorded. */
  private long writtenSlots;
  /** After a completed submission: each written slot's ticks, masked to the valid bits. */
  private long[] ticks;
  /** Set while a submission may still run: from vkQueueSubmit until its wait returns. */
  private long fence = VK10.VK_NULL_HANDLE;
  private boolean submitted;
  private boolean completed;
  private volatile boolean closed;

  CommandRecorder(VulkanContext context, VkCommandBuffer commandBuffer, int maxGroupsX) {
    this.context = context;
    this.commandBuffer = commandBuffer;
    this.maxGroupsX = maxGroupsX;
  }

  /**
   * Records push constants (push.remaining() bytes from push.position(), must equal the pipeline's
   * pushConstantBytes; heap or direct buffer, written in the shader's byte order, i.e.
   * little-endian; its position is left as it was) and a dispatch of {@code groups} workgroups.
   *
   * <p>groups may exceed info().maxWorkGroupCountX(): then x = maxWorkGroupCountX and y =
   * ceil(groups / x), and the shader (which gets the linear group count in its push constants)
   * computes its linear id as gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x and returns
   * when it is >= groups. groups == 0 records nothing. Binds the pipeline only when it differs from
   * the last bound.
   *
   * @throws IllegalArgumentException when the push-constant size differs from the pipeline's,
   *     groups is negative, or groups exceeds maxWorkGroupCountX * maxWorkGroupCount[1]
   * @throws IllegalStateException when already submitted or closed, or the pipeline is closed
   */
  public void dispatch(VulkanPipeline pipeline, ByteBuffer push, long groups) {
    requireRecording();
    context.requireOwned(pipeline);
    Objects.requireNonNull(push, "push");
    if (push.remaining() != pipeline.pushConstantBytes()) {
      throw new IllegalArgumentException(pipeline + " takes " + pipeline.pushConstantBytes()
          + " push-constant bytes, got " + push.remaining());
    }
    if (groups < 0) {
      throw new IllegalArgumentException(pipeline + ": " + groups + " workgroups");
    }
    if (groups == 0) {
      return;
    }
    long x = Math.min(groups, maxGroupsX);
    long y = (groups + x - 1) / x;
    if (y > context.maxWorkGroupCountY) {
      throw new IllegalArgumentException(pipeline + ": " + groups + " workgroups exceed "
          + maxGroupsX + " x " + context.maxWorkGroupCountY + " on " + context.info().name());
    }
    try (MemoryStack stack = stackPush()) {
      // A native copy: the buffer may be on the heap, and its bytes are recorded right away.
      ByteBuffer constants = stack.malloc(push.remaining());
      constants.put(push.duplicate()).flip();
      synchronized (context.poolLock) {
        if (bound != pipeline) {
          VK10.vkCmdBindPipeline(commandBuffer, VK10.VK_PIPELINE_BIND_POINT_COMPUTE,
              pipeline.pipeline);
          bound = pipeline;
        }
        if (constants.remaining() > 0) {
          VK10.vkCmdPushConstants(commandBuffer, pipeline.layout,
              VK10.VK_SHADER_STAGE_COMPUTE_BIT, 0, constants);
        }
        VK10.vkCmdDispatch(commandBuffer, (int) x, (int) y, 1);
      }
    }
  }

  /**
   * A global memory barrier: all earlier compute-shader writes and transfer writes available and
   * visible to all later compute-shader reads/writes and transfer reads/writes (COMPUTE|TRANSFER
   * stages both sides).
   */
  public void barrier() {
    requireRecording();
    try (MemoryStack stack = stackPush()) {
      VkMemoryBarrier.Buffer barrier = VkMemoryBarrier.calloc(1, stack);
      barrier.get(0).sType$Default()
          .srcAccessMask(VK10.VK_ACCESS_SHADER_WRITE_BIT | VK10.VK_ACCESS_TRANSFER_WRITE_BIT)
          .dstAccessMask(VK10.VK_ACCESS_SHADER_READ_BIT | VK10.VK_ACCESS_SHADER_WRITE_BIT
              | VK10.VK_ACCESS_TRANSFER_READ_BIT | VK10.VK_ACCESS_TRANSFER_WRITE_BIT);
      synchronized (context.poolLock) {
        VK10.vkCmdPipelineBarrier(commandBuffer, COMPUTE_AND_TRANSFER, COMPUTE_AND_TRANSFER, 0,
            barrier, null, null);
      }
    }
  }

  /**
   * Copies {@code bytes} from src at srcOffset to dst at dstOffset (vkCmdCopyBuffer). src must be
   * DEVICE or UPLOAD, dst DEVICE or DOWNLOAD; the ranges must lie inside the buffers and, within
   * one buffer, must not overlap. bytes == 0 records nothing.
   *
   * @throws IllegalArgumentException for a wrong kind, a range outside a buffer, or an overlap
   * @throws IllegalStateException when already submitted or closed, or a buffer is closed
   */
  public void copy(VulkanBuffer src, long srcOffset, VulkanBuffer dst, long dstOffset,
      long bytes) {
    requireRecording();
    context.requireOwned(src, "source");
    context.requireOwned(dst, "destination");
    if (!src.kind().transferSource()) {
      throw new IllegalArgumentException("cannot copy from " + src + ": not a transfer source");
    }
    if (!dst.kind().transferDestination()) {
      throw new IllegalArgumentException("cannot copy to " + dst + ": not a transfer destination");
    }
    checkRange(src, srcOffset, bytes);
    checkRange(dst, dstOffset, bytes);
    if (src == dst && srcOffset < dstOffset + bytes && dstOffset < srcOffset + bytes) {
      throw new IllegalArgumentException("overlapping copy within " + src + ": " + bytes
          + " bytes from " + srcOffset + " to " + dstOffset);
    }
    if (bytes == 0) {
      return;
    }
    try (MemoryStack stack = stackPush()) {
      VkBufferCopy.Buffer region = VkBufferCopy.calloc(1, stack);
      region.get(0).srcOffset(srcOffset).dstOffset(dstOffset).size(bytes);
      synchronized (context.poolLock) {
        VK10.vkCmdCopyBuffer(commandBuffer, src.buffer, dst.buffer, region);
      }
    }
  }

  /**
   * vkCmdFillBuffer: {@code bytes} at offset set to the 4-byte {@code value}, repeated; offset and
   * bytes multiples of 4. dst must be DEVICE or DOWNLOAD. bytes == 0 records nothing.
   *
   * @throws IllegalArgumentException for a wrong kind, unaligned offset or size, or a range
   *     outside the buffer
   * @throws IllegalStateException when already submitted or closed, or the buffer is closed
   */
  public void fill(VulkanBuffer dst, long offset, long bytes, int value) {
    requireRecording();
    context.requireOwned(dst, "destination");
    if (!dst.kind().transferDestination()) {
      throw new IllegalArgumentException("cannot fill " + dst + ": not a transfer destination");
    }
    if (offset % 4 != 0 || bytes % 4 != 0) {
      throw new IllegalArgumentException("fill of " + dst + ": offset " + offset + " and "
          + bytes + " bytes must be multiples of 4");
    }
    checkRange(dst, offset, bytes);
    if (bytes == 0) {
      return;
    }
    synchronized (context.poolLock) {
      VK10.vkCmdFillBuffer(commandBuffer, dst.buffer, offset, bytes, value);
    }
  }

  /**
   * Writes a timestamp (bottom-of-pipe: once every earlier command has finished) into slot 0..63
   * of this recorder's own query pool (created on first use, reset on first use in this command
   * buffer). Each slot can be written once.
   *
   * @throws IllegalStateException when !info().timestamps(), or already submitted or closed
   * @throws IllegalArgumentException when the slot is out of range or already written
   */
  public void timestamp(int slot) {
    requireRecording();
    if (!context.info().timestamps()) {
      throw new IllegalStateException("no timestamps on the compute queue of "
          + context.info().name());
    }
    checkSlot(slot);
    if ((writtenSlots & (1L << slot)) != 0) {
      throw new IllegalArgumentException("timestamp slot " + slot + " already written");
    }
    boolean reset = queryPool == VK10.VK_NULL_HANDLE;
    if (reset) {
      queryPool = context.createTimestampPool();
    }
    synchronized (context.poolLock) {
      if (reset) {
        VK10.vkCmdResetQueryPool(commandBuffer, queryPool, 0, VulkanContext.TIMESTAMP_SLOTS);
      }
      VK10.vkCmdWriteTimestamp(commandBuffer, VK10.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
          queryPool, slot);
    }
    writtenSlots |= 1L << slot;
  }

  /**
   * Ends, submits to the queue (queue access synchronized within the context), waits on a fence
   * (in a loop of 10 s waits so an interrupt or a lost device surfaces: VK_ERROR_DEVICE_LOST
   * throws), frees the fence. May be called once. The command buffer ends with a barrier that
   * makes every write visible to the host, so mapped DOWNLOAD buffers can be read on return.
   *
   * @throws EngineException when the thread is interrupted while the work runs (checked every
   *     10 s; the interrupt flag stays set, and the command buffer is freed once the work ends)
   * @throws VulkanException when ending, submitting or waiting fails
   * @throws IllegalStateException when already submitted or closed
   */
  public void submitAndWait() {
    requireRecording();
    submitted = true;
    try (MemoryStack stack = stackPush()) {
      VkMemoryBarrier.Buffer toHost = VkMemoryBarrier.calloc(1, stack);
      toHost.get(0).sType$Default()
          .srcAccessMask(VK10.VK_ACCESS_SHADER_WRITE_BIT | VK10.VK_ACCESS_TRANSFER_WRITE_BIT)
          .dstAccessMask(VK10.VK_ACCESS_HOST_READ_BIT);
      synchronized (context.poolLock) {
        // A fence alone does not make device writes visible to host reads.
        VK10.vkCmdPipelineBarrier(commandBuffer, COMPUTE_AND_TRANSFER,
            VK10.VK_PIPELINE_STAGE_HOST_BIT, 0, toHost, null, null);
        VulkanException.check(VK10.vkEndCommandBuffer(commandBuffer), "vkEndCommandBuffer");
      }
      LongBuffer handle = stack.mallocLong(1);
      VulkanException.check(VK10.vkCreateFence(context.device,
          VkFenceCreateInfo.calloc(stack).sType$Default(), null, handle), "vkCreateFence");
      long newFence = handle.get(0);
      int result = context.submit(VkSubmitInfo.calloc(stack).sType$Default()
          .pCommandBuffers(stack.pointers(commandBuffer)), newFence);
      if (result != VK10.VK_SUCCESS) {
        VK10.vkDestroyFence(context.device, newFence, null);
        throw new VulkanException("vkQueueSubmit", result, context.info().name());
      }
      fence = newFence;
    }
    waitForFence();
    VK10.vkDestroyFence(context.device, fence, null);
    fence = VK10.VK_NULL_HANDLE;
    completed = true;
    readTimestamps();
  }

  /**
   * After submitAndWait: nanoseconds between two written timestamp slots (timestampPeriod
   * applied, masked to timestampValidBits). {@code toSlot} should be written after
   * {@code fromSlot}; with fewer than 64 valid bits a counter wrap between them is handled.
   *
   * @throws IllegalStateException before a completed submitAndWait
   * @throws IllegalArgumentException when a slot is out of range or was not written
   */
  public double elapsedNanos(int fromSlot, int toSlot) {
    if (!completed) {
      throw new IllegalStateException("timestamps are read after submitAndWait");
    }
    checkSlot(fromSlot);
    checkSlot(toSlot);
    for (int slot : new int[] {fromSlot, toSlot}) {
      if ((writtenSlots & (1L << slot)) == 0) {
        throw new IllegalArgumentException("timestamp slot " + slot + " was not written");
      }
    }
    long elapsedTicks = (ticks[toSlot] - ticks[fromSlot]) & validMask();
    return elapsedTicks * context.info().timestampPeriodNs();
  }

  /**
   * Frees the command buffer and query pool; idempotent. After an interrupted or failed wait the
   * context frees them once the submission has finished, or when it closes.
   */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      context.release(this);
    }
  }

  /** The fence of a submission that may still run, else VK_NULL_HANDLE. */
  long pendingFence() {
    return fence;
  }

  /** Frees the command buffer, query pool and fence; called once, by the context. */
  void destroyHandles() {
    closed = true;
    synchronized (context.poolLock) {
      VK10.vkFreeCommandBuffers(context.device, context.commandPool(), commandBuffer);
    }
    if (queryPool != VK10.VK_NULL_HANDLE) {
      VK10.vkDestroyQueryPool(context.device, queryPool, null);
    }
    if (fence != VK10.VK_NULL_HANDLE) {
      VK10.vkDestroyFence(context.device, fence, null);
    }
  }

  private void waitForFence() {
    long waitedNanos = 0;
    while (true) {
      int result = VK10.vkWaitForFences(context.device, fence, true, FENCE_WAIT_NANOS);
      if (result == VK10.VK_SUCCESS) {
        return;
      }
      if (result != VK10.VK_TIMEOUT) {
        throw new VulkanException("vkWaitForFences", result, context.info().name() + ", after "
            + waitedNanos / 1_000_000_000L + " s");
      }
      waitedNanos += FENCE_WAIT_NANOS;
      if (Thread.currentThread().isInterrupted()) {
        throw new EngineException("interrupted after " + waitedNanos / 1_000_000_000L
            + " s waiting for a Vulkan submission on " + context.info().name()
            + "; it is left to finish on the device");
      }
    }
  }

  private void readTimestamps() {
    if (writtenSlots == 0) {
      return;
    }
    ticks = new long[VulkanContext.TIMESTAMP_SLOTS];
    long mask = validMask();
    try (MemoryStack stack = stackPush()) {
      LongBuffer value = stack.mallocLong(1);
      for (int slot = 0; slot < VulkanContext.TIMESTAMP_SLOTS; slot++) {
        if ((writtenSlots & (1L << slot)) == 0) {
          continue;  // reset but never written: unavailable, so read slot by slot
        }
        VulkanException.check(VK10.vkGetQueryPoolResults(context.device, queryPool, slot, 1,
            value, Long.BYTES, VK10.VK_QUERY_RESULT_64_BIT | VK10.VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults", "timestamp slot " + slot);
        ticks[slot] = value.get(0) & mask;
      }
    }
  }

  private long validMask() {
    int bits = context.timestampValidBits;
    return bits >= 64 ? -1L : (1L << bits) - 1;
  }

  private void requireRecording() {
    if (closed) {
      throw new IllegalStateException("the command recorder is closed");
    }
    if (submitted) {
      throw new IllegalStateException("the command recorder was already submitted");
    }
  }

  private static void checkSlot(int slot) {
    if (slot < 0 || slot >= VulkanContext.TIMESTAMP_SLOTS) {
      throw new IllegalArgumentException("timestamp slot " + slot + " not in 0.."
          + (VulkanContext.TIMESTAMP_SLOTS - 1));
    }
  }

  private static void checkRange(VulkanBuffer buffer, long offset, long bytes) {
    if (offset < 0 || bytes < 0 || offset > buffer.sizeBytes()
        || bytes > buffer.sizeBytes() - offset) {
      throw new IllegalArgumentException(bytes + " bytes at offset " + offset + " do not fit in "
          + buffer);
    }
  }
}
