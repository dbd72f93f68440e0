package io.gpusort.engine.vulkan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineReferenceTests;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;

/**
 * The reference suite on one configuration of the Vulkan engine, on the best Vulkan device here,
 * software devices allowed: lavapipe in CI, NVIDIA's driver on the GPU host; the system property
 * {@code gpusort.test.vulkan.device} names another device index. Skipped, with the reason, where
 * no Vulkan device works.
 *
 * <p>One engine serves a whole test class, as one serves a whole executor (Engines shares them):
 * the suite's per-test close leaves it open, and device memory must be back to zero after every
 * test.
 */
abstract class VulkanReferenceSuite extends EngineReferenceTests {
  private static final AtomicBoolean ANNOUNCED = new AtomicBoolean();
  /** Each test class's engine, closed after the class. */
  private static final Map<Class<?>, VulkanEngine> SHARED = new ConcurrentHashMap<>();
  private VulkanEngine vulkan;

  /** Opens the class's engine (see {@link #openOrSkip}). */
  protected abstract VulkanEngine open();

  @Override
  protected final SortEngine createEngine() {
    vulkan = SHARED.computeIfAbsent(getClass(), c -> open());
    return new KeepOpen(vulkan);
  }

  @Override
  protected final boolean slowDevice() {
    return vulkan != null && vulkan.deviceInfo().type().isSoftware();
  }

  @AfterAll
  static void closeSharedEngines() {
    SHARED.values().forEach(VulkanEngine::close);
    SHARED.clear();
  }

  /** The engine on the test device with {@code algorithm}, or the test skipped with the reason. */
  static VulkanEngine openOrSkip(Algorithm algorithm) {
    return openOrSkip(algorithm, true);
  }

  /** With ballotRanking false, the radix passes take the two-bit-split scatter. */
  static VulkanEngine openOrSkip(Algorithm algorithm, boolean ballotRanking) {
    assumeTrue(Vulkan.available(), () -> "no Vulkan: " + Vulkan.unavailableReason());
    int index = Integer.getInteger("gpusort.test.vulkan.device", -1);
    Optional<VulkanDeviceInfo> device = Vulkan.choose(index, true);
    assumeTrue(device.isPresent(), () -> "no usable Vulkan device: " + Vulkan.devices());
    VulkanEngine engine = new VulkanEngine(EngineOptions.defaults(EngineChoice.VULKAN)
        .withAlgorithm(algorithm).withVulkanDevice(index, true), ballotRanking);
    if (ANNOUNCED.compareAndSet(false, true)) {
      // Shows in the build log which device the Vulkan suites ran on (lavapipe in CI).
      System.out.println("Vulkan engine tests run on " + engine.deviceDescription()
          + (engine.deviceInfo().ballotRanking() ? ", radix passes ranked with subgroup ballots"
              : ", radix passes by two-bit splits (no full subgroups of 8 to 32)"));
    }
    return engine;
  }

  /** The engine as the suite sees it: its close() leaves the class's engine open. */
  record KeepOpen(VulkanEngine engine) implements SortEngine {
    @Override
    public String name() {
      return engine.name();
    }

    @Override
    public void sort(KeyBatch keys, HostBuffer permutation) {
      engine.sort(keys, permutation);
    }

    @Override
    public void close() {}
  }

  /** Runs before the suite closes the engine: every sort gave its device memory back. */
  @AfterEach
  void deviceMemoryReturned() {
    if (vulkan != null) {
      assertEquals(0, vulkan.deviceBytesInUse(), "device bytes still held after the test's sorts");
    }
  }
}
