package io.gpusort.merge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.gpusort.TestSeeds;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Checks {@link IntSorts#sort} against {@link Arrays#sort(Object[], Comparator)}, which is stable:
 * the outputs must be identical, ties included, for random, few-distinct, sorted and
 * reverse-sorted inputs around the insertion-sort threshold and beyond.
 *
 * <p>Seeded from {@code gpusort.test.seed} when set, randomly otherwise; failures name the seed.
 */
class IntSortsTest {
  private static final long SEED = TestSeeds.baseSeed();
  private static final int[] SIZES = {
      0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 4097, 20000};

  private enum Shape { RANDOM, FEW_DISTINCT, ALL_EQUAL, SORTED, REVERSE_SORTED, SAWTOOTH }

  @Test
  void matchesAStableReferenceSort() {
    SplittableRandom random = new SplittableRandom(SEED);
    for (Shape shape : Shape.values()) {
      for (int n : SIZES) {
        for (int trial = 0; trial < (n > 1000 ? 2 : 10); trial++) {
          checkSort(random, shape, n, trial);
        }
      }
    }
  }

  @Test
  void sortsOnlyTheGivenRange() {
    SplittableRandom random = new SplittableRandom(SEED + 1);
    for (int trial = 0; trial < 200; trial++) {
      int n = random.nextInt(100);
      int from = random.nextInt(n + 1);
      int to = from + random.nextInt(n - from + 1);
      int[] keys = random.ints(n, 0, 5).toArray();
      int[] a = shuffledIdentity(random, n);
      int[] expected = a.clone();
      Integer[] middle = Arrays.stream(expected, from, to).boxed().toArray(Integer[]::new);
      Arrays.sort(middle, Comparator.comparingInt(i -> keys[i]));
      for (int i = from; i < to; i++) {
        expected[i] = middle[i - from];
      }
      IntSorts.sort(a, from, to, (x, y) -> Integer.compare(keys[x], keys[y]));
      assertArrayEquals(expected, a, "range [" + from + ", " + to + ") of " + n + TestSeeds.rerunHint(SEED));
    }
  }

  private static void checkSort(SplittableRandom random, Shape shape, int n, int trial) {
    // Ids in a random order, so that a stable sort is visible as ids keeping their input order;
    // the shape is that of the keys by input position.
    int[] ids = shuffledIdentity(random, n);
    int[] keys = new int[n];
    for (int i = 0; i < n; i++) {
      keys[ids[i]] = switch (shape) {
        case RANDOM -> random.nextInt();
        case FEW_DISTINCT -> random.nextInt(4);
        case ALL_EQUAL -> 42;
        case SORTED -> i / 3;
        case REVERSE_SORTED -> (n - i) / 3;
        case SAWTOOTH -> i % 17;
      };
    }
    Integer[] boxed = Arrays.stream(ids).boxed().toArray(Integer[]::new);
    Arrays.sort(boxed, Comparator.comparingInt(i -> keys[i]));
    int[] expected = Arrays.stream(boxed).mapToInt(Integer::intValue).toArray();
    int[] actual = ids.clone();
    IntSorts.sort(actual, 0, n, (a, b) -> Integer.compare(keys[a], keys[b]));
    assertArrayEquals(expected, actual,
        "shape " + shape + ", size " + n + ", trial " + trial + TestSeeds.rerunHint(SEED));
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
