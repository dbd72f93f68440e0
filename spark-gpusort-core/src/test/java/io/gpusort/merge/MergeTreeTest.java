package io.gpusort.merge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The streaming loser tree: sorted sources of any sizes (empty ones too) come out as one sorted
 * sequence, equal heads in source order, each source advanced only when its head was taken.
 */
class MergeTreeTest {
  @ParameterizedTest(name = "k={0}")
  @ValueSource(ints = {1, 2, 3, 7, 64, 129})
  void mergesSortedSourcesStably(int k) {
    long seed = 977L * k;
    SplittableRandom random = new SplittableRandom(seed);
    List<long[]> sources = new ArrayList<>();
    List<long[]> expected = new ArrayList<>();
    for (int s = 0; s < k; s++) {
      int n = random.nextInt(5) == 0 ? 0 : random.nextInt(200);
      long[] values = new long[n];
      for (int i = 0; i < n; i++) {
        values[i] = random.nextInt(50);
      }
      Arrays.sort(values);
      sources.add(values);
      for (int i = 0; i < n; i++) {
        expected.add(new long[] {values[i], s, i});
      }
    }
    // Stable: by value, then source, then position in the source.
    expected.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0])
        : a[1] != b[1] ? Long.compare(a[1], b[1]) : Long.compare(a[2], b[2]));

    int[] heads = new int[k];
    Arrays.fill(heads, -1);
    int[] advances = new int[k];
    MergeTree tree = new MergeTree(k, new MergeTree.Sources() {
      @Override
      public boolean advance(int s) {
        advances[s]++;
        return ++heads[s] < sources.get(s).length;
      }

      @Override
      public int compare(int a, int b) {
        return Long.compare(sources.get(a)[heads[a]], sources.get(b)[heads[b]]);
      }
    });
    List<long[]> actual = new ArrayList<>();
    for (int s = tree.next(); s >= 0; s = tree.next()) {
      actual.add(new long[] {sources.get(s)[heads[s]], s, heads[s]});
    }
    assertEquals(expected.size(), actual.size(), "seed=" + seed);
    for (int i = 0; i < expected.size(); i++) {
      assertArrayEquals(expected.get(i), actual.get(i), "seed=" + seed + " item " + i);
    }
    for (int s = 0; s < k; s++) {
      assertEquals(sources.get(s).length + 1, advances[s],
          "seed=" + seed + ": source " + s + " advanced once per item and once to find its end");
    }
    assertEquals(-1, tree.next(), "stays exhausted");
  }
}
