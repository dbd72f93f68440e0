package io.gpusort.engine.cpu;

import io.gpusort.engine.KeyBatch;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Times {@link CpuRadixEngine} against {@link Arrays#parallelSort(long[])} and
 * {@link Arrays#sort(long[])} on the same random keys in the same run, and prints a table. A
 * program, not a test.
 *
 * <p>Usage: {@code CpuRadixEngineBench [size...]}; sizes default to 1e6 and 1e7. Keys are full
 * 64-bit, 40-bit (top 3 digits constant) and 32-bit (top 4 digits constant) values in one word with
 * {@code keyBits = 64}, so the engine finds the constant digits itself. Each figure is the median
 * of 5 timed runs after 2 warm-up runs, all after one untimed sort at the largest size. The
 * engine sorts off-heap keys into an off-heap permutation; the baselines sort a fresh on-heap
 * copy, the copy not timed.
 *
 * <p>System properties: {@code bench.parallelism} (engine threads, default all processors),
 * {@code bench.runs} (timed runs, default 5).
 */
public final class CpuRadixEngineBench {
  private static final int WARMUP_RUNS = 2;
  private static final int[] KEY_BITS = {64, 40, 32};

  private CpuRadixEngineBench() {}

  public static void main(String[] args) {
    List<Integer> sizes = new ArrayList<>();
    for (String arg : args) {
      sizes.add((int) Double.parseDouble(arg));
    }
    if (sizes.isEmpty()) {
      sizes = List.of(1_000_000, 10_000_000);
    }
    int parallelism = Integer.getInteger("bench.parallelism",
        Runtime.getRuntime().availableProcessors());
    int runs = Integer.getInteger("bench.runs", 5);
    System.out.printf("cpu engine parallelism %d, %d processors, median of %d runs after %d warm-up%n",
        parallelism, Runtime.getRuntime().availableProcessors(), runs, WARMUP_RUNS);
    System.out.printf("%12s %6s %12s %10s %14s %12s %11s %12s%n", "size", "keys", "engine ms",
        "Mkeys/s", "parallelSort ms", "sort ms", "vs parallel", "vs sort");
    try (CpuRadixEngine engine = new CpuRadixEngine(parallelism)) {
      warmUpHeap(engine, sizes.stream().mapToInt(Integer::intValue).max().getAsInt());
      for (int numRows : sizes) {
        for (int keyBits : KEY_BITS) {
          benchOne(engine, numRows, keyBits, runs);
        }
      }
    }
  }

  /**
   * Sorts once at the largest size before any timing, so that the Java heap has grown to its
   * working size: on small virtual machines a first touch of fresh memory costs tens of
   * microseconds a page, which would otherwise land in the first rows of the table.
   */
  private static void warmUpHeap(CpuRadixEngine engine, int numRows) {
    long[] values = randomValues(numRows, 64, new SplittableRandom(numRows));
    try (HostBuffer words = HostBuffer.allocate(KeyBatch.requiredBytes(numRows, 1));
        HostBuffer permutation = HostBuffer.allocate(4L * numRows)) {
      HostMemory.copyFromArray(values, 0, words.address(), numRows);
      engine.sort(new KeyBatch(words, numRows, 1, 64), permutation);
    }
    Arrays.parallelSort(values);
  }

  private static void benchOne(CpuRadixEngine engine, int numRows, int valueBits, int runs) {
    long[] values = randomValues(numRows, valueBits, new SplittableRandom(numRows * 31L + valueBits));
    double engineMillis;
    try (HostBuffer words = HostBuffer.allocate(KeyBatch.requiredBytes(numRows, 1));
        HostBuffer permutation = HostBuffer.allocate(4L * numRows)) {
      HostMemory.copyFromArray(values, 0, words.address(), numRows);
      KeyBatch keys = new KeyBatch(words, numRows, 1, 64);
      engineMillis = medianMillis(runs, () -> engine.sort(keys, permutation));
      checkSorted(values, permutation, numRows);
    }
    long[] scratch = new long[numRows];
    double parallelMillis = medianMillis(runs, () -> System.arraycopy(values, 0, scratch, 0, numRows),
        () -> Arrays.parallelSort(scratch));
    double sortMillis = medianMillis(runs, () -> System.arraycopy(values, 0, scratch, 0, numRows),
        () -> Arrays.sort(scratch));
    System.out.printf("%12d %6s %12.1f %10.1f %14.1f %12.1f %10.2fx %11.2fx%n", numRows,
        valueBits + "-bit", engineMillis, numRows / engineMillis / 1000.0, parallelMillis,
        sortMillis, parallelMillis / engineMillis, sortMillis / engineMillis);
  }

  /** Non-negative values below {@code 2^valueBits}, uniform ({@code valueBits = 64}: any long). */
  private static long[] randomValues(int numRows, int valueBits, SplittableRandom random) {
    long[] values = new long[numRows];
    for (int i = 0; i < numRows; i++) {
      values[i] = valueBits == 64 ? random.nextLong() : random.nextLong() >>> (64 - valueBits);
    }
    return values;
  }

  /** A cheap sanity check so that a broken engine does not print a fast figure. */
  private static void checkSorted(long[] values, HostBuffer permutation, int numRows) {
    for (int i = 1; i < numRows; i++) {
      long previous = values[permutation.getInt(4L * (i - 1))];
      long current = values[permutation.getInt(4L * i)];
      if (Long.compareUnsigned(previous, current) > 0) {
        throw new AssertionError("engine output not sorted at position " + i);
      }
    }
  }

  private static double medianMillis(int runs, Runnable timed) {
    return medianMillis(runs, () -> { }, timed);
  }

  /** Runs {@code prepare} untimed before every run of {@code timed}; the median of the timed runs. */
  private static double medianMillis(int runs, Runnable prepare, Runnable timed) {
    for (int i = 0; i < WARMUP_RUNS; i++) {
      prepare.run();
      timed.run();
    }
    long[] nanos = new long[runs];
    for (int i = 0; i < runs; i++) {
      prepare.run();
      long start = System.nanoTime();
      timed.run();
      nanos[i] = System.nanoTime() - start;
    }
    Arrays.sort(nanos);
    return nanos[runs / 2] / 1e6;
  }
}
