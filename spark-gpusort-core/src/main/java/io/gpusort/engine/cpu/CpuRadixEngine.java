package io.gpusort.engine.cpu;

import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The CPU engine: a stable LSD radix sort with 8-bit digits, parallel over row ranges. It is the
 * fallback when no GPU engine can run and the reference every GPU engine is tested against.
 *
 * <p>One upfront pass histograms every digit of every word; digits whose values all fall in one
 * bucket, and digits wholly after {@code keyBits}, get no pass, so the cost is one scatter pass
 * per digit that actually varies. If no digit varies the permutation is the identity. Each
 * parallel step splits the rows into the same contiguous ranges, and a pass's write offsets come
 * from an exclusive prefix over (bucket, range), which keeps it stable. Passes move (key word, row)
 * pairs, or one long packing the digits still to sort on with the row as soon as they fit (see
 * {@link LsdRadixPasses}).
 *
 * <p>Working memory is on the Java heap, at most {@link #workingBytes} per sort (see
 * {@link Workspace} for why not off-heap); the engine allocates no off-heap memory. The engine may
 * be shared by concurrent callers; they share its thread pool.
 */
public final class CpuRadixEngine implements SortEngine {
  /** Below this many rows a sort runs on the calling thread alone: hand-offs would cost more. */
  static final int MIN_PARALLEL_ROWS = 1 << 16;
  /** The fewest rows worth one range of a parallel sort. */
  static final int MIN_ROWS_PER_RANGE = 1 << 15;

  private static final AtomicInteger ENGINE_IDS = new AtomicInteger();

  private final int parallelism;
  /** Runs ranges 1..parallelism-1 of each step (the caller runs range 0); null if parallelism is 1. */
  private final ThreadPoolExecutor pool;
  private volatile boolean closed;

  /** An engine using every available processor. */
  public CpuRadixEngine() {
    this(Runtime.getRuntime().availableProcessors());
  }

  /**
   * An engine that sorts with up to {@code parallelism} threads, the caller's included.
   *
   * @throws IllegalArgumentException if {@code parallelism < 1}
   */
  public CpuRadixEngine(int parallelism) {
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be at least 1: " + parallelism);
    }
    this.parallelism = parallelism;
    this.pool = parallelism == 1 ? null : newPool(parallelism - 1);
  }

  private static ThreadPoolExecutor newPool(int numThreads) {
    String prefix = "gpusort-cpu-" + ENGINE_IDS.incrementAndGet() + "-";
    AtomicInteger threadIds = new AtomicInteger();
    ThreadFactory factory = task -> {
      Thread thread = new Thread(task, prefix + threadIds.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
    return new ThreadPoolExecutor(numThreads, numThreads, 0L, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), factory);
  }

  @Override
  public String name() {
    return "cpu";
  }

  /** The most threads one sort uses. */
  public int parallelism() {
    return parallelism;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Only {@code 4 * keys.numRows()} bytes of {@code permutation} are written. The keys are only
   * read. Zero rows write nothing.
   *
   * @throws IllegalArgumentException if {@code permutation} is too small
   * @throws IllegalStateException if the engine is closed
   */
  @Override
  public void sort(KeyBatch keys, HostBuffer permutation) {
    if (closed) {
      throw new IllegalStateException("cpu engine is closed");
    }
    int numRows = keys.numRows();
    if (permutation.sizeBytes() < 4L * numRows) {
      throw new IllegalArgumentException("permutation of " + permutation.sizeBytes()
          + " bytes is too small for " + numRows + " rows");
    }
    if (numRows == 0) {
      return;
    }
    RowRanges ranges = RowRanges.split(numRows, rangeCount(numRows));
    RangeRunner runner = new RangeRunner(pool, ranges);
    DigitHistograms histograms = DigitHistograms.compute(keys, runner);
    Workspace workspace = new Workspace(numRows);
    int[] sortedRows = new LsdRadixPasses(keys, histograms, runner, workspace).run();
    if (sortedRows == null) {
      writeIdentity(permutation, numRows);
    } else {
      HostMemory.copyFromArray(sortedRows, 0, permutation.address(), numRows);
    }
    workspace.release();
  }

  /**
   * The most Java heap a sort of {@code numRows} rows allocates for its working arrays, 24 bytes a
   * row: callers that account memory reserve this much for the call. Once {@link #sort} returns,
   * the thread keeps them only softly, for its next sort (the collector clears them when the heap
   * needs the room).
   */
  public static long workingBytes(int numRows) {
    return Workspace.MAX_BYTES_PER_ROW * numRows;
  }

  /** How many ranges (and threads) a sort of {@code numRows} rows uses. */
  int rangeCount(int numRows) {
    if (pool == null || numRows < MIN_PARALLEL_ROWS) {
      return 1;
    }
    return Math.max(1, Math.min(parallelism, numRows / MIN_ROWS_PER_RANGE));
  }

  private static void writeIdentity(HostBuffer permutation, int numRows) {
    long address = permutation.address();
    for (int i = 0; i < numRows; i++) {
      HostMemory.putInt(address + 4L * i, i);
    }
  }

  /**
   * Stops the engine's threads. A sort running on another thread at that moment fails with an
   * {@link io.gpusort.engine.EngineException} once it needs the pool again. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    if (pool != null) {
      pool.shutdown();
    }
  }
}
