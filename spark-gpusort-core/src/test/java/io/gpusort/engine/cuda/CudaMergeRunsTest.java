package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.TestSeeds;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.RunStarts;
import io.gpusort.engine.SortEngine;
import io.gpusort.engine.SortedRunsInput;
import io.gpusort.engine.cpu.CpuRadixEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link CudaEngine#sortRuns}, the merge tree of kernels/cuda/merge.cu, against the CPU engine's
 * sort of the same keys: k sorted runs of uneven lengths (some empty), random keys, 16 distinct
 * keys and all keys equal, 0 to 1e7 rows. Skipped, visibly, where no CUDA device works.
 */
@Tag("gpu")
class CudaMergeRunsTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int[] SIZES = {0, 1, 1000, 1_000_000, 10_000_000};

  private static CudaEngine cuda;
  private static SortEngine cpu;

  @BeforeAll
  static void open() {
    cuda = CudaEngineTest.openOrSkip(EngineOptions.defaults(EngineChoice.CUDA));
    cpu = new CpuRadixEngine();
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
    }
  }

  @ParameterizedTest(name = "{0} runs")
  @ValueSource(ints = {1, 2, 3, 16, 64, 200})
  void mergedRunsEqualTheSort(int k) {
    for (int n : SIZES) {
      for (SortedRunsInput.Keys keys : SortedRunsInput.Keys.values()) {
        for (boolean ragged : new boolean[] {false, true}) {
          long seed = SEED + 1_000_003L * k + n + 7L * keys.ordinal() + (ragged ? 1 : 0);
          check(seed, k, n, keys, ragged, 64, ragged);
        }
      }
    }
  }

  /** Keys of at most 32 bits (the radix sort's narrow keys) and of 40 bits are merged as words. */
  @ParameterizedTest(name = "{0}-bit keys")
  @ValueSource(ints = {1, 32, 40, 63})
  void narrowKeysAreMergedAsWords(int keyBits) {
    for (int n : new int[] {1000, 1_000_000}) {
      long seed = SEED * 17 + keyBits + n;
      check(seed, 16, n, SortedRunsInput.Keys.RANDOM, true, keyBits, true);
    }
  }

  /** Two non-empty runs and more go through the merge, and the merge is counted. */
  @Test
  void mergesAreCountedAndOneRunIsTheInputOrder() {
    long before = EngineStats.mergedRows();
    check(SEED, 4, 100_000, SortedRunsInput.Keys.RANDOM, false, 64, false);
    assertEquals(100_000, EngineStats.mergedRows() - before, "rows merged on the device");
    before = EngineStats.mergedRows();
    check(SEED + 1, 1, 100_000, SortedRunsInput.Keys.RANDOM, false, 64, false);
    assertEquals(0, EngineStats.mergedRows() - before, "one run needs no merge");
  }

  private static void check(long seed, int k, int n, SortedRunsInput.Keys kind, boolean ragged,
      int keyBits, boolean pinned) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] runStarts = SortedRunsInput.runStarts(random, n, k, ragged);
    try (HostBuffer words = HostBuffer.acquireTransferable(Math.max(8, 8L * n));
        HostBuffer expected = HostBuffer.acquire(Math.max(4, 4L * n));
        HostBuffer actual = pinned ? HostBuffer.acquireTransferable(Math.max(4, 4L * n))
            : HostBuffer.acquire(Math.max(4, 4L * n))) {
      KeyBatch batch = SortedRunsInput.batch(words, random, n, runStarts, kind, keyBits);
      cpu.sort(batch, expected);
      // Poisoned: a merge that writes nothing cannot agree.
      for (int i = 0; i < n; i++) {
        HostMemory.putInt(actual.address() + 4L * i, -1);
      }
      cuda.sortRuns(batch, runStarts, actual);
      String what = "seed " + seed + ", k " + k + " (" + RunStarts.nonEmpty(runStarts, n)
          + " non-empty), n " + n + ", " + kind + (ragged ? ", ragged" : "") + ", " + keyBits
          + " bits";
      for (int i = 0; i < n; i++) {
        int want = HostMemory.getInt(expected.address() + 4L * i);
        int got = HostMemory.getInt(actual.address() + 4L * i);
        if (want != got) {
          fail(what + ": position " + i + " holds row " + got + ", the sort has row " + want
              + TestSeeds.rerunHint(SEED));
        }
      }
      assertEquals(0, cuda.deviceBytesInUse(), what + ": device bytes still held");
    }
  }
}
