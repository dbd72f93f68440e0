package io.gpusort.engine.vulkan;

import static org.lwjgl.system.MemoryStack.stackPush;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.vulkan.EXTDebugUtils;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VK12;
import org.lwjgl.vulkan.VK13;
import org.lwjgl.vulkan.VkBufferCreateInfo;
import org.lwjgl.vulkan.VkBufferDeviceAddressInfo;
import org.lwjgl.vulkan.VkCommandBuffer;
import org.lwjgl.vulkan.VkCommandBufferAllocateInfo;
import org.lwjgl.vulkan.VkCommandBufferBeginInfo;
import org.lwjgl.vulkan.VkCommandPoolCreateInfo;
import org.lwjgl.vulkan.VkComputePipelineCreateInfo;
import org.lwjgl.vulkan.VkDebugUtilsObjectNameInfoEXT;
import org.lwjgl.vulkan.VkDevice;
import org.lwjgl.vulkan.VkDeviceCreateInfo;
import org.lwjgl.vulkan.VkDeviceQueueCreateInfo;
import org.lwjgl.vulkan.VkMemoryAllocateFlagsInfo;
import org.lwjgl.vulkan.VkMemoryAllocateInfo;
import org.lwjgl.vulkan.VkMemoryDedicatedAllocateInfo;
import org.lwjgl.vulkan.VkMemoryRequirements;
import org.lwjgl.vulkan.VkPhysicalDevice;
import org.lwjgl.vulkan.VkPhysicalDeviceFeatures2;
import org.lwjgl.vulkan.VkPhysicalDeviceProperties;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan12Features;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan13Features;
import org.lwjgl.vulkan.VkPipelineLayoutCreateInfo;
import org.lwjgl.vulkan.VkPushConstantRange;
import org.lwjgl.vulkan.VkQueryPoolCreateInfo;
import org.lwjgl.vulkan.VkQueue;
import org.lwjgl.vulkan.VkShaderModuleCreateInfo;
import org.lwjgl.vulkan.VkSubmitInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One logical Vulkan device with its own instance, one compute queue and a command pool: the
 * owner of every buffer, pipeline and command recorder made from it.
 *
 * <p>Buffers, pipelines and recorders are {@link AutoCloseable}; whatever is still open when the
 * context closes is destroyed then, with a warning naming it. Objects must not be closed while a
 * submission that uses them is running (a {@link CommandRecorder#submitAndWait} on another thread).
 */
public final class VulkanContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VulkanContext.class);
  /** The push-constant bytes every device offers ({@code maxPushConstantsSize}'s minimum). */
  static final int MAX_PUSH_CONSTANT_BYTES = 128;
  private static final int SPIRV_MAGIC = 0x07230203;
  /** Timestamp slots in each recorder's query pool. */
  static final int TIMESTAMP_SLOTS = 64;

  /** The memory a buffer lives in, and so what it can be used for. */
  public enum BufferKind {
    /**
     * Device-local memory; usage STORAGE | TRANSFER_SRC | TRANSFER_DST | SHADER_DEVICE_ADDRESS;
     * memory allocated with VkMemoryAllocateFlagsInfo DEVICE_ADDRESS. Has {@link
     * VulkanBuffer#deviceAddress()}; the host cannot read or write it.
     */
    DEVICE(VK10.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK10.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
        | VK10.VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK12.VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT),
    /**
     * Host-visible and host-coherent memory, persistently mapped; usage TRANSFER_SRC | STORAGE |
     * SHADER_DEVICE_ADDRESS (with the DEVICE_ADDRESS allocate flag). Has {@link
     * VulkanBuffer#mappedAddress()} and {@link VulkanBuffer#deviceAddress()}. A copy source, never
     * a copy or fill destination.
     */
    UPLOAD(VK10.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK10.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        | VK12.VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT),
    /**
     * Host-visible, host-coherent and, where a type offers it, host-cached memory, persistently
     * mapped; usage TRANSFER_DST | STORAGE | SHADER_DEVICE_ADDRESS. Has {@link
     * VulkanBuffer#mappedAddress()} and {@link VulkanBuffer#deviceAddress()}. A copy or fill
     * destination, never a copy source.
     */
    DOWNLOAD(VK10.VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK10.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        | VK12.VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);

    final int usage;

    BufferKind(int usage) {
      this.usage = usage;
    }

    boolean transferSource() {
      return (usage & VK10.VK_BUFFER_USAGE_TRANSFER_SRC_BIT) != 0;
    }

    boolean transferDestination() {
      return (usage & VK10.VK_BUFFER_USAGE_TRANSFER_DST_BIT) != 0;
    }
  }

  private final VulkanDeviceInfo info;
  private final VkInstanceHolder instance;
  final VkDevice device;
  private final VkQueue queue;
  private final long commandPool;
  private final VkMemoryTypes memoryTypes;
  /** {@code maxComputeWorkGroupCount[1]}: the y bound of a split dispatch. */
  final int maxWorkGroupCountY;
  /** {@code timestampValidBits} of the queue's family. */
  final int timestampValidBits;
  /**
   * Guards the command pool: allocating, beginning, recording into, ending and freeing command
   * buffers of one pool must not happen on two threads at once, even for different buffers.
   */
  final Object poolLock = new Object();
  private final Object queueLock = new Object();
  /** Guards the sets of live objects and {@link #closed}. */
  private final Object lock = new Object();
  private final Set<VulkanBuffer> buffers = new LinkedHashSet<>();
  private final Set<VulkanPipeline> pipelines = new LinkedHashSet<>();
  private final Set<CommandRecorder> recorders = new LinkedHashSet<>();
  /** Recorders closed while their submission may still run; destroyed once their fence is. */
  private final List<CommandRecorder> retired = new ArrayList<>();
  private final AtomicLong bytesAllocated = new AtomicLong();
  private final AtomicLong nextBufferId = new AtomicLong();
  private boolean closed;

  private VulkanContext(VulkanDeviceInfo info, VkInstanceHolder instance,
      VkPhysicalDevice physical, VkDevice device, int queueFamily, int timestampValidBits,
      long commandPool) {
    this.info = info;
    this.instance = instance;
    this.device = device;
    this.commandPool = commandPool;
    this.timestampValidBits = timestampValidBits;
    this.memoryTypes = VkMemoryTypes.of(physical);
    try (MemoryStack stack = stackPush()) {
      PointerBuffer handle = stack.mallocPointer(1);
      VK10.vkGetDeviceQueue(device, queueFamily, 0, handle);
      this.queue = new VkQueue(handle.get(0), device);
      VkPhysicalDeviceProperties properties = VkPhysicalDeviceProperties.calloc(stack);
      VK10.vkGetPhysicalDeviceProperties(physical, properties);
      this.maxWorkGroupCountY = properties.limits().maxComputeWorkGroupCount(1);
    }
  }

  /**
   * Creates its own VkInstance (API 1.2; with {@code debug}: the VK_LAYER_KHRONOS_validation layer
   * and a VK_EXT_debug_utils messenger logging through slf4j (errors at error, warnings at warn),
   * or one slf4j warning when the layer is absent), a logical device on that physical device with
   * one queue of a compute-capable family (prefer a compute-only family, else any with compute),
   * the features bufferDeviceAddress and shaderInt64 enabled, and a command pool
   * (RESET_COMMAND_BUFFER). On any failure it destroys what it built so far and throws
   * VulkanException.
   *
   * @param device a usable device from {@link Vulkan#devices()} or {@link Vulkan#choose}
   * @throws IllegalArgumentException when the device is not usable
   * @throws IllegalStateException when Vulkan is not available
   * @throws VulkanException when a Vulkan call fails, or the device is no longer at its index
   */
  public static VulkanContext open(VulkanDeviceInfo device, boolean debug) {
    Objects.requireNonNull(device, "device");
    if (!device.usable()) {
      throw new IllegalArgumentException("Vulkan device " + device.index() + " ("
          + device.name() + ") is not usable: " + device.unusableReason());
    }
    if (!Vulkan.available()) {
      throw new IllegalStateException("Vulkan is not available: " + Vulkan.unavailableReason());
    }
    VkInstanceHolder instance = debug ? VkInstanceHolder.create(true) : VkInstanceHolder.shared();
    VkDevice logical = null;
    long pool = VK10.VK_NULL_HANDLE;
    try {
      VkPhysicalDevice physical = findPhysicalDevice(instance, device);
      VkDeviceProbe.QueueFamily family = VkDeviceProbe.computeQueueFamily(physical);
      if (family.index() < 0) {
        throw new VulkanException("vkGetPhysicalDeviceQueueFamilyProperties",
            VK10.VK_ERROR_FEATURE_NOT_PRESENT, "no queue family with compute on " + device.name());
      }
      logical = createDevice(physical, family.index(), device.name(), device.fullSubgroups());
      pool = createCommandPool(logical, family.index());
      return new VulkanContext(device, instance, physical, logical, family.index(),
          family.timestampValidBits(), pool);
    } catch (RuntimeException | Error e) {
      if (pool != VK10.VK_NULL_HANDLE) {
        VK10.vkDestroyCommandPool(logical, pool, null);
      }
      if (logical != null) {
        VK10.vkDestroyDevice(logical, null);
      }
      instance.close();
      throw e;
    }
  }

  /**
   * The memory type each buffer kind takes (for a buffer that any type can hold) and every type
   * the device offers, for logs and benchmarks.
   */
  public String describeMemory() {
    StringBuilder text = new StringBuilder();
    for (BufferKind kind : BufferKind.values()) {
      int type = memoryTypes.choose(~0, kind);
      text.append(kind).append(" -> ").append(type < 0 ? "none" : memoryTypes.describe(type))
          .append("; ");
    }
    return text.append("types: ").append(memoryTypes.describeAll()).toString();
  }

  /** The physical device this context runs on. */
  public VulkanDeviceInfo info() {
    return info;
  }

  /**
   * A buffer with its own VkDeviceMemory, of exactly {@code bytes} usable bytes (the allocation
   * may be larger, see {@link #bytesAllocated()}). Its contents start undefined. Thread-safe.
   *
   * @throws IllegalArgumentException when {@code bytes <= 0} or {@code > info().maxBufferBytes()}
   * @throws IllegalStateException when the context is closed
   * @throws VulkanException naming the call, the bytes and the kind on failure, e.g. out of
   *     device memory
   */
  public VulkanBuffer createBuffer(long bytes, BufferKind kind) {
    Objects.requireNonNull(kind, "kind");
    if (bytes <= 0 || bytes > info.maxBufferBytes()) {
      throw new IllegalArgumentException("buffer of " + bytes + " bytes: must be 1 to "
          + info.maxBufferBytes() + " bytes on " + info.name());
    }
    requireOpen();
    String detail = bytes + " bytes, " + kind;
    try (MemoryStack stack = stackPush()) {
      VkBufferCreateInfo create = VkBufferCreateInfo.calloc(stack).sType$Default()
          .size(bytes).usage(kind.usage).sharingMode(VK10.VK_SHARING_MODE_EXCLUSIVE);
      LongBuffer handle = stack.mallocLong(1);
      VulkanException.check(VK10.vkCreateBuffer(device, create, null, handle), "vkCreateBuffer",
          detail);
      long buffer = handle.get(0);
      long memory = VK10.VK_NULL_HANDLE;
      try {
        VkMemoryRequirements requirements = VkMemoryRequirements.calloc(stack);
        VK10.vkGetBufferMemoryRequirements(device, buffer, requirements);
        int type = memoryTypes.choose(requirements.memoryTypeBits(), kind);
        if (type < 0) {
          throw new VulkanException("vkAllocateMemory", VK10.VK_ERROR_FEATURE_NOT_PRESENT,
              detail + ", no suitable memory type among " + memoryTypes.describeAll());
        }
        detail = detail + ", " + memoryTypes.describe(type);
        // A dedicated allocation: every buffer has its own memory anyway, and the driver may place
        // it as suits that one buffer (no speed difference measured on the H200, 2026-11-30).
        VkMemoryDedicatedAllocateInfo dedicated = VkMemoryDedicatedAllocateInfo.calloc(stack)
            .sType$Default().buffer(buffer);
        VkMemoryAllocateFlagsInfo flags = VkMemoryAllocateFlagsInfo.calloc(stack).sType$Default()
            .pNext(dedicated.address()).flags(VK12.VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT);
        VkMemoryAllocateInfo allocate = VkMemoryAllocateInfo.calloc(stack).sType$Default()
            .pNext(flags.address()).allocationSize(requirements.size()).memoryTypeIndex(type);
        VulkanException.check(VK10.vkAllocateMemory(device, allocate, null, handle),
            "vkAllocateMemory", detail);
        memory = handle.get(0);
        VulkanException.check(VK10.vkBindBufferMemory(device, buffer, memory, 0),
            "vkBindBufferMemory", detail);
        long mapped = 0;
        if (kind != BufferKind.DEVICE) {
          PointerBuffer pointer = stack.mallocPointer(1);
          VulkanException.check(VK10.vkMapMemory(device, memory, 0, VK10.VK_WHOLE_SIZE, 0,
              pointer), "vkMapMemory", detail);
          mapped = pointer.get(0);
        }
        long address = VK12.vkGetBufferDeviceAddress(device,
            VkBufferDeviceAddressInfo.calloc(stack).sType$Default().buffer(buffer));
        VulkanBuffer result = new VulkanBuffer(this, nextBufferId.incrementAndGet(), buffer,
            memory, bytes, requirements.size(), kind, address, mapped);
        nameObject(VK10.VK_OBJECT_TYPE_BUFFER, buffer, result.toString());
        synchronized (lock) {
          requireOpen();
          buffers.add(result);
          bytesAllocated.addAndGet(requirements.size());
        }
        return result;
      } catch (RuntimeException | Error e) {
        if (memory != VK10.VK_NULL_HANDLE) {
          VK10.vkFreeMemory(device, memory, null);  // also unmaps it
        }
        VK10.vkDestroyBuffer(device, buffer, null);
        throw e;
      }
    }
  }

  /**
   * A compute pipeline from SPIR-V (entry point "main"), no descriptor sets, one push-constant
   * range (COMPUTE, offset 0, pushConstantBytes, a multiple of 4, at most 128; none when 0). The
   * shader module is destroyed once the pipeline exists. Thread-safe.
   *
   * @param name names the pipeline in logs, leak warnings and (with debug) validation messages
   * @param spirv the module's words, little-endian, from its position to its limit (heap or
   *     direct; its position is left as it was)
   * @throws IllegalArgumentException when spirv is not SPIR-V (empty, not whole words, no magic
   *     number) or pushConstantBytes is out of range
   * @throws VulkanException when the module or pipeline cannot be created (invalid SPIR-V)
   */
  public VulkanPipeline createPipeline(String name, ByteBuffer spirv, int pushConstantBytes) {
    return createPipeline(name, spirv, pushConstantBytes, false);
  }

  /**
   * {@link #createPipeline(String, ByteBuffer, int)}, and with {@code requireFullSubgroups} the
   * pipeline runs in full subgroups (every subgroup of a workgroup whose size is a multiple of the
   * subgroup size has all its invocations active); only where {@link
   * VulkanDeviceInfo#fullSubgroups()}.
   *
   * @throws IllegalArgumentException also when full subgroups are asked for and not supported
   */
  public VulkanPipeline createPipeline(String name, ByteBuffer spirv, int pushConstantBytes,
      boolean requireFullSubgroups) {
    if (requireFullSubgroups && !info.fullSubgroups()) {
      throw new IllegalArgumentException("pipeline " + name + ": " + info.name()
          + " cannot require full subgroups (no computeFullSubgroups)");
    }
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(spirv, "spirv");
    if (pushConstantBytes < 0 || pushConstantBytes % 4 != 0
        || pushConstantBytes > MAX_PUSH_CONSTANT_BYTES) {
      throw new IllegalArgumentException("pipeline " + name + ": " + pushConstantBytes
          + " push-constant bytes, must be a multiple of 4 from 0 to " + MAX_PUSH_CONSTANT_BYTES);
    }
    int sizeBytes = spirv.remaining();
    if (sizeBytes < 20 || sizeBytes % 4 != 0
        || spirv.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(spirv.position())
            != SPIRV_MAGIC) {
      throw new IllegalArgumentException("pipeline " + name + ": " + sizeBytes
          + " bytes are not a little-endian SPIR-V module");
    }
    requireOpen();
    // vkCreateShaderModule reads the words through a 4-byte-aligned native pointer.
    ByteBuffer code = MemoryUtil.memAlloc(sizeBytes);
    long module = VK10.VK_NULL_HANDLE;
    long layout = VK10.VK_NULL_HANDLE;
    try (MemoryStack stack = stackPush()) {
      code.put(spirv.duplicate()).flip();
      LongBuffer handle = stack.mallocLong(1);
      VulkanException.check(VK10.vkCreateShaderModule(device,
          VkShaderModuleCreateInfo.calloc(stack).sType$Default().pCode(code), null, handle),
          "vkCreateShaderModule", name + ", " + sizeBytes + " bytes");
      module = handle.get(0);
      VkPipelineLayoutCreateInfo layoutInfo =
          VkPipelineLayoutCreateInfo.calloc(stack).sType$Default();
      if (pushConstantBytes > 0) {
        layoutInfo.pPushConstantRanges(VkPushConstantRange.calloc(1, stack)
            .stageFlags(VK10.VK_SHADER_STAGE_COMPUTE_BIT).offset(0).size(pushConstantBytes));
      }
      VulkanException.check(VK10.vkCreatePipelineLayout(device, layoutInfo, null, handle),
          "vkCreatePipelineLayout", name + ", " + pushConstantBytes + " push-constant bytes");
      layout = handle.get(0);
      VkComputePipelineCreateInfo.Buffer pipelineInfo =
          VkComputePipelineCreateInfo.calloc(1, stack);
      pipelineInfo.get(0).sType$Default().layout(layout).stage().sType$Default()
          .stage(VK10.VK_SHADER_STAGE_COMPUTE_BIT).module(module).pName(stack.UTF8("main"))
          .flags(requireFullSubgroups
              ? VK13.VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0);
      VulkanException.check(VK10.vkCreateComputePipelines(device, VK10.VK_NULL_HANDLE,
          pipelineInfo, null, handle), "vkCreateComputePipelines", name);
      VulkanPipeline pipeline =
          new VulkanPipeline(this, name, pushConstantBytes, layout, handle.get(0));
      layout = VK10.VK_NULL_HANDLE;  // owned by the pipeline now
      nameObject(VK10.VK_OBJECT_TYPE_PIPELINE, pipeline.pipeline, name);
      synchronized (lock) {
        if (closed) {
          pipeline.destroyHandles();
          throw new IllegalStateException("the Vulkan context on " + info.name() + " is closed");
        }
        pipelines.add(pipeline);
      }
      return pipeline;
    } finally {
      if (layout != VK10.VK_NULL_HANDLE) {
        VK10.vkDestroyPipelineLayout(device, layout, null);
      }
      if (module != VK10.VK_NULL_HANDLE) {
        VK10.vkDestroyShaderModule(device, module, null);
      }
      MemoryUtil.memFree(code);
    }
  }

  /**
   * Allocates and begins a primary command buffer (ONE_TIME_SUBMIT). The recorder is used by one
   * thread; recorders of one context may be recorded and submitted on different threads at once.
   *
   * @throws IllegalStateException when the context is closed
   */
  public CommandRecorder begin() {
    return begin(info.maxWorkGroupCountX());
  }

  /** As {@link #begin()}, splitting dispatches at {@code maxGroupsX} (tests force the y split). */
  CommandRecorder begin(int maxGroupsX) {
    if (maxGroupsX <= 0 || maxGroupsX > info.maxWorkGroupCountX()) {
      throw new IllegalArgumentException("maxGroupsX " + maxGroupsX + " not in 1.."
          + info.maxWorkGroupCountX());
    }
    requireOpen();
    reapRetired();
    VkCommandBuffer commandBuffer;
    try (MemoryStack stack = stackPush()) {
      PointerBuffer handle = stack.mallocPointer(1);
      synchronized (poolLock) {
        VulkanException.check(VK10.vkAllocateCommandBuffers(device,
            VkCommandBufferAllocateInfo.calloc(stack).sType$Default().commandPool(commandPool)
                .level(VK10.VK_COMMAND_BUFFER_LEVEL_PRIMARY).commandBufferCount(1), handle),
            "vkAllocateCommandBuffers");
        commandBuffer = new VkCommandBuffer(handle.get(0), device);
        int result = VK10.vkBeginCommandBuffer(commandBuffer, VkCommandBufferBeginInfo
            .calloc(stack).sType$Default().flags(VK10.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT));
        if (result != VK10.VK_SUCCESS) {
          VK10.vkFreeCommandBuffers(device, commandPool, commandBuffer);
          throw new VulkanException("vkBeginCommandBuffer", result);
        }
      }
    }
    CommandRecorder recorder = new CommandRecorder(this, commandBuffer, maxGroupsX);
    synchronized (lock) {
      if (closed) {
        recorder.destroyHandles();
        throw new IllegalStateException("the Vulkan context on " + info.name() + " is closed");
      }
      recorders.add(recorder);
    }
    return recorder;
  }

  /**
   * Device memory bytes held by live buffers of this context (all kinds): the sum of their
   * allocations, which the driver may round up from {@link VulkanBuffer#sizeBytes()}.
   */
  public long bytesAllocated() {
    return bytesAllocated.get();
  }

  /**
   * Waits for the device to be idle, then destroys every object it still owns (live buffers and
   * pipelines included, logging a warning naming each leaked one), the device, the messenger and
   * the instance. Idempotent.
   */
  @Override
  public void close() {
    List<CommandRecorder> liveRecorders;
    List<VulkanPipeline> livePipelines;
    List<VulkanBuffer> liveBuffers;
    List<CommandRecorder> retiredRecorders;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      liveRecorders = new ArrayList<>(recorders);
      livePipelines = new ArrayList<>(pipelines);
      liveBuffers = new ArrayList<>(buffers);
      retiredRecorders = new ArrayList<>(retired);
      recorders.clear();
      pipelines.clear();
      buffers.clear();
      retired.clear();
    }
    int idle;
    synchronized (queueLock) {
      idle = VK10.vkDeviceWaitIdle(device);
    }
    if (idle != VK10.VK_SUCCESS) {
      // A lost device: its objects can and must still be destroyed.
      LOG.warn("vkDeviceWaitIdle failed while closing the Vulkan context on {}: {}",
          info.name(), VulkanException.resultName(idle));
    }
    for (CommandRecorder recorder : retiredRecorders) {
      recorder.destroyHandles();
    }
    for (CommandRecorder recorder : liveRecorders) {
      LOG.warn("A Vulkan command recorder was not closed; destroying it with the context");
      recorder.destroyHandles();
    }
    for (VulkanPipeline pipeline : livePipelines) {
      LOG.warn("Vulkan pipeline '{}' was not closed; destroying it with the context",
          pipeline.name());
      pipeline.destroyHandles();
    }
    for (VulkanBuffer buffer : liveBuffers) {
      LOG.warn("Vulkan {} was not closed; destroying it with the context", buffer);
      destroyBufferHandles(buffer);
    }
    VK10.vkDestroyCommandPool(device, commandPool, null);
    VK10.vkDestroyDevice(device, null);
    instance.close();
  }

  // ---- For the package's objects ----

  /** Destroys a buffer its owner closed; no-op when the context already destroyed it. */
  void release(VulkanBuffer buffer) {
    synchronized (lock) {
      if (!buffers.remove(buffer)) {
        return;
      }
    }
    destroyBufferHandles(buffer);
  }

  private void destroyBufferHandles(VulkanBuffer buffer) {
    buffer.markClosed();
    VK10.vkDestroyBuffer(device, buffer.buffer, null);
    VK10.vkFreeMemory(device, buffer.memory, null);  // also unmaps it
    bytesAllocated.addAndGet(-buffer.allocationBytes);
  }

  /** Destroys a pipeline its owner closed; no-op when the context already destroyed it. */
  void release(VulkanPipeline pipeline) {
    synchronized (lock) {
      if (!pipelines.remove(pipeline)) {
        return;
      }
    }
    pipeline.destroyHandles();
  }

  /**
   * Frees a recorder its owner closed; a recorder whose submission may still run (its wait was
   * interrupted or failed) is kept until its fence signals or the context closes.
   */
  void release(CommandRecorder recorder) {
    synchronized (lock) {
      if (!recorders.remove(recorder)) {
        return;
      }
      if (recorder.pendingFence() != VK10.VK_NULL_HANDLE) {
        retired.add(recorder);
        return;
      }
    }
    recorder.destroyHandles();
  }

  /** Frees retired recorders whose submission has finished. */
  private void reapRetired() {
    List<CommandRecorder> done = new ArrayList<>();
    synchronized (lock) {
      retired.removeIf(recorder -> {
        boolean finished =
            VK10.vkGetFenceStatus(device, recorder.pendingFence()) == VK10.VK_SUCCESS;
        if (finished) {
          done.add(recorder);
        }
        return finished;
      });
    }
    done.forEach(CommandRecorder::destroyHandles);
  }

  /** Submits one command buffer, signalling {@code fence}; the queue is used by one thread. */
  int submit(VkSubmitInfo submit, long fence) {
    synchronized (queueLock) {
      return VK10.vkQueueSubmit(queue, submit, fence);
    }
  }

  /** A query pool of {@link #TIMESTAMP_SLOTS} timestamps. */
  long createTimestampPool() {
    try (MemoryStack stack = stackPush()) {
      LongBuffer handle = stack.mallocLong(1);
      VulkanException.check(VK10.vkCreateQueryPool(device, VkQueryPoolCreateInfo.calloc(stack)
          .sType$Default().queryType(VK10.VK_QUERY_TYPE_TIMESTAMP).queryCount(TIMESTAMP_SLOTS),
          null, handle), "vkCreateQueryPool", TIMESTAMP_SLOTS + " timestamps");
      return handle.get(0);
    }
  }

  long commandPool() {
    return commandPool;
  }

  /** Throws unless {@code buffer} is an open buffer of this context. */
  void requireOwned(VulkanBuffer buffer, String role) {
    Objects.requireNonNull(buffer, role);
    if (buffer.context != this) {
      throw new IllegalArgumentException(role + " " + buffer + " belongs to another context");
    }
    if (buffer.isClosed()) {
      throw new IllegalStateException(role + " " + buffer + " is closed");
    }
  }

  /** Throws unless {@code pipeline} is an open pipeline of this context. */
  void requireOwned(VulkanPipeline pipeline) {
    Objects.requireNonNull(pipeline, "pipeline");
    if (pipeline.context != this) {
      throw new IllegalArgumentException("pipeline " + pipeline.name()
          + " belongs to another context");
    }
    if (pipeline.isClosed()) {
      throw new IllegalStateException("pipeline " + pipeline.name() + " is closed");
    }
  }

  /** Whether the validation layer is enabled (debug asked for and the layer installed). */
  boolean validationEnabled() {
    return instance.validation;
  }

  private void requireOpen() {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("the Vulkan context on " + info.name() + " is closed");
      }
    }
  }

  /** Names an object in validation messages; only where debug utils are enabled. */
  private void nameObject(int objectType, long handle, String name) {
    if (!instance.debugUtils) {
      return;
    }
    try (MemoryStack stack = stackPush()) {
      int result = EXTDebugUtils.vkSetDebugUtilsObjectNameEXT(device,
          VkDebugUtilsObjectNameInfoEXT.calloc(stack).sType$Default().objectType(objectType)
              .objectHandle(handle).pObjectName(stack.UTF8(name)));
      if (result != VK10.VK_SUCCESS) {
        LOG.debug("vkSetDebugUtilsObjectNameEXT failed for {}: {}", name,
            VulkanException.resultName(result));
      }
    }
  }

  private static VkPhysicalDevice findPhysicalDevice(VkInstanceHolder instance,
      VulkanDeviceInfo device) {
    List<VkPhysicalDevice> physicalDevices = instance.physicalDevices();
    if (device.index() < physicalDevices.size()) {
      VkPhysicalDevice physical = physicalDevices.get(device.index());
      try (MemoryStack stack = stackPush()) {
        VkPhysicalDeviceProperties properties = VkPhysicalDeviceProperties.calloc(stack);
        VK10.vkGetPhysicalDeviceProperties(physical, properties);
        if (properties.deviceNameString().equals(device.name())) {
          return physical;
        }
      }
    }
    throw new VulkanException("vkEnumeratePhysicalDevices", VK10.VK_ERROR_INITIALIZATION_FAILED,
        "device " + device.index() + " (" + device.name() + ") is no longer among the "
            + physicalDevices.size() + " devices at that index");
  }

  private static VkDevice createDevice(VkPhysicalDevice physical, int queueFamily, String name,
      boolean fullSubgroups) {
    try (MemoryStack stack = stackPush()) {
      VkDeviceQueueCreateInfo.Buffer queues = VkDeviceQueueCreateInfo.calloc(1, stack);
      queues.get(0).sType$Default().queueFamilyIndex(queueFamily)
          .pQueuePriorities(stack.floats(1.0f));
      VkPhysicalDeviceVulkan12Features features12 = VkPhysicalDeviceVulkan12Features.calloc(stack)
          .sType$Default().bufferDeviceAddress(true);
      if (fullSubgroups) {
        features12.pNext(VkPhysicalDeviceVulkan13Features.calloc(stack).sType$Default()
            .computeFullSubgroups(true).address());
      }
      VkPhysicalDeviceFeatures2 features = VkPhysicalDeviceFeatures2.calloc(stack).sType$Default()
          .pNext(features12.address());
      features.features().shaderInt64(true);
      VkDeviceCreateInfo create = VkDeviceCreateInfo.calloc(stack).sType$Default()
          .pNext(features.address()).pQueueCreateInfos(queues);
      PointerBuffer handle = stack.mallocPointer(1);
      VulkanException.check(VK10.vkCreateDevice(physical, create, null, handle), "vkCreateDevice",
          name + ", queue family " + queueFamily);
      return new VkDevice(handle.get(0), physical, create);
    }
  }

  private static long createCommandPool(VkDevice device, int queueFamily) {
    try (MemoryStack stack = stackPush()) {
      LongBuffer handle = stack.mallocLong(1);
      VulkanException.check(VK10.vkCreateCommandPool(device, VkCommandPoolCreateInfo.calloc(stack)
          .sType$Default().flags(VK10.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)
          .queueFamilyIndex(queueFamily), null, handle), "vkCreateCommandPool",
          "queue family " + queueFamily);
      return handle.get(0);
    }
  }
}
