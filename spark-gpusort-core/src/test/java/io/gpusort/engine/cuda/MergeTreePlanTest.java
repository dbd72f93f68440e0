package io.gpusort.engine.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpusort.TestSeeds;
import io.gpusort.engine.SortedRunsInput;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The merge tree's host plan, run on the CPU by a model of merge.cu's two kernels (partition:
 * merge-path split per output tile; tile: a stable merge of one slice of A and one of B) in the
 * buffer order {@link MergeTree} launches them: the values that come out must be the stable sort's
 * permutation. Checks the plan and the host sequence where no device is; the kernels themselves
 * are checked on a device by {@link CudaMergeRunsTest}.
 */
class MergeTreePlanTest {
  private static final long SEED = TestSeeds.baseSeed();

  @Test
  void levelsPairRunsAndSkipEmptyOnes() {
    // Runs of 5, 0, 3, 4, 0 rows (12 rows), tiles of 4 items: three non-empty runs, two levels.
    MergeTreePlan plan = new MergeTreePlan(new int[] {0, 5, 5, 8, 12}, 12, 4);
    assertEquals(2, plan.levels());
    assertEquals(2, plan.numPairs(0));
    assertArrayEquals(new int[] {0, 5, 3, 0, 8, 4, 0, 2}, Arrays.copyOf(plan.pairs, 8));
    assertEquals(3, plan.tiles(0)); // ceil(8 / 4) + ceil(4 / 4)
    assertEquals(1, plan.numPairs(1));
    assertEquals(2, plan.firstPair(1));
    assertArrayEquals(new int[] {0, 8, 4, 0}, Arrays.copyOfRange(plan.pairs, 8, 12));
    assertEquals(3, plan.tiles(1));
    assertEquals(3, plan.maxTiles());
    assertEquals(0, new MergeTreePlan(new int[] {0}, 0, 4).levels());
    assertEquals(1, new MergeTreePlan(new int[] {0, 0, 7}, 7, 4).levels());
  }

  @ParameterizedTest(name = "{0} runs")
  @ValueSource(ints = {1, 2, 3, 4, 5, 7, 16, 33, 64, 200})
  void modelOfTheKernelsGivesTheStableOrder(int k) {
    for (int tile : new int[] {32, 2048}) {
      for (int n : new int[] {0, 1, 2, 3, 100, tile - 1, tile, tile + 1, 3 * tile + 7, 20_011}) {
        for (SortedRunsInput.Keys keys : SortedRunsInput.Keys.values()) {
          for (boolean ragged : new boolean[] {false, true}) {
            long seed = SEED + 1_000_003L * k + 31L * n + tile + keys.ordinal() * 7L
                + (ragged ? 1 : 0);
            check(seed, k, n, tile, keys, ragged);
          }
        }
      }
    }
  }

  private static void check(long seed, int k, int n, int tile, SortedRunsInput.Keys kind,
      boolean ragged) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] runStarts = SortedRunsInput.runStarts(random, n, k, ragged);
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      long r = random.nextLong();
      keys[i] = kind == SortedRunsInput.Keys.RANDOM ? r
          : kind == SortedRunsInput.Keys.FEW ? (r & 15) * 0x0101010101010101L : 42;
    }
    for (int i = 0; i < k; i++) {
      SortedRunsInput.sortUnsigned(keys, runStarts[i], i + 1 < k ? runStarts[i + 1] : n);
    }
    int[] expected = IntStream.range(0, n).boxed()
        .sorted(Comparator.comparing((Integer i) -> keys[i], Long::compareUnsigned))
        .mapToInt(Integer::intValue).toArray();
    int[] actual = runModel(keys.clone(), n, runStarts, tile);
    assertArrayEquals(expected, actual, "seed " + seed + ", k " + k + ", n " + n + ", tile "
        + tile + ", " + kind + (ragged ? ", ragged" : ""));
  }

  /** MergeTree.merge's sequence, each kernel modelled on the host. */
  private static int[] runModel(long[] input, int n, int[] runStarts, int tile) {
    MergeTreePlan plan = new MergeTreePlan(runStarts, n, tile);
    int levels = plan.levels();
    if (io.gpusort.engine.RunStarts.nonEmpty(runStarts, n) <= 1) {
      return IntStream.range(0, n).toArray();
    }
    long[][] keyBuffers = {input, new long[n]};
    int[][] values = {new int[n], new int[n]};
    int[] splits = new int[plan.maxTiles()];
    for (int l = 0; l < levels; l++) {
      long[] keysIn = keyBuffers[l % 2];
      long[] keysOut = l + 1 < levels ? keyBuffers[(l + 1) % 2] : null;
      int[] valuesIn = l == 0 ? null : values[(l + 1) % 2];
      int first = plan.firstPair(l);
      for (int i = 0; i < plan.tiles(l); i++) {
        int[] p = pairOf(plan, first, plan.numPairs(l), i);
        splits[i] = mergePathSplit(keysIn, p[0], p[1], p[2], (i - p[3]) * tile);
      }
      for (int i = 0; i < plan.tiles(l); i++) {
        mergeTile(plan, first, plan.numPairs(l), i, tile, splits, keysIn, valuesIn, keysOut,
            values[l % 2]);
      }
    }
    return values[(levels - 1) % 2];
  }

  /** The last pair of the level with firstTile <= tile, as merge.cu's pairOf. */
  private static int[] pairOf(MergeTreePlan plan, int first, int numPairs, int tile) {
    int lo = 0;
    int hi = numPairs;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (plan.pairs[4 * (first + mid) + 3] <= tile) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return Arrays.copyOfRange(plan.pairs, 4 * (first + lo - 1), 4 * (first + lo));
  }

  private static int mergePathSplit(long[] keys, int aStart, int aLen, int bLen, int d) {
    int lo = Math.max(0, d - bLen);
    int hi = Math.min(d, aLen);
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      long ka = keys[aStart + mid];
      long kb = keys[aStart + aLen + d - 1 - mid];
      if (Long.compareUnsigned(ka, kb) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  private static void mergeTile(MergeTreePlan plan, int first, int numPairs, int tileIndex,
      int tile, int[] splits, long[] keysIn, int[] valuesIn, long[] keysOut, int[] valuesOut) {
    int[] p = pairOf(plan, first, numPairs, tileIndex);
    int aStart = p[0];
    int aLen = p[1];
    int len = aLen + p[2];
    int d0 = (tileIndex - p[3]) * tile;
    int total = Math.min(tile, len - d0);
    int a0 = splits[tileIndex];
    int a1 = d0 + tile >= len ? aLen : splits[tileIndex + 1];
    int ai = aStart + a0;
    int aEnd = aStart + a1;
    int bi = aStart + aLen + (d0 - a0);
    int bEnd = bi + total - (a1 - a0);
    for (int o = aStart + d0; o < aStart + d0 + total; o++) {
      boolean takeA = ai < aEnd && (bi >= bEnd || Long.compareUnsigned(keysIn[ai], keysIn[bi]) <= 0);
      int from = takeA ? ai++ : bi++;
      if (keysOut != null) {
        keysOut[o] = keysIn[from];
      }
      valuesOut[o] = valuesIn == null ? from : valuesIn[from];
    }
  }
}
