package io.gpusort.merge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpusort.TestSeeds;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Checks {@link LoserTree#merge} against a reference sort: random sorted runs of many counts,
 * with empty runs, runs of one value and few distinct values. Ties may come out in any order, so
 * the output is checked as the sorted sequence of values and as a permutation of the input ids.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class LoserTreeTest {
  private static final long SEED = TestSeeds.baseSeed();

  @ParameterizedTest(name = "k = {0}")
  @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 9, 64, 1000})
  void randomRuns(int k) {
    SplittableRandom random = new SplittableRandom(SEED ^ (31L * k));
    for (int trial = 0; trial < (k >= 64 ? 20 : 200); trial++) {
      RunShape shape = RunShape.values()[trial % RunShape.values().length];
      checkMerge(random, k, shape, trial);
    }
  }

  @Test
  void allRunsEmpty() {
    for (int k : new int[] {1, 2, 3, 64}) {
      int[] runStarts = new int[k + 1];
      assertEquals(0, LoserTree.merge(new int[0], runStarts, (a, b) -> 0).length);
    }
  }

  @Test
  void runsNeedNotStartAtZero() {
    // items[2..9) in runs [2,4), [4,4), [4,9); items outside must not appear.
    int[] values = {100, 100, 5, 9, 1, 2, 6, 9, 10, -100};
    int[] items = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    int[] merged = LoserTree.merge(items, new int[] {2, 4, 4, 9}, (a, b) -> Integer.compare(
        values[a], values[b]));
    int[] mergedValues = Arrays.stream(merged).map(i -> values[i]).toArray();
    assertArrayEquals(new int[] {1, 2, 5, 6, 9, 9, 10}, mergedValues);
  }

  private enum RunShape { RANDOM, FEW_DISTINCT, ALL_EQUAL, MANY_EMPTY, ONE_LONG_RUN }

  private static void checkMerge(SplittableRandom random, int k, RunShape shape, int trial) {
    int[] lengths = new int[k];
    for (int r = 0; r < k; r++) {
      lengths[r] = switch (shape) {
        case MANY_EMPTY -> random.nextInt(3) == 0 ? random.nextInt(20) : 0;
        case ONE_LONG_RUN -> r == k / 2 ? 500 : random.nextInt(3);
        default -> random.nextInt(k >= 64 ? 30 : 60);
      };
    }
    int total = Arrays.stream(lengths).sum();
    int[] values = new int[total];
    int[] runStarts = new int[k + 1];
    for (int r = 0, at = 0; r < k; r++) {
      runStarts[r] = at;
      for (int i = 0; i < lengths[r]; i++) {
        values[at + i] = switch (shape) {
          case FEW_DISTINCT -> random.nextInt(3);
          case ALL_EQUAL -> 7;
          default -> random.nextInt();
        };
      }
      Arrays.sort(values, at, at + lengths[r]);
      at += lengths[r];
    }
    runStarts[k] = total;
    // Items are ids into values, shuffled so that an id says nothing about its position.
    int[] permutedValues = new int[total];
    int[] items = new int[total];
    int[] newId = shuffledIdentity(random, total);
    for (int i = 0; i < total; i++) {
      items[i] = newId[i];
      permutedValues[newId[i]] = values[i];
    }
    int[] merged = LoserTree.merge(items, runStarts, (a, b) -> Integer.compare(
        permutedValues[a], permutedValues[b]));

    String context = "k " + k + ", shape " + shape + ", trial " + trial + ", run lengths "
        + Arrays.toString(lengths) + TestSeeds.rerunHint(SEED);
    assertEquals(total, merged.length, context);
    int[] expected = values.clone();
    Arrays.sort(expected);
    boolean[] seen = new boolean[total];
    for (int i = 0; i < total; i++) {
      int id = merged[i];
      if (id < 0 || id >= total || seen[id]) {
        fail("output is not a permutation of the items at " + i + ": " + context);
      }
      seen[id] = true;
      if (permutedValues[id] != expected[i]) {
        fail("output value " + permutedValues[id] + " at " + i + ", expected " + expected[i]
            + ": " + context);
      }
    }
  }

  private static int[] shuffledIdentity(SplittableRandom random, int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }
}
