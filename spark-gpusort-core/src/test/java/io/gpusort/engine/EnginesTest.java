package io.gpusort.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.Engines.EngineUnavailableException;
import io.gpusort.engine.cuda.CudaEngine;
import io.gpusort.engine.vulkan.Vulkan;
import io.gpusort.engine.vulkan.VulkanEngine;
import io.gpusort.memory.HostBuffer;
import org.junit.jupiter.api.Test;

/** Engine selection: auto never fails for want of a GPU; a demanded engine fails clearly. */
class EnginesTest {
  @Test
  void autoIsCudaThenHardwareVulkanThenTheCpuEngine() {
    SortEngine auto = Engines.create(EngineOptions.defaults(EngineChoice.AUTO));
    String expected = CudaEngine.available() ? "cuda"
        : VulkanEngine.hardwareAvailable() ? "vulkan" : "cpu";
    assertEquals(expected, auto.name(), "CUDA unavailable because: "
        + CudaEngine.unavailableReason() + "; Vulkan: " + VulkanEngine.unavailableReason());
    try (HostBuffer words = HostBuffer.allocate(8 * 3);
        HostBuffer perm = HostBuffer.allocate(4 * 3)) {
      KeyBatch keys = new KeyBatch(words, 3, 1, 64);
      keys.setWord(0, 0, 5);
      keys.setWord(1, 0, -1);
      keys.setWord(2, 0, 0);
      auto.sort(keys, perm);
      assertEquals("2 0 1", perm.getInt(0) + " " + perm.getInt(4) + " " + perm.getInt(8));
    }
  }

  /** Engines from Engines are shared by every task: closing one must not stop it for the others. */
  @Test
  void closingASharedEngineLeavesItWorking() {
    SortEngine first = Engines.create(EngineOptions.defaults(EngineChoice.CPU));
    first.close();
    SortEngine again = Engines.create(EngineOptions.defaults(EngineChoice.CPU));
    try (HostBuffer words = HostBuffer.allocate(8 * 70_000);
        HostBuffer perm = HostBuffer.allocate(4 * 70_000)) {
      KeyBatch keys = new KeyBatch(words, 70_000, 1, 64);
      for (int r = 0; r < 70_000; r++) {
        keys.setWord(r, 0, 70_000 - r);
      }
      again.sort(keys, perm);
      assertEquals(69_999, perm.getInt(0));
      assertEquals(0, perm.getInt(4L * 69_999));
    }
  }

  /**
   * The shared engine passes every call of the interface on to the engine it holds: a default
   * method it does not override (a GPU engine's merge of sorted runs, say) would silently take the
   * interface's fallback instead of the engine's own.
   */
  @Test
  void aSharedEnginePassesEveryMethodOn() throws NoSuchMethodException {
    Class<?> shared = Engines.create(EngineOptions.defaults(EngineChoice.CPU)).getClass();
    for (java.lang.reflect.Method m : SortEngine.class.getMethods()) {
      if (!java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
        assertEquals(shared, shared.getMethod(m.getName(), m.getParameterTypes())
            .getDeclaringClass(), m + " not passed on by " + shared.getName());
      }
    }
  }

  @Test
  void cudaDemandedWithoutADeviceNamesTheReason() {
    if (CudaEngine.available()) {
      assertEquals("cuda", Engines.create(EngineOptions.defaults(EngineChoice.CUDA)).name());
      return;
    }
    EngineUnavailableException e = assertThrows(EngineUnavailableException.class,
        () -> Engines.create(EngineOptions.defaults(EngineChoice.CUDA)));
    assertTrue(e.getMessage().contains("spark.gpusort.engine=cuda"), e.getMessage());
    assertThrows(EngineUnavailableException.class,
        () -> Engines.checkAvailable(EngineChoice.CUDA));
  }

  /** A software device (lavapipe in CI) serves engine=vulkan only when allowed explicitly. */
  @Test
  void vulkanDemandedTakesASoftwareDeviceOnlyWhenAllowed() {
    boolean software = Vulkan.choose(-1, true).map(d -> d.type().isSoftware()).orElse(false);
    if (!Vulkan.available() || Vulkan.choose(-1, true).isEmpty()) {
      assertThrows(EngineUnavailableException.class,
          () -> Engines.create(EngineOptions.defaults(EngineChoice.VULKAN)));
      return;
    }
    SortEngine allowed = Engines.create(
        EngineOptions.defaults(EngineChoice.VULKAN).withVulkanDevice(-1, true));
    assertEquals("vulkan", allowed.name());
    if (software && !VulkanEngine.hardwareAvailable()) {
      EngineUnavailableException e = assertThrows(EngineUnavailableException.class,
          () -> Engines.create(EngineOptions.defaults(EngineChoice.VULKAN)));
      assertTrue(e.getMessage().contains("spark.gpusort.engine=vulkan"), e.getMessage());
    }
  }
}
