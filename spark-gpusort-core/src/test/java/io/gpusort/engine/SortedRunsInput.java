package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Test inputs of {@link SortEngine#sortRuns}: one-word keys in {@code k} sorted runs of uneven
 * lengths (some empty where asked), each run's keys drawn then sorted as unsigned words.
 */
public final class SortedRunsInput {
  /** How keys are drawn. */
  public enum Keys {
    /** Any 64-bit word (negative longs too: compared unsigned). */
    RANDOM,
    /** 16 distinct values: long stretches of ties across runs. */
    FEW,
    /** Every key the same. */
    EQUAL
  }

  private SortedRunsInput() {}

  /**
   * Run starts for {@code n} rows in {@code k >= 1} runs: lengths 0.5x to 1.5x the mean, or, with
   * {@code ragged}, about half the runs (never the last) 0 to 3 rows instead.
   */
  public static int[] runStarts(SplittableRandom random, int n, int k, boolean ragged) {
    int[] tiny = new int[k];
    double[] weight = new double[k];
    long left = n;
    for (int i = 0; i < k; i++) {
      if (ragged && i + 1 < k && random.nextBoolean()) {
        tiny[i] = (int) Math.min(random.nextInt(4), left);
        left -= tiny[i];
      } else {
        weight[i] = 0.5 + random.nextDouble();
      }
    }
    double total = Arrays.stream(weight).sum();
    int[] starts = new int[k];
    double acc = 0;
    long given = 0;
    long at = 0;
    for (int i = 0; i < k; i++) {
      starts[i] = (int) at;
      acc += weight[i];
      long upTo = i + 1 == k ? left : Math.round(left * (acc / total));
      at += tiny[i] + (upTo - given);
      given = upTo;
    }
    return starts;
  }

  /**
   * A batch of {@code n} one-word keys of {@code keyBits} significant bits (at most 64, the rest
   * zero), each run in ascending unsigned order. The caller closes {@code buffer}.
   */
  public static KeyBatch batch(HostBuffer buffer, SplittableRandom random, int n, int[] runStarts,
      Keys keys, int keyBits) {
    long mask = keyBits == 64 ? -1L : ((1L << keyBits) - 1) << (64 - keyBits);
    long[] words = new long[n];
    for (int i = 0; i < n; i++) {
      long r = random.nextLong();
      long w = switch (keys) {
        case RANDOM -> r;
        case FEW -> (r & 15) * 0x0101010101010101L;
        case EQUAL -> 42L << 40;
      };
      words[i] = w & mask;
    }
    for (int i = 0; i < runStarts.length; i++) {
      int end = i + 1 < runStarts.length ? runStarts[i + 1] : n;
      sortUnsigned(words, runStarts[i], end);
    }
    KeyBatch batch = new KeyBatch(buffer, n, 1, keyBits);
    for (int i = 0; i < n; i++) {
      batch.setWord(i, 0, words[i]);
    }
    return batch;
  }

  /** Sorts {@code a[from, to)} as unsigned words. */
  public static void sortUnsigned(long[] a, int from, int to) {
    for (int i = from; i < to; i++) {
      a[i] ^= Long.MIN_VALUE;
    }
    Arrays.sort(a, from, to);
    for (int i = from; i < to; i++) {
      a[i] ^= Long.MIN_VALUE;
    }
  }
}
