package io.gpusort.engine.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpusort.engine.EngineReferenceTests;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The reference suite on the CPU engine with all processors, and again with 1, 2 and 4 threads
 * so that the single-range and the parallel code paths both run whatever the machine.
 */
class CpuRadixEngineTest extends EngineReferenceTests {
  @Override
  protected SortEngine createEngine() {
    return new CpuRadixEngine();
  }

  @Nested
  class Parallelism1 extends EngineReferenceTests {
    @Override
    protected SortEngine createEngine() {
      return new CpuRadixEngine(1);
    }
  }

  @Nested
  class Parallelism2 extends EngineReferenceTests {
    @Override
    protected SortEngine createEngine() {
      return new CpuRadixEngine(2);
    }
  }

  @Nested
  class Parallelism4 extends EngineReferenceTests {
    @Override
    protected SortEngine createEngine() {
      return new CpuRadixEngine(4);
    }
  }

  /** Callers share one engine and its pool; each sort still gets its own right answer. */
  @Test
  void concurrentSortsShareOneEngine() throws Exception {
    ExecutorService callers = Executors.newFixedThreadPool(3);
    try {
      List<Future<?>> results = new ArrayList<>();
      InputKind[] kinds = {InputKind.RANDOM, InputKind.FEW_DISTINCT, InputKind.RANDOM_BIT_MASK};
      for (int i = 0; i < kinds.length; i++) {
        InputKind kind = kinds[i];
        KeyShape shape = new KeyShape(1 + i, 64 * (1 + i));
        results.add(callers.submit(() -> checkSort(kind, 200_000, shape)));
      }
      for (Future<?> result : results) {
        result.get();
      }
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void nameIsCpu() {
    try (CpuRadixEngine engine = new CpuRadixEngine(1)) {
      assertEquals("cpu", engine.name());
    }
  }

  @Test
  void rejectsNonPositiveParallelism() {
    assertThrows(IllegalArgumentException.class, () -> new CpuRadixEngine(0));
  }

  @Test
  void rangeCountFollowsSizeAndParallelism() {
    try (CpuRadixEngine one = new CpuRadixEngine(1); CpuRadixEngine four = new CpuRadixEngine(4)) {
      assertEquals(1, one.rangeCount(10_000_000));
      assertEquals(1, four.rangeCount(CpuRadixEngine.MIN_PARALLEL_ROWS - 1));
      assertEquals(2, four.rangeCount(CpuRadixEngine.MIN_PARALLEL_ROWS));
      assertEquals(4, four.rangeCount(10_000_000));
      assertEquals(4, four.rangeCount(KeyBatch.MAX_ROWS));
    }
  }

  @Test
  void rowRangesCoverMaxRowsWithoutOverflow() {
    RowRanges ranges = RowRanges.split(KeyBatch.MAX_ROWS, 7);
    assertEquals(0, ranges.start(0));
    assertEquals(KeyBatch.MAX_ROWS, ranges.end(6));
    for (int r = 0; r < 7; r++) {
      assertEquals(true, ranges.start(r) <= ranges.end(r), "range " + r);
    }
  }

  @Test
  void firstSignificantDigitSkipsPaddingBits() {
    assertEquals(0, DigitHistograms.firstSignificantDigit(64, 0));
    assertEquals(3, DigitHistograms.firstSignificantDigit(40, 0));
    assertEquals(2, DigitHistograms.firstSignificantDigit(41, 0));
    assertEquals(8, DigitHistograms.firstSignificantDigit(64, 1));
    assertEquals(7, DigitHistograms.firstSignificantDigit(65, 1));
    assertEquals(8, DigitHistograms.firstSignificantDigit(0, 0));
  }

  @Test
  void rejectsTooSmallPermutation() {
    try (CpuRadixEngine engine = new CpuRadixEngine(1);
        HostBuffer words = HostBuffer.allocate(8 * 10);
        HostBuffer permutation = HostBuffer.allocate(4 * 9)) {
      KeyBatch keys = new KeyBatch(words, 10, 1, 64);
      assertThrows(IllegalArgumentException.class, () -> engine.sort(keys, permutation));
    }
  }

  @Test
  void sortAfterCloseFails() {
    CpuRadixEngine engine = new CpuRadixEngine(2);
    engine.close();
    engine.close();
    try (HostBuffer words = HostBuffer.allocate(8); HostBuffer permutation = HostBuffer.allocate(4)) {
      KeyBatch keys = new KeyBatch(words, 1, 1, 64);
      assertThrows(IllegalStateException.class, () -> engine.sort(keys, permutation));
    }
  }
}
