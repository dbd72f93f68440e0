package io.gpusort.examples;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.config.GpuSortConf.EngineChoice;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.keys.OrderedBits;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One engine end to end against {@link Arrays#parallelSort(long[])}, in the same process on the
 * same keys: from a JVM {@code long[]} of signed values to an {@code int[]} permutation, that is,
 * encode the values into a {@link KeyBatch} (parallel over the cores), {@link SortEngine#sort},
 * and copy the permutation into the heap. The baseline sorts a copy of the same array (the copy
 * not timed). No Spark: only the engines, the host buffers and the JDK.
 *
 * <pre>{@code
 * java -Xmx64g -cp <core classes + deps>:<examples classes> io.gpusort.examples.EngineBenchmark \
 *     --engine cpu,cuda --algorithm radix,oddeven --sizes 1e7,1e8 --bits 64,40,32 --reps 5
 * }</pre>
 *
 * <p>Options (lists are comma-separated; {@code --engine} and {@code --algorithm} may also be
 * repeated): {@code --engine cpu|cuda|vulkan|auto} (default cpu), {@code --algorithm
 * auto|radix|oddeven} (default auto; the CPU engine has one algorithm and runs once, shown as
 * "-"), {@code --sizes} in keys (default 1e7), {@code --bits} (default 64,40,32), {@code --reps}
 * timed repetitions after one warm-up (default 5), {@code --seed} (default 42).
 *
 * <p>Keys by {@code --bits}: 64, random longs, encoded as 64-bit keys (sign bit flipped); 32,
 * random ints, encoded as 32-bit keys (the sign-flipped int in the top 32 bits of the word,
 * {@code keyBits = 32}); any other b, random longs in [0, 2^b) encoded as 64-bit keys, as a
 * small-range long column arrives: the engine sees {@code keyBits = 64} and must find the
 * constant top digits itself.
 *
 * <p>Every case is checked once (on its warm-up run): the permutation holds every index once, the
 * values in its order do not decrease, and equal values keep ascending indices. A case whose engine
 * is not available here is reported and skipped, and the exit status is then 1.
 */
public final class EngineBenchmark {
  static final int EXIT_USAGE = 2;
  private static final String USAGE = "usage: EngineBenchmark [--engine cpu|cuda|vulkan,...]"
      + " [--algorithm auto|radix|oddeven,...] [--sizes 1e7,...] [--bits 64,40,32] [--reps 5]"
      + " [--seed 42]";

  /** The parsed command line. */
  record Options(List<EngineChoice> engines, List<Algorithm> algorithms, List<Integer> sizes,
      List<Integer> bits, int reps, long seed) {}

  /** Medians of one case, in milliseconds. */
  record Result(double totalMillis, double encodeMillis, double sortMillis, double readMillis) {}

  private final Options options;
  private final ExecutorService workers;
  private final int numWorkers;

  private EngineBenchmark(Options options, int numWorkers) {
    this.options = options;
    this.numWorkers = numWorkers;
    this.workers = Executors.newFixedThreadPool(numWorkers, runnable -> {
      Thread thread = new Thread(runnable, "engine-benchmark-worker");
      thread.setDaemon(true);
      return thread;
    });
  }

  public static void main(String[] argv) {
    Options options;
    try {
      options = parse(argv);
    } catch (IllegalArgumentException e) {
      System.err.println("EngineBenchmark: error: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(EXIT_USAGE);
      return;
    }
    keepPooledBuffersOfTheLargestCase(options);
    EngineBenchmark benchmark =
        new EngineBenchmark(options, Runtime.getRuntime().availableProcessors());
    boolean allRan;
    try {
      allRan = benchmark.run(System.out);
    } finally {
      benchmark.workers.shutdownNow();
    }
    System.exit(allRan ? 0 : 1);
  }

  static Options parse(String[] argv) {
    List<EngineChoice> engines = new ArrayList<>();
    List<Algorithm> algorithms = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    List<Integer> bits = new ArrayList<>();
    int reps = 5;
    long seed = 42;
    for (int i = 0; i < argv.length; i += 2) {
      String option = argv[i];
      if (option.equals("--help") || option.equals("-h")) {
        throw new IllegalArgumentException("help requested");
      }
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("option " + option + " needs a value");
      }
      String value = argv[i + 1];
      switch (option) {
        case "--engine" -> list(value).forEach(v -> engines.add(enumValue(EngineChoice.class, option, v)));
        case "--algorithm" -> list(value).forEach(v -> algorithms.add(enumValue(Algorithm.class, option, v)));
        case "--sizes" -> list(value).forEach(v -> sizes.add(size(v)));
        case "--bits" -> list(value).forEach(v -> bits.add(bits(v)));
        case "--reps" -> reps = (int) wholeNumber(option, value, 1, 1000);
        case "--seed" -> seed = wholeNumber(option, value, Long.MIN_VALUE, Long.MAX_VALUE);
        default -> throw new IllegalArgumentException("unknown option '" + option + "'");
      }
    }
    return new Options(
        engines.isEmpty() ? List.of(EngineChoice.CPU) : distinct(engines),
        algorithms.isEmpty() ? List.of(Algorithm.AUTO) : distinct(algorithms),
        sizes.isEmpty() ? List.of(10_000_000) : distinct(sizes),
        bits.isEmpty() ? List.of(64, 40, 32) : distinct(bits), reps, seed);
  }

  private static List<String> list(String value) {
    List<String> items = new ArrayList<>();
    for (String item : value.split(",")) {
      if (!item.isBlank()) {
        items.add(item.trim());
      }
    }
    return items;
  }

  private static <T> List<T> distinct(List<T> values) {
    return values.stream().distinct().toList();
  }

  private static <E extends Enum<E>> E enumValue(Class<E> type, String option, String value) {
    try {
      return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + ": unknown value '" + value + "'; one of "
          + Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT));
    }
  }

  /** A key count such as {@code 1e7} or {@code 10_000_000}. */
  private static int size(String value) {
    double n;
    try {
      n = Double.parseDouble(value.replace("_", ""));
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 1 || n > KeyBatch.MAX_ROWS || n != Math.rint(n)) {
      throw new IllegalArgumentException("--sizes: '" + value + "' is not a whole number of keys"
          + " from 1 to " + KeyBatch.MAX_ROWS);
    }
    return (int) n;
  }

  private static int bits(String value) {
    return (int) wholeNumber("--bits", value, 1, 64);
  }

  private static long wholeNumber(String option, String value, long min, long max) {
    try {
      long n = Long.parseLong(value.replace("_", ""));
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below with the option's name
    }
    throw new IllegalArgumentException(option + " needs a whole number from " + min + " to " + max
        + ", not '" + value + "'");
  }

  /**
   * Raises the host buffer pools' idle bound so that the buffers of the largest case stay pooled
   * between repetitions: otherwise each repetition pays for fresh pages.
   */
  private static void keepPooledBuffersOfTheLargestCase(Options options) {
    long maxRows = options.sizes().stream().mapToLong(Integer::longValue).max().orElse(0);
    // keys (8 bytes a row) and permutation (4), each rounded up by at most a quarter by the pool
    HostBuffer.configurePools(Math.max(2L << 30, 2 * 15 * maxRows), 600_000);
  }

  /** Runs every case and prints the table; false if some engine was not available. */
  boolean run(PrintStream out) {
    Runtime runtime = Runtime.getRuntime();
    out.printf(Locale.ROOT, "EngineBenchmark: %d processors, max heap %d MiB, Java %s, seed %d, "
        + "median of %d repetitions after 1 warm-up%n", runtime.availableProcessors(),
        runtime.maxMemory() >> 20, System.getProperty("java.version"), options.seed(),
        options.reps());
    out.println(ExampleRuntime.keepHeapThroughCollections());
    Map<String, SortEngine> engines = createEngines(out);
    boolean allRan = engines.size() == expectedCases();
    try {
      printHeader(out);
      for (int numRows : options.sizes()) {
        for (int valueBits : options.bits()) {
          runSize(engines, numRows, valueBits, out);
        }
      }
      out.println("total: encode + sort + read-back, median of the totals; speed-up: "
          + "parallelSort ms / total ms; encode, sort, read: medians of each step");
    } finally {
      closeAll(engines.values());
    }
    return allRan;
  }

  private int expectedCases() {
    int cases = 0;
    for (EngineChoice engine : options.engines()) {
      cases += engine == EngineChoice.CPU ? 1 : options.algorithms().size();
    }
    return cases;
  }

  /** One engine per (engine, algorithm), labelled "engine algorithm"; unavailable ones reported. */
  private Map<String, SortEngine> createEngines(PrintStream out) {
    Map<String, SortEngine> engines = new LinkedHashMap<>();
    for (EngineChoice choice : options.engines()) {
      // the CPU engine has one algorithm
      List<Algorithm> algorithms =
          choice == EngineChoice.CPU ? List.of(Algorithm.AUTO) : options.algorithms();
      for (Algorithm algorithm : algorithms) {
        String label = choice.name().toLowerCase(Locale.ROOT) + " "
            + (choice == EngineChoice.CPU ? "-" : algorithm.name().toLowerCase(Locale.ROOT));
        try {
          engines.put(label,
              Engines.create(EngineOptions.defaults(choice).withAlgorithm(algorithm)));
        } catch (RuntimeException e) {
          // one line in the table's output; the whole story (native load traces) on stderr
          String message = String.valueOf(e.getMessage());
          out.println("skipped " + label + ": " + message.lines().findFirst().orElse(""));
          System.err.println("EngineBenchmark: " + label + " is not available: " + message);
        }
      }
    }
    return engines;
  }

  /** Closes each engine once: the factory may hand out one shared instance more than once. */
  private static void closeAll(Iterable<SortEngine> engines) {
    Map<SortEngine, Boolean> closed = new IdentityHashMap<>();
    for (SortEngine engine : engines) {
      if (closed.put(engine, Boolean.TRUE) == null) {
        engine.close();
      }
    }
  }

  private static void printHeader(PrintStream out) {
    out.printf(Locale.ROOT, "%-7s %-9s %11s %5s %7s %10s %9s %13s %8s %9s %9s %9s%n", "engine",
        "algorithm", "n", "bits", "keyBits", "total ms", "Mkeys/s", "parallelSort", "speed-up",
        "encode", "sort", "read");
  }

  private void runSize(Map<String, SortEngine> engines, int numRows, int valueBits,
      PrintStream out) {
    KeyEncoding encoding = KeyEncoding.forBits(valueBits);
    long[] values = encoding.randomValues(numRows,
        new SplittableRandom(options.seed() ^ (31L * numRows + valueBits)));
    double parallelSortMillis = timeParallelSort(values);
    for (Map.Entry<String, SortEngine> entry : engines.entrySet()) {
      Result result = timeEngine(entry.getValue(), values, encoding);
      String[] label = entry.getKey().split(" ");
      out.printf(Locale.ROOT, "%-7s %-9s %11d %5d %7d %10.1f %9.1f %13.1f %7.2fx %9.1f %9.1f %9.1f%n",
          label[0], label[1], numRows, valueBits, encoding.keyBits(), result.totalMillis(),
          numRows / result.totalMillis() / 1e3, parallelSortMillis,
          parallelSortMillis / result.totalMillis(), result.encodeMillis(), result.sortMillis(),
          result.readMillis());
      out.flush();
    }
  }

  private double timeParallelSort(long[] values) {
    long[] copy = new long[values.length];
    long[] nanos = new long[options.reps()];
    for (int rep = -1; rep < options.reps(); rep++) {
      System.arraycopy(values, 0, copy, 0, values.length);
      System.gc();
      long start = System.nanoTime();
      Arrays.parallelSort(copy);
      if (rep >= 0) {
        nanos[rep] = System.nanoTime() - start;
      }
    }
    return medianMillis(nanos);
  }

  /** The warm-up run is checked; the median of each step over the timed runs. */
  private Result timeEngine(SortEngine engine, long[] values, KeyEncoding encoding) {
    int numRows = values.length;
    int[] permutation = new int[numRows];
    long[][] nanos = new long[4][options.reps()];
    for (int rep = -1; rep < options.reps(); rep++) {
      System.gc();
      long start = System.nanoTime();
      // As the sort pipeline does: page-locked memory once a GPU engine has registered it, which
      // the engine moves by DMA with no staging copy.
      try (HostBuffer keys = HostBuffer.acquireTransferable(KeyBatch.requiredBytes(numRows, 1))) {
        encode(values, encoding, keys);
        long encoded = System.nanoTime();
        try (HostBuffer sorted = HostBuffer.acquireTransferable(4L * numRows)) {
          engine.sort(new KeyBatch(keys, numRows, 1, encoding.keyBits()), sorted);
          long sortedAt = System.nanoTime();
          readBack(sorted, permutation);
          long end = System.nanoTime();
          if (rep < 0) {
            verify(engine.name(), values, permutation);
          } else {
            nanos[0][rep] = end - start;
            nanos[1][rep] = encoded - start;
            nanos[2][rep] = sortedAt - encoded;
            nanos[3][rep] = end - sortedAt;
          }
        }
      }
    }
    return new Result(medianMillis(nanos[0]), medianMillis(nanos[1]), medianMillis(nanos[2]),
        medianMillis(nanos[3]));
  }

  /** The keys of {@code values} into {@code keys}, split over the worker threads. */
  private void encode(long[] values, KeyEncoding encoding, HostBuffer keys) {
    long address = keys.address();
    parallelFor(values.length, (from, to) -> {
      for (int i = from; i < to; i++) {
        HostMemory.putLong(address + 8L * i, encoding.encode(values[i]));
      }
    });
  }

  private void readBack(HostBuffer sorted, int[] permutation) {
    long address = sorted.address();
    parallelFor(permutation.length,
        (from, to) -> HostMemory.copyToArray(address + 4L * from, permutation, from, to - from));
  }

  /** A half-open range of rows. */
  @FunctionalInterface
  private interface RowRange {
    void run(int from, int to);
  }

  private void parallelFor(int numRows, RowRange body) {
    int parts = numRows < (1 << 16) ? 1 : numWorkers;
    List<Future<?>> futures = new ArrayList<>(parts);
    for (int p = 0; p < parts; p++) {
      int from = (int) ((long) numRows * p / parts);
      int to = (int) ((long) numRows * (p + 1) / parts);
      futures.add(workers.submit(() -> body.run(from, to)));
    }
    try {
      for (Future<?> future : futures) {
        future.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("worker failed: " + e.getCause(), e.getCause());
    }
  }

  /**
   * Throws unless {@code permutation} holds every index once, orders {@code values} ascending
   * (signed, which the encodings preserve), and keeps equal values in ascending index order.
   */
  static void verify(String engine, long[] values, int[] permutation) {
    int numRows = values.length;
    boolean[] seen = new boolean[numRows];
    for (int i = 0; i < numRows; i++) {
      int row = permutation[i];
      if (row < 0 || row >= numRows || seen[row]) {
        throw new IllegalStateException(engine + ": not a permutation: position " + i + " holds "
            + row + " (" + numRows + " rows)");
      }
      seen[row] = true;
      if (i > 0) {
        int previous = permutation[i - 1];
        int order = Long.compare(values[previous], values[row]);
        if (order > 0 || (order == 0 && previous > row)) {
          throw new IllegalStateException(engine + ": wrong order at position " + i + ": row "
              + previous + " (" + values[previous] + ") before row " + row + " (" + values[row]
              + ")" + (order == 0 ? ", equal keys out of index order (not stable)" : ""));
        }
      }
    }
  }

  private static double medianMillis(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    return median / 1e6;
  }

  /** How the values of one {@code --bits} setting are drawn and encoded. */
  record KeyEncoding(int valueBits, int keyBits) {
    static KeyEncoding forBits(int valueBits) {
      return new KeyEncoding(valueBits, valueBits == 32 ? 32 : 64);
    }

    long[] randomValues(int numRows, SplittableRandom random) {
      long[] values = new long[numRows];
      for (int i = 0; i < numRows; i++) {
        long bits = random.nextLong();
        values[i] = valueBits == 64 ? bits
            : valueBits == 32 ? (int) bits
            : bits >>> (64 - valueBits);
      }
      return values;
    }

    /** The order-preserving unsigned key of {@code value}, left-aligned in the 64-bit word. */
    long encode(long value) {
      return keyBits == 32 ? OrderedBits.ofInt((int) value) << 32 : OrderedBits.ofLong(value);
    }
  }
}
