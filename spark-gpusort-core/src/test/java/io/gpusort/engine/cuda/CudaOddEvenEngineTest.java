package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineReferenceTests;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;

/**
 * The reference suite on the CUDA engine's odd-even hybrid (Batcher tiles, merge-path passes),
 * with keys and permutations in page-locked memory (the direct DMA path).
 */
@Tag("gpu")
class CudaOddEvenEngineTest extends EngineReferenceTests {
  private CudaEngine cuda;

  @Override
  protected SortEngine createEngine() {
    cuda = CudaEngineTest.openOrSkip(
        EngineOptions.defaults(EngineChoice.CUDA).withAlgorithm(Algorithm.ODDEVEN));
    return cuda;
  }

  @Override
  protected HostBuffer allocateHostBuffer(long sizeBytes) {
    return HostBuffer.acquireTransferable(sizeBytes);
  }

  @AfterEach
  void deviceMemoryReturned() {
    if (cuda != null) {
      assertEquals(0, cuda.deviceBytesInUse(), "device bytes still held after the test's sorts");
    }
  }
}
