package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineReferenceTests;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.ArenaSettings;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.PinMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

/**
 * The reference suite on the CUDA engine's radix sort, with keys and permutations in plain host
 * memory (the staged transfer path). Skipped, with the reason, where no CUDA device works.
 */
@Tag("gpu")
class CudaEngineTest extends EngineReferenceTests {
  private CudaEngine cuda;

  static CudaEngine openOrSkip(EngineOptions options) {
    assumeTrue(CudaEngine.available(), "no CUDA device: " + CudaEngine.unavailableReason());
    // The engine tests' buffers come from the arena once it is pinned: 8g is enough for them and
    // quick to pin (the first engine of the JVM makes it; later settings change nothing). Pinned
    // the hugepages way (the default) whatever the defaults become.
    HostBuffer.configureArena(new ArenaSettings(8L << 30, ArenaSettings.DEFAULT_HOST_FRACTION,
        Long.MAX_VALUE, ArenaSettings.DEFAULT_REGISTER, ArenaSettings.DEFAULT_PIN_THREADS, 0,
        PinMethod.HUGEPAGES));
    CudaEngine engine = new CudaEngine(options);
    try {
      engine.awaitPrepared();
      HostBuffer.awaitArena(60_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return engine;
  }

  @Override
  protected SortEngine createEngine() {
    cuda = openOrSkip(EngineOptions.defaults(EngineChoice.CUDA).withAlgorithm(Algorithm.RADIX));
    return cuda;
  }

  /** Runs before the suite closes the engine: every sort gave its device memory back. */
  @AfterEach
  void deviceMemoryReturned() {
    if (cuda != null) {
      assertEquals(0, cuda.deviceBytesInUse(), "device bytes still held after the test's sorts");
    }
  }
}
