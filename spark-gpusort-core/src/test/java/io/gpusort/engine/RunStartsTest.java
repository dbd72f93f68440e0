package io.gpusort.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpusort.TestSeeds;
import io.gpusort.engine.cpu.CpuRadixEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Finding sorted runs in a batch of keys, and {@link SortEngine#sortRuns}'s contract. */
class RunStartsTest {
  private static final long SEED = TestSeeds.baseSeed();

  private static KeyBatch batchOf(HostBuffer buffer, long... keys) {
    KeyBatch batch = new KeyBatch(buffer, keys.length, 1, 64);
    for (int i = 0; i < keys.length; i++) {
      batch.setWord(i, 0, keys[i]);
    }
    return batch;
  }

  @Test
  void runsBreakWhereAKeyIsSmallerComparedUnsigned() {
    try (HostBuffer buffer = HostBuffer.acquire(8 * 16)) {
      // -1 is the largest unsigned word; equal keys never break a run.
      KeyBatch batch = batchOf(buffer, 1, 5, 5, -1L, 0, 0, 7, Long.MIN_VALUE, 3, 3, 2);
      assertArrayEquals(new int[] {0, 4, 8, 10}, RunStarts.ascending(batch, 100));
      assertArrayEquals(new int[] {0, 4, 8, 10}, RunStarts.ascending(batch, 4));
      assertNull(RunStarts.ascending(batch, 3), "more runs than allowed");
    }
  }

  @Test
  void emptyOneRowAndSortedBatchesAreOneRun() {
    try (HostBuffer buffer = HostBuffer.acquire(64)) {
      assertArrayEquals(new int[] {0}, RunStarts.ascending(batchOf(buffer), 1));
      assertArrayEquals(new int[] {0}, RunStarts.ascending(batchOf(buffer, -5), 1));
      assertArrayEquals(new int[] {0}, RunStarts.ascending(batchOf(buffer, 0, 1, 1, -1L), 1));
    }
  }

  @Test
  void keysOfMoreThanOneWordOrNoBitsAreNotSplit() {
    try (HostBuffer buffer = HostBuffer.acquire(64)) {
      assertNull(RunStarts.ascending(new KeyBatch(buffer, 2, 2, 65), 10));
      assertNull(RunStarts.ascending(new KeyBatch(buffer, 2, 1, 0), 10));
      // Two words of which only the first is significant: the first is compared.
      KeyBatch wide = new KeyBatch(buffer, 3, 2, 64);
      wide.setWord(0, 0, 3);
      wide.setWord(1, 0, 2);
      wide.setWord(2, 0, 2);
      assertArrayEquals(new int[] {0, 1}, RunStarts.ascending(wide, 10));
    }
  }

  /** Blocks of sorted keys, concatenated: the runs found are the blocks, merged where they join. */
  @ParameterizedTest(name = "{0} runs")
  @ValueSource(ints = {1, 2, 3, 16, 200})
  void runsFoundInConcatenatedBlocksAreSorted(int k) {
    long seed = SEED + k;
    SplittableRandom random = new SplittableRandom(seed);
    int n = 10_000;
    int[] blocks = SortedRunsInput.runStarts(random, n, k, true);
    try (HostBuffer buffer = HostBuffer.acquire(8L * n)) {
      KeyBatch batch = SortedRunsInput.batch(buffer, random, n, blocks,
          SortedRunsInput.Keys.RANDOM, 64);
      int[] found = RunStarts.ascending(batch, 1024);
      assertEquals(0, found[0], "seed " + seed);
      // Every break is a block start with a smaller key; every run ascends.
      for (int i = 1; i < found.length; i++) {
        int r = found[i];
        assertEquals(true, Long.compareUnsigned(batch.word(r, 0), batch.word(r - 1, 0)) < 0,
            "seed " + seed + ": break at " + r);
        assertEquals(true, java.util.Arrays.binarySearch(blocks, r) >= 0,
            "seed " + seed + ": break " + r + " inside a block");
      }
      assertEquals(true, found.length <= RunStarts.nonEmpty(blocks, n), "seed " + seed);
    }
  }

  @Test
  void badRunStartsAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> RunStarts.check(new int[0], 3));
    assertThrows(IllegalArgumentException.class, () -> RunStarts.check(new int[] {1}, 3));
    assertThrows(IllegalArgumentException.class, () -> RunStarts.check(new int[] {0, 2, 1}, 3));
    assertThrows(IllegalArgumentException.class, () -> RunStarts.check(new int[] {0, 4}, 3));
    RunStarts.check(new int[] {0, 0, 3, 3}, 3);
    assertEquals(1, RunStarts.nonEmpty(new int[] {0, 0, 3, 3}, 3));
    assertEquals(0, RunStarts.nonEmpty(new int[] {0}, 0));
  }

  /** The default sorts: the same permutation as {@link SortEngine#sort}, stable across runs. */
  @ParameterizedTest(name = "{0} runs")
  @ValueSource(ints = {1, 2, 3, 16, 64})
  void defaultSortRunsEqualsSort(int k) {
    long seed = SEED * 31 + k;
    SplittableRandom random = new SplittableRandom(seed);
    SortEngine engine = new CpuRadixEngine(1);
    for (SortedRunsInput.Keys keys : SortedRunsInput.Keys.values()) {
      int n = 5_000;
      int[] runStarts = SortedRunsInput.runStarts(random, n, k, true);
      try (HostBuffer buffer = HostBuffer.acquire(8L * n);
          HostBuffer expected = HostBuffer.acquire(4L * n);
          HostBuffer actual = HostBuffer.acquire(4L * n)) {
        KeyBatch batch = SortedRunsInput.batch(buffer, random, n, runStarts, keys, 64);
        engine.sort(batch, expected);
        engine.sortRuns(batch, runStarts, actual);
        for (int i = 0; i < n; i++) {
          assertEquals(HostMemory.getInt(expected.address() + 4L * i),
              HostMemory.getInt(actual.address() + 4L * i), "seed " + seed + " " + keys
                  + ": row " + i);
        }
      }
    }
    assertThrows(IllegalArgumentException.class, () -> {
      try (HostBuffer buffer = HostBuffer.acquire(16); HostBuffer perm = HostBuffer.acquire(8)) {
        engine.sortRuns(new KeyBatch(buffer, 2, 1, 64), new int[] {1}, perm);
      }
    });
  }
}
