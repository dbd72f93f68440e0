package io.gpusort.engine.vulkan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.TestSeeds;
import io.gpusort.engine.vulkan.VulkanContext.BufferKind;
import io.gpusort.memory.HostMemory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.vulkan.VK10;
import org.lwjgl.vulkan.VkInstanceCreateInfo;

/**
 * The Vulkan plumbing under the engine: device discovery, buffers and copies, a compute shader
 * reached through buffer device addresses, errors, leaks and timestamps. Runs on the device
 * {@code Vulkan.choose(-1, true)} gives (lavapipe in CI); skipped, with the reason, where no
 * Vulkan device works.
 */
@Tag("vulkan")
class VulkanContextTest {
  private static final long SEED = TestSeeds.baseSeed();
  /** add_constant.comp's push constants: uint64_t data; uint n; uint constant; uint groups. */
  private static final int ADD_PUSH_BYTES = 20;
  private static final int ADD_GROUP_SIZE = 256;

  private static VulkanDeviceInfo deviceOrSkip() {
    assumeTrue(Vulkan.available(), () -> "no Vulkan: " + Vulkan.unavailableReason());
    Optional<VulkanDeviceInfo> device = Vulkan.choose(-1, true);
    assumeTrue(device.isPresent(), () -> "no usable Vulkan device: " + Vulkan.devices());
    return device.get();
  }

  @Test
  void devicesAreListedAndChosen() {
    VulkanDeviceInfo chosen = deviceOrSkip();
    List<VulkanDeviceInfo> devices = Vulkan.devices();
    for (int i = 0; i < devices.size(); i++) {
      VulkanDeviceInfo device = devices.get(i);
      assertEquals(i, device.index());
      assertEquals(device.usable(), device.unusableReason() == null, device.toString());
    }
    assertTrue(chosen.usable());
    assertTrue(chosen.subgroupSize() > 0 && chosen.maxBufferBytes() > 0
        && chosen.maxSharedMemoryBytes() >= 32768 && chosen.maxWorkGroupCountX() > 0,
        chosen.toString());
    if (!chosen.type().isSoftware()) {
      assertEquals(chosen, Vulkan.choose(-1, false).orElseThrow());
    }
    Vulkan.choose(-1, false).ifPresent(device -> assertFalse(device.type().isSoftware(),
        "choose(-1, false) gave a software device: " + device));
    // A software device is never the default, but may be asked for by index.
    for (VulkanDeviceInfo device : devices) {
      if (device.type() == DeviceType.CPU && device.usable()) {
        assertEquals(Optional.of(device), Vulkan.choose(device.index(), false));
      }
      if (!device.usable()) {
        assertEquals(Optional.empty(), Vulkan.choose(device.index(), true));
      }
    }
    assertEquals(Optional.empty(), Vulkan.choose(devices.size(), true));
    assertThrows(IllegalArgumentException.class, () -> Vulkan.choose(-2, true));

    List<VulkanDeviceInfo> lavapipes = devices.stream()
        .filter(device -> device.name().startsWith("llvmpipe")).collect(Collectors.toList());
    for (VulkanDeviceInfo lavapipe : lavapipes) {
      assertEquals(DeviceType.CPU, lavapipe.type(), lavapipe.toString());
      assertTrue(lavapipe.type().isSoftware());
      assertTrue(lavapipe.usable(), lavapipe.toString());
      assertNull(lavapipe.unusableReason());
      assertTrue(lavapipe.timestamps(), lavapipe.toString());
    }
  }

  /** UPLOAD -> DEVICE -> DOWNLOAD gives back what was written; fill() then copy gives the value. */
  @Test
  void ballotRankingWhereFullSubgroupsOfEightToThirtyTwo() {
    VulkanDeviceInfo chosen = deviceOrSkip();
    int size = chosen.subgroupSize();
    assertEquals(chosen.fullSubgroups() && size >= 8 && size <= 32 && 256 % size == 0,
        chosen.ballotRanking(), chosen.toString());
    if (chosen.name().startsWith("llvmpipe")) {
      // CI's device (Vulkan 1.3, subgroups of 8 or 16): the suites there run the ballot ranking.
      assertTrue(chosen.ballotRanking(), chosen.toString());
    }
  }

  @Test
  void copiesAndFillRoundTrip() {
    VulkanDeviceInfo info = deviceOrSkip();
    int n = 1 << 20;
    long bytes = 4L * n;
    int[] input = new SplittableRandom(SEED).ints(n).toArray();
    try (VulkanContext context = VulkanContext.open(info, false);
        VulkanBuffer upload = context.createBuffer(bytes, BufferKind.UPLOAD);
        VulkanBuffer device = context.createBuffer(bytes, BufferKind.DEVICE);
        VulkanBuffer download = context.createBuffer(bytes, BufferKind.DOWNLOAD)) {
      assertEquals(bytes, upload.sizeBytes());
      assertEquals(BufferKind.DEVICE, device.kind());
      assertNotEquals(0, device.deviceAddress());
      assertNotEquals(0, upload.deviceAddress());
      assertNotEquals(0, download.deviceAddress());
      assertThrows(IllegalStateException.class, device::mappedAddress);
      assertTrue(context.bytesAllocated() >= 3 * bytes);

      HostMemory.copyFromArray(input, 0, upload.mappedAddress(), n);
      try (CommandRecorder recorder = context.begin()) {
        recorder.copy(upload, 0, device, 0, bytes);
        recorder.barrier();
        recorder.copy(device, 0, download, 0, bytes);
        recorder.submitAndWait();
      }
      int[] output = new int[n];
      HostMemory.copyToArray(download.mappedAddress(), output, 0, n);
      assertArrayEquals(input, output, "round trip" + TestSeeds.rerunHint(SEED));

      // Words 1000 to 2999 set to the fill value; the rest keep the uploaded data.
      int value = 0xDEADBEEF;
      try (CommandRecorder recorder = context.begin()) {
        recorder.fill(device, 4000, 8000, value);
        recorder.fill(device, 0, 0, 7);  // records nothing
        recorder.barrier();
        recorder.copy(device, 0, download, 0, bytes);
        recorder.submitAndWait();
      }
      HostMemory.copyToArray(download.mappedAddress(), output, 0, n);
      int[] expected = input.clone();
      Arrays.fill(expected, 1000, 3000, value);
      assertArrayEquals(expected, output, "after fill" + TestSeeds.rerunHint(SEED));

      // A copy at offsets, within one buffer (ranges apart) and then out.
      try (CommandRecorder recorder = context.begin()) {
        recorder.copy(device, 0, device, bytes / 2, 4096);
        recorder.barrier();
        recorder.copy(device, bytes / 2, download, 8, 4096);
        recorder.submitAndWait();
      }
      assertEquals(expected[0], HostMemory.getInt(download.mappedAddress() + 8));
      assertEquals(expected[1023], HostMemory.getInt(download.mappedAddress() + 8 + 4092));
    }
  }

  /**
   * add_constant.comp through buffer device addresses, on 3_000_001 words: once as one row of
   * groups, once with the x limit forced down so the groups split over y (with groups past the
   * linear count returning at once).
   */
  @Test
  void computeShaderThroughDeviceAddresses() throws IOException {
    VulkanDeviceInfo info = deviceOrSkip();
    int n = 3_000_001;
    long bytes = 4L * n;
    long groups = (n + ADD_GROUP_SIZE - 1) / ADD_GROUP_SIZE;
    int[] input = new SplittableRandom(SEED).ints(n).toArray();
    try (VulkanContext context = VulkanContext.open(info, false);
        VulkanPipeline add = context.createPipeline("add_constant", addConstantSpirv(),
            ADD_PUSH_BYTES);
        VulkanBuffer upload = context.createBuffer(bytes, BufferKind.UPLOAD);
        VulkanBuffer data = context.createBuffer(bytes, BufferKind.DEVICE);
        VulkanBuffer download = context.createBuffer(bytes, BufferKind.DOWNLOAD)) {
      assertEquals("add_constant", add.name());
      assertEquals(ADD_PUSH_BYTES, add.pushConstantBytes());
      HostMemory.copyFromArray(input, 0, upload.mappedAddress(), n);

      // A direct push buffer, one row of groups.
      ByteBuffer direct = ByteBuffer.allocateDirect(ADD_PUSH_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      direct.putLong(data.deviceAddress()).putInt(n).putInt(5).putInt((int) groups).flip();
      try (CommandRecorder recorder = context.begin()) {
        recorder.copy(upload, 0, data, 0, bytes);
        recorder.barrier();
        recorder.dispatch(add, direct, groups);
        recorder.dispatch(add, direct, 0);  // records nothing
        recorder.barrier();
        recorder.copy(data, 0, download, 0, bytes);
        recorder.submitAndWait();
      }
      assertEquals(0, direct.position(), "dispatch moved the push buffer's position");
      int[] expected = input.clone();
      for (int i = 0; i < n; i++) {
        expected[i] += 5;
      }
      assertResult(expected, download, "one row");

      // A heap push buffer, at a position past a prefix; x limited to 1000 groups, so 12 rows.
      int maxGroupsX = 1000;
      assertTrue(groups > maxGroupsX);
      ByteBuffer heap = ByteBuffer.allocate(4 + ADD_PUSH_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      heap.putInt(-1).putLong(data.deviceAddress()).putInt(n).putInt(1_000_003)
          .putInt((int) groups).flip().position(4);
      try (CommandRecorder recorder = context.begin(maxGroupsX)) {
        recorder.dispatch(add, heap, groups);
        recorder.barrier();
        recorder.copy(data, 0, download, 0, bytes);
        recorder.submitAndWait();
      }
      for (int i = 0; i < n; i++) {
        expected[i] += 1_000_003;
      }
      assertResult(expected, download, "split over y");

      // Shaders reach host-visible buffers through their addresses too.
      ByteBuffer onDownload = ByteBuffer.allocate(ADD_PUSH_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      onDownload.putLong(download.deviceAddress()).putInt(n).putInt(-1).putInt((int) groups)
          .flip();
      try (CommandRecorder recorder = context.begin()) {
        recorder.dispatch(add, onDownload, groups);
        recorder.submitAndWait();
      }
      for (int i = 0; i < n; i++) {
        expected[i] -= 1;
      }
      assertResult(expected, download, "in a DOWNLOAD buffer");

      // More groups than x times y can hold.
      try (CommandRecorder recorder = context.begin(1)) {
        assertThrows(IllegalArgumentException.class,
            () -> recorder.dispatch(add, direct, (long) context.maxWorkGroupCountY + 1));
        assertThrows(IllegalArgumentException.class,
            () -> recorder.dispatch(add, ByteBuffer.allocate(16), 1));
        assertThrows(IllegalArgumentException.class, () -> recorder.dispatch(add, direct, -1));
      }
    }
  }

  /**
   * Several threads share one context: each creates its own buffers and recorders and runs the
   * shader; buffers, pipelines, the command pool and the queue are shared.
   */
  @Test
  void threadsShareOneContext() throws Exception {
    VulkanDeviceInfo info = deviceOrSkip();
    int threads = 4;
    int rounds = 5;
    int n = 100_003;
    long groups = (n + ADD_GROUP_SIZE - 1) / ADD_GROUP_SIZE;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (VulkanContext context = VulkanContext.open(info, false);
        VulkanPipeline add = context.createPipeline("add_constant", addConstantSpirv(),
            ADD_PUSH_BYTES)) {
      List<Future<?>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long seed = SEED + t;
        results.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          for (int round = 0; round < rounds; round++) {
            int[] input = random.ints(n).toArray();
            int constant = random.nextInt();
            try (VulkanBuffer upload = context.createBuffer(4L * n, BufferKind.UPLOAD);
                VulkanBuffer data = context.createBuffer(4L * n, BufferKind.DEVICE);
                VulkanBuffer download = context.createBuffer(4L * n, BufferKind.DOWNLOAD);
                CommandRecorder recorder = context.begin()) {
              HostMemory.copyFromArray(input, 0, upload.mappedAddress(), n);
              ByteBuffer push = ByteBuffer.allocate(ADD_PUSH_BYTES).order(ByteOrder.LITTLE_ENDIAN);
              push.putLong(data.deviceAddress()).putInt(n).putInt(constant).putInt((int) groups)
                  .flip();
              recorder.copy(upload, 0, data, 0, 4L * n);
              recorder.barrier();
              recorder.dispatch(add, push, groups);
              recorder.barrier();
              recorder.copy(data, 0, download, 0, 4L * n);
              recorder.submitAndWait();
              for (int i = 0; i < n; i++) {
                input[i] += constant;
              }
              assertResult(input, download, "thread seed " + seed + ", round " + round);
            }
          }
          return null;
        }));
      }
      for (Future<?> result : results) {
        result.get(5, TimeUnit.MINUTES);
      }
      assertEquals(0, context.bytesAllocated());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void errorsNameTheCallAndTheResult() {
    VulkanException constructed = new VulkanException("vkAllocateMemory",
        VK10.VK_ERROR_OUT_OF_DEVICE_MEMORY, "4294967296 bytes, device-local");
    assertEquals("vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2) "
        + "(4294967296 bytes, device-local)", constructed.getMessage());
    assertEquals(VK10.VK_ERROR_OUT_OF_DEVICE_MEMORY, constructed.result());
    assertEquals("vkQueueSubmit failed: VK_ERROR_DEVICE_LOST (-4)",
        new VulkanException("vkQueueSubmit", VK10.VK_ERROR_DEVICE_LOST).getMessage());
    assertEquals("VK_ERROR_OUT_OF_POOL_MEMORY", VulkanException.resultName(-1000069000));
    assertEquals("VK_ERROR_UNKNOWN", VulkanException.resultName(-13));
    assertEquals("VkResult 12345", VulkanException.resultName(12345));
    assertDoesNotThrow(() -> VulkanException.check(VK10.VK_SUCCESS, "vkCreateFence"));
    VulkanException incomplete = assertThrows(VulkanException.class,
        () -> VulkanException.check(VK10.VK_INCOMPLETE, "vkEnumeratePhysicalDevices", "3 of 4"));
    assertEquals("vkEnumeratePhysicalDevices failed: VK_INCOMPLETE (5) (3 of 4)",
        incomplete.getMessage());

    VulkanDeviceInfo info = deviceOrSkip();
    // A real failure: an instance asking for a layer that does not exist.
    try (MemoryStack stack = MemoryStack.stackPush()) {
      VkInstanceCreateInfo create = VkInstanceCreateInfo.calloc(stack).sType$Default()
          .ppEnabledLayerNames(stack.pointers(stack.UTF8("VK_LAYER_GPUSORT_absent")));
      PointerBuffer handle = stack.mallocPointer(1);
      VulkanException real = assertThrows(VulkanException.class, () -> VulkanException.check(
          VK10.vkCreateInstance(create, null, handle), "vkCreateInstance"));
      assertTrue(real.getMessage().contains("vkCreateInstance"), real.getMessage());
      assertTrue(real.getMessage().contains("VK_ERROR_LAYER_NOT_PRESENT"), real.getMessage());
    }

    try (VulkanContext context = VulkanContext.open(info, false);
        VulkanBuffer upload = context.createBuffer(64, BufferKind.UPLOAD);
        VulkanBuffer download = context.createBuffer(64, BufferKind.DOWNLOAD);
        CommandRecorder recorder = context.begin()) {
      assertThrows(IllegalArgumentException.class,
          () -> context.createBuffer(info.maxBufferBytes() + 1, BufferKind.DEVICE));
      assertThrows(IllegalArgumentException.class,
          () -> context.createBuffer(0, BufferKind.UPLOAD));
      assertThrows(IllegalArgumentException.class,
          () -> context.createPipeline("empty", ByteBuffer.allocate(0), 0));
      assertThrows(IllegalArgumentException.class,
          () -> context.createPipeline("not SPIR-V", ByteBuffer.allocate(64), 0));
      assertThrows(IllegalArgumentException.class,
          () -> context.createPipeline("add", addConstantSpirv(), 132));
      assertThrows(IllegalArgumentException.class,
          () -> context.createPipeline("add", addConstantSpirv(), 18));
      // The kinds' transfer directions, ranges and alignment.
      assertThrows(IllegalArgumentException.class, () -> recorder.copy(download, 0, upload, 0, 4));
      assertThrows(IllegalArgumentException.class, () -> recorder.copy(upload, 0, download, 4, 64));
      assertThrows(IllegalArgumentException.class, () -> recorder.fill(upload, 0, 4, 0));
      assertThrows(IllegalArgumentException.class, () -> recorder.fill(download, 2, 4, 0));
      assertThrows(IllegalArgumentException.class, () -> recorder.fill(download, 0, 68, 0));
      assertThrows(IllegalArgumentException.class, () -> recorder.timestamp(64));
      assertThrows(IllegalStateException.class, () -> recorder.elapsedNanos(0, 1));
      recorder.submitAndWait();
      assertThrows(IllegalStateException.class, recorder::submitAndWait);
      assertThrows(IllegalStateException.class, recorder::barrier);
    }
  }

  /** Memory comes back, close() is idempotent everywhere, and timestamps measure a dispatch. */
  @Test
  void resourcesAreReleasedAndTimed() throws IOException {
    VulkanDeviceInfo info = deviceOrSkip();
    VulkanContext context = VulkanContext.open(info, false);
    try {
      VulkanBuffer a = context.createBuffer(1000, BufferKind.DEVICE);
      VulkanBuffer b = context.createBuffer(4L << 20, BufferKind.DOWNLOAD);
      assertTrue(context.bytesAllocated() >= 1000 + (4L << 20));
      a.close();
      a.close();
      assertThrows(IllegalStateException.class, a::deviceAddress);
      assertTrue(context.bytesAllocated() >= 4L << 20);
      b.close();
      assertEquals(0, context.bytesAllocated());

      int n = 1 << 20;
      VulkanPipeline add =
          context.createPipeline("add_constant", addConstantSpirv(), ADD_PUSH_BYTES);
      VulkanBuffer data = context.createBuffer(4L * n, BufferKind.DEVICE);
      CommandRecorder recorder = context.begin();
      ByteBuffer push = ByteBuffer.allocate(ADD_PUSH_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      push.putLong(data.deviceAddress()).putInt(n).putInt(1).putInt(n / ADD_GROUP_SIZE).flip();
      if (info.timestamps()) {
        recorder.fill(data, 0, 4L * n, 0);
        recorder.barrier();
        recorder.timestamp(0);
        recorder.dispatch(add, push, n / ADD_GROUP_SIZE);
        recorder.timestamp(1);
        assertThrows(IllegalArgumentException.class, () -> recorder.timestamp(1));
        recorder.submitAndWait();
        double nanos = recorder.elapsedNanos(0, 1);
        assertTrue(nanos >= 0, "elapsed " + nanos + " ns");
        assertThrows(IllegalArgumentException.class, () -> recorder.elapsedNanos(0, 2));
      } else {
        assertThrows(IllegalStateException.class, () -> recorder.timestamp(0));
        recorder.submitAndWait();
      }
      add.close();
      add.close();
      try (CommandRecorder other = context.begin()) {
        assertThrows(IllegalStateException.class, () -> other.dispatch(add, push, 1));
      }
      recorder.close();
      recorder.close();
      data.close();
      data.close();
      assertEquals(0, context.bytesAllocated());

      // Left open: the context destroys them when it closes, with a warning each.
      VulkanBuffer leaked = context.createBuffer(4096, BufferKind.UPLOAD);
      context.createPipeline("leaked", addConstantSpirv(), ADD_PUSH_BYTES);
      context.begin();
      context.close();
      assertEquals(0, context.bytesAllocated());
      assertThrows(IllegalStateException.class, leaked::mappedAddress);
      leaked.close();
      assertThrows(IllegalStateException.class,
          () -> context.createBuffer(4, BufferKind.DEVICE));
      assertThrows(IllegalStateException.class, context::begin);
    } finally {
      context.close();
      context.close();
    }
  }

  /** With debug, a context opens whether or not the validation layer is installed. */
  @Test
  void debugContextWithOrWithoutTheValidationLayer() throws IOException {
    VulkanDeviceInfo info = deviceOrSkip();
    Object loggers = LogManager.getContext(false);
    assumeTrue(loggers instanceof LoggerContext, "log4j-core is not the slf4j backend here");
    LoggerConfig root = ((LoggerContext) loggers).getConfiguration().getRootLogger();
    List<String> warnings = new CopyOnWriteArrayList<>();
    AbstractAppender capture = new AbstractAppender("VulkanContextTest", null, null, true,
        Property.EMPTY_ARRAY) {
      @Override
      public void append(LogEvent event) {
        if (event.getLevel() == Level.WARN
            && event.getLoggerName().equals(VulkanContext.class.getName())) {
          warnings.add(event.getMessage().getFormattedMessage());
        }
      }
    };
    capture.start();
    root.addAppender(capture, Level.WARN, null);
    try (VulkanContext context = VulkanContext.open(info, true)) {
      List<String> layerWarnings = warnings.stream()
          .filter(message -> message.contains(VkInstanceHolder.VALIDATION_LAYER))
          .collect(Collectors.toList());
      assertEquals(context.validationEnabled() ? 0 : 1, layerWarnings.size(),
          "warnings: " + warnings);
      // Objects are named for the messenger where VK_EXT_debug_utils exists; work as usual.
      int n = 1000;
      try (VulkanPipeline add = context.createPipeline("add_constant", addConstantSpirv(),
              ADD_PUSH_BYTES);
          VulkanBuffer data = context.createBuffer(4L * n, BufferKind.DOWNLOAD);
          CommandRecorder recorder = context.begin()) {
        recorder.fill(data, 0, 4L * n, 40);
        recorder.barrier();
        ByteBuffer push = ByteBuffer.allocate(ADD_PUSH_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        push.putLong(data.deviceAddress()).putInt(n).putInt(2).putInt(4).flip();
        recorder.dispatch(add, push, 4);
        recorder.submitAndWait();
        for (int i = 0; i < n; i++) {
          assertEquals(42, HostMemory.getInt(data.mappedAddress() + 4L * i), "word " + i);
        }
      }
    } finally {
      root.removeAppender(capture.getName());
      capture.stop();
    }
    if (warnings.stream().anyMatch(message -> message.startsWith("Vulkan: "))) {
      System.out.println("Vulkan debug messages: " + warnings);
    }
  }

  private static void assertResult(int[] expected, VulkanBuffer download, String what) {
    int[] actual = new int[expected.length];
    HostMemory.copyToArray(download.mappedAddress(), actual, 0, actual.length);
    assertArrayEquals(expected, actual, what + TestSeeds.rerunHint(SEED));
  }

  private static ByteBuffer addConstantSpirv() throws IOException {
    try (InputStream in = VulkanContextTest.class.getResourceAsStream("add_constant.spv")) {
      assertTrue(in != null, "add_constant.spv is not on the classpath");
      return ByteBuffer.wrap(in.readAllBytes());
    }
  }
}
