package io.gpusort.examples;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.vulkan.DeviceType;
import io.gpusort.engine.vulkan.VulkanEngine;
import io.gpusort.keys.OrderedBits;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Device time of the Vulkan engine's sorts, measured with the queue's timestamps around the
 * shaders (uploads and downloads excluded): random 32-bit keys with their row index, random
 * 64-bit keys with their row index, and random floats sorted as keys only. Every result is
 * checked. Baselines measured in the same script (CUB's {@code SortPairs} from
 * {@code kernels/bench/sort_bench}) are passed in and the table shows the ratio to them.
 *
 * <pre>
 *   java ... io.gpusort.examples.VulkanBenchmark --sizes 1e7,1e8 --reps 5 \
 *       [--device -1] [--allow-software] [--baseline u32-pairs@1e8=2.80,...]
 * </pre>
 *
 * <p>A baseline is {@code case@size=milliseconds}, case one of {@code u32-pairs},
 * {@code u64-pairs}, {@code f32-keys}; the ratio printed is baseline ms / our ms (above 1: we are
 * faster).
 */
public final class VulkanBenchmark {
  private static final String USAGE = "usage: VulkanBenchmark [--sizes 1e7,1e8] [--reps 5]"
      + " [--device -1] [--allow-software] [--algorithm radix|oddeven]"
      + " [--cases u32-pairs,u64-pairs,f32-keys] [--warmup-keys 4e9]"
      + " [--baseline case@size=ms,...]";

  private VulkanBenchmark() {}

  public static void main(String[] argv) {
    List<Integer> sizes = new ArrayList<>();
    int reps = 5;
    int device = -1;
    boolean allowSoftware = false;
    Algorithm algorithm = Algorithm.RADIX;
    Map<String, Double> baselines = new LinkedHashMap<>();
    List<String> cases = new ArrayList<>(List.of("u32-pairs", "u64-pairs", "f32-keys"));
    long warmupKeys = -1;  // 4e9 on a hardware device, 0 on a software one
    for (int i = 0; i < argv.length; i++) {
      String option = argv[i];
      switch (option) {
        case "--sizes" -> {
          for (String s : argv[++i].split(",")) {
            sizes.add((int) Double.parseDouble(s));
          }
        }
        case "--reps" -> reps = Integer.parseInt(argv[++i]);
        case "--device" -> device = Integer.parseInt(argv[++i]);
        case "--allow-software" -> allowSoftware = true;
        case "--cases" -> cases = List.of(argv[++i].split(","));
        case "--warmup-keys" -> warmupKeys = (long) Double.parseDouble(argv[++i]);
        case "--algorithm" -> algorithm = Algorithm.valueOf(argv[++i].toUpperCase(Locale.ROOT));
        case "--baseline" -> {
          for (String b : argv[++i].split(",")) {
            int eq = b.indexOf('=');
            String[] caseAndSize = b.substring(0, eq).split("@");
            baselines.put(caseAndSize[0] + "@" + (int) Double.parseDouble(caseAndSize[1]),
                Double.parseDouble(b.substring(eq + 1)));
          }
        }
        default -> {
          System.err.println("VulkanBenchmark: unknown option " + option + "\n" + USAGE);
          System.exit(2);
        }
      }
    }
    if (sizes.isEmpty()) {
      sizes.add(10_000_000);
    }
    EngineOptions options = EngineOptions.defaults(EngineChoice.VULKAN).withAlgorithm(algorithm)
        .withVulkanDevice(device, allowSoftware).withDeviceMemoryBudget(32L << 30);
    PrintStream out = System.out;
    boolean ok = true;
    // Closed before the JVM exits: NVIDIA's driver crashes at exit under a live device.
    try (VulkanEngine engine = new VulkanEngine(options)) {
      // Each timed sort follows, in its own submission, warmupKeys / n untimed sorts of the same
      // keys: NVIDIA's driver keeps a Vulkan device that works in bursts at its idle clock (345
      // against 1980 MHz on the H200), and CUB's figures are taken back to back at full clock.
      if (warmupKeys < 0) {
        warmupKeys = engine.deviceInfo().type() == DeviceType.CPU ? 0 : 4_000_000_000L;
      }
      System.setProperty(VulkanEngine.BENCH_WARMUP_KEYS_PROPERTY, Long.toString(warmupKeys));
      out.println("VulkanBenchmark on " + engine.deviceDescription() + ", algorithm "
          + algorithm.name().toLowerCase(Locale.ROOT) + ", median of " + reps
          + " after 1 warm-up; device time of the sort's shaders (timestamps), each after "
          + warmupKeys + " keys sorted untimed in the same submission");
      out.println("memory: " + engine.memoryDescription());
      for (int n : sizes) {
        double copyMs = engine.timeDeviceCopy(8L * n, reps) / 1e6;
        out.printf(Locale.ROOT, "device copy of %d bytes: %.3f ms, %.0f GB/s (read + write)%n",
            8L * n, copyMs, 2 * 8.0 * n / copyMs / 1e6);
        double streamMs = engine.timeShaderStream(n, reps) / 1e6;
        out.printf(Locale.ROOT, "shader stream of %d words (8 bytes read, 4 written each): "
            + "%.3f ms, %.0f GB/s%n", n, streamMs, 12.0 * n / streamMs / 1e6);
      }
      out.println("| case | n | device ms | G keys/s | upload ms | baseline ms | x baseline |"
          + " check |");
      out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
      for (int n : sizes) {
        for (String name : cases) {
          ok &= runCase(engine, name, n, reps, baselines.get(name + "@" + n), out);
        }
      }
    }
    System.exit(ok ? 0 : 1);
  }

  private static boolean runCase(VulkanEngine engine, String name, int n, int reps,
      Double baselineMs, PrintStream out) {
    boolean keysOnly = name.equals("f32-keys");
    int keyBits = name.startsWith("u64") ? 64 : 32;
    SplittableRandom random = new SplittableRandom(42 + n);
    try (HostBuffer words = HostBuffer.acquireTransferable(8L * n);
        HostBuffer result = HostBuffer.acquireTransferable(4L * n)) {
      KeyBatch keys = new KeyBatch(words, n, 1, keyBits);
      for (int r = 0; r < n; r++) {
        long word = switch (name) {
          case "u32-pairs" -> ((long) random.nextInt()) << 32;
          case "u64-pairs" -> random.nextLong();
          // keys of 32 bits sit in the high half of word 0
          default -> OrderedBits.ofFloat((float) random.nextGaussian() * 1e6f) << 32;
        };
        keys.setWord(r, 0, word);
      }
      double[] deviceMs = new double[reps];
      double[] uploadMs = new double[reps];
      for (int rep = -1; rep < reps; rep++) {
        if (keysOnly) {
          engine.sortKeysOnly(keys, result);
        } else {
          engine.sort(keys, result);
        }
        if (rep >= 0) {
          deviceMs[rep] = engine.lastSortNanos() / 1e6;
          uploadMs[rep] = engine.lastUploadNanos() / 1e6;
        }
      }
      String check = keysOnly ? checkKeys(keys, result) : checkPermutation(keys, result);
      Arrays.sort(deviceMs);
      Arrays.sort(uploadMs);
      double ms = deviceMs[reps / 2];
      out.printf(Locale.ROOT, "| %s | %d | %.3f | %.2f | %.3f | %s | %s | %s |%n", name, n, ms,
          n / ms / 1e6, uploadMs[reps / 2], baselineMs == null ? "-" : String.format(
              Locale.ROOT, "%.3f", baselineMs), baselineMs == null ? "-" : String.format(
              Locale.ROOT, "%.2f", baselineMs / ms), check);
      return check.equals("ok");
    }
  }

  /** Keys ascending along the permutation, equal keys in ascending row order, every row once. */
  private static String checkPermutation(KeyBatch keys, HostBuffer perm) {
    int n = keys.numRows();
    boolean[] seen = new boolean[n];
    for (int i = 0; i < n; i++) {
      int row = perm.getInt(4L * i);
      if (row < 0 || row >= n || seen[row]) {
        return "FAIL: row " + row + " at " + i;
      }
      seen[row] = true;
      if (i > 0) {
        int prev = perm.getInt(4L * (i - 1));
        int c = Long.compareUnsigned(keys.word(prev, 0), keys.word(row, 0));
        if (c > 0 || (c == 0 && prev > row)) {
          return "FAIL: order at " + i;
        }
      }
    }
    return "ok";
  }

  /** The output is ascending and holds the same keys (as a multiset: sorted copies equal). */
  private static String checkKeys(KeyBatch keys, HostBuffer sorted) {
    int n = keys.numRows();
    long[] expected = new long[n];
    for (int r = 0; r < n; r++) {
      expected[r] = keys.word(r, 0) >>> 32;
    }
    Arrays.parallelSort(expected);
    if (expected[0] == expected[n - 1]) {
      return "FAIL: every key equal, nothing was sorted";
    }
    for (int i = 0; i < n; i++) {
      long got = Integer.toUnsignedLong(HostMemory.getInt(sorted.address() + 4L * i));
      if (got != expected[i]) {
        return "FAIL: key " + i;
      }
    }
    return "ok";
  }
}
