package io.gpusort.examples;

import io.gpusort.memory.HostMemory;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.unsafe.Platform;

/**
 * How the row intake copies a row: each row, a heap array as Spark's row writers leave it, copied
 * into records of native memory (an 8-byte length, then the row) one after another, as the row
 * store does. {@code Unsafe.copyMemory} (through Spark's {@code Platform}) against a loop of word
 * loads and stores, in the same process on the same rows; into a 2 MB ring (the copy alone, in
 * cache) and into one buffer of all the rows (what pages cost); on one thread and on as many as
 * the machine has cores, each thread its own rows, as tasks are. Prints ns a row, the best of 4
 * runs, and the loop's time over the bulk copy's.
 *
 * <pre>{@code
 * java -cp <core classes + deps>:<examples classes> io.gpusort.examples.RowCopyBenchmark \
 *     [--threads 16] [--sizes 40,136,256,512,1024]
 * }</pre>
 */
public final class RowCopyBenchmark {
  private static final long RING_BYTES = 2L << 20;
  /** Bytes of records a thread writes into its buffer of all rows (a task's, about). */
  private static final long BUFFER_BYTES = 180L << 20;
  private static final int RUNS = 4;

  private RowCopyBenchmark() {}

  public static void main(String[] args) throws Exception {
    int threads = Runtime.getRuntime().availableProcessors();
    int[] sizes = {40, 136, 256, 512, 1024};
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--sizes" -> {
          String[] parts = args[++i].split(",");
          sizes = new int[parts.length];
          for (int k = 0; k < parts.length; k++) {
            sizes[k] = Integer.parseInt(parts[k].trim());
            if (sizes[k] <= 0 || sizes[k] % 8 != 0) {
              throw new IllegalArgumentException("a row size is a positive multiple of 8: "
                  + parts[k]);
            }
          }
        }
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    System.out.printf(Locale.ROOT, "%5s %7s %-13s %14s %14s %8s%n", "bytes", "threads", "into",
        "copyMemory ns", "word loop ns", "loop/bulk");
    for (int size : sizes) {
      for (int t : threads == 1 ? new int[] {1} : new int[] {1, threads}) {
        for (boolean all : new boolean[] {false, true}) {
          double bulk = Double.MAX_VALUE;
          double words = Double.MAX_VALUE;
          for (int run = 0; run < RUNS; run++) {
            bulk = Math.min(bulk, nanosPerRow(size, t, all, false));
            words = Math.min(words, nanosPerRow(size, t, all, true));
          }
          System.out.printf(Locale.ROOT, "%5d %7d %-13s %14.1f %14.1f %8.2f%n", size, t,
              all ? "all rows" : "2 MB ring", bulk, words, words / bulk);
        }
      }
    }
  }

  /** Each of {@code threads} threads copies its rows of {@code size} bytes; mean ns a row. */
  private static double nanosPerRow(int size, int threads, boolean allRows, boolean words)
      throws Exception {
    long record = 8L + size;
    int rows = (int) (BUFFER_BYTES / record);
    long bytes = allRows ? record * rows : RING_BYTES;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long[] buffers = new long[threads];
    try {
      for (int t = 0; t < threads; t++) {
        buffers[t] = Platform.allocateMemory(bytes);
        HostMemory.fill(buffers[t], bytes, (byte) 1);
      }
      CountDownLatch start = new CountDownLatch(1);
      @SuppressWarnings("unchecked")
      Future<Long>[] nanos = new Future[threads];
      for (int t = 0; t < threads; t++) {
        long base = buffers[t];
        nanos[t] = pool.submit(() -> {
          byte[] row = new byte[size];
          for (int k = 0; k < size; k++) {
            row[k] = (byte) k;
          }
          start.await();
          long begin = System.nanoTime();
          long at = base;
          long end = base + bytes;
          for (int i = 0; i < rows; i++) {
            if (at + record > end) {
              at = base;
            }
            Platform.putLong(null, at, size);
            if (words) {
              for (int k = 0; k < size; k += 8) {
                Platform.putLong(null, at + 8 + k,
                    Platform.getLong(row, Platform.BYTE_ARRAY_OFFSET + k));
              }
            } else {
              Platform.copyMemory(row, Platform.BYTE_ARRAY_OFFSET, null, at + 8, size);
            }
            at += record;
          }
          return System.nanoTime() - begin;
        });
      }
      start.countDown();
      long sum = 0;
      for (Future<Long> f : nanos) {
        sum += f.get();
      }
      return sum / (double) threads / rows;
    } finally {
      pool.shutdown();
      for (long b : buffers) {
        if (b != 0) {
          Platform.freeMemory(b);
        }
      }
    }
  }
}
