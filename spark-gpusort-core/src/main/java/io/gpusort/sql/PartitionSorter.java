package io.gpusort.sql;

import io.gpusort.engine.EngineException;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.SortEngine;
import io.gpusort.keys.KeyLayout;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import io.gpusort.merge.IntComparator;
import io.gpusort.merge.IntSorts;
import io.gpusort.merge.LoserTree;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sorts the rows of one partition on the engine, inside one task: buffer the rows, encode their
 * keys, sort chunk by chunk on the engine, break ties of truncated keys exactly on the host, and
 * merge the chunks' sorted runs with a loser tree.
 */
final class PartitionSorter {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionSorter.class);
  /** Above this many runs per row, merging costs more than sorting again. */
  private static final int MIN_ROWS_PER_RUN = 32;

  private final SortPlan plan;
  private final KeyLayout layout;
  private final int numWords;
  private final RowKeyEncoder encoder;
  private final LazilyGeneratedOrdering ordering;
  private final UnsafeProjection toUnsafe;
  private final long[] scratch;
  private final UnsafeRow left;
  private final UnsafeRow right;
  /** The engine for given options; {@link Engines#create} but in tests. */
  private final Function<EngineOptions, SortEngine> engines;

  PartitionSorter(SortPlan plan) {
    this(plan, Engines::create);
  }

  PartitionSorter(SortPlan plan, Function<EngineOptions, SortEngine> engines) {
    this.plan = plan;
    this.engines = engines;
    this.layout = plan.keys.layout;
    this.numWords = layout.numWords();
    this.encoder = new RowKeyEncoder(plan.keys);
    this.ordering = new LazilyGeneratedOrdering(plan.keys.boundOrders);
    this.toUnsafe = UnsafeProjection.create(plan.inputSchema);
    this.scratch = new long[numWords];
    this.left = new UnsafeRow(plan.numFields());
    this.right = new UnsafeRow(plan.numFields());
  }

  RowBuffer buffer(Iterator<InternalRow> input) {
    RowBuffer rows = new RowBuffer(plan.numFields());
    while (input.hasNext()) {
      rows.append(asUnsafe(input.next()));
    }
    return rows;
  }

  UnsafeRow asUnsafe(InternalRow row) {
    return row instanceof UnsafeRow unsafe ? unsafe : toUnsafe.apply(row);
  }

  RowKeyEncoder encoder() {
    return encoder;
  }

  LazilyGeneratedOrdering ordering() {
    return ordering;
  }

  /** The row indices of {@code rows} in sorted order. */
  int[] sortedOrder(RowBuffer rows) {
    long startNanos = System.nanoTime();
    int[] order = sortedOrderUntimed(rows);
    long elapsedNanos = System.nanoTime() - startNanos;
    SortMetrics.add(plan.metrics.sortTimeNanos, elapsedNanos);
    EngineStats.recordSortNanos(elapsedNanos);
    return order;
  }

  private int[] sortedOrderUntimed(RowBuffer rows) {
    int n = rows.numRows();
    int[] order = new int[n];
    if (n == 0) {
      return order;
    }
    int[] chunkStarts = chunkStarts(rows);
    int numChunks = chunkStarts.length - 1;
    if (numChunks == 1) {
      sortChunks(rows, chunkStarts, order, null);
      return order;
    }
    try (HostBuffer rowMajorKeys = HostBuffer.acquire(8L * n * numWords)) {
      sortChunks(rows, chunkStarts, order, rowMajorKeys);
      return LoserTree.merge(order, chunkStarts, rowComparator(rows, rowMajorKeys));
    }
  }

  /**
   * Sorts every chunk on the engine in one call, so that a GPU engine overlaps the transfers of
   * one chunk with the sort of another; each chunk's order lands in {@code order} as global row
   * indices. Also stores the keys row-major when {@code rowMajorKeys} is given (several chunks
   * are then merged by key).
   */
  private void sortChunks(RowBuffer rows, int[] chunkStarts, int[] order,
      HostBuffer rowMajorKeys) {
    int numChunks = chunkStarts.length - 1;
    List<HostBuffer> held = new ArrayList<>();
    try {
      List<KeyBatch> batches = new ArrayList<>(numChunks);
      List<HostBuffer> permutations = new ArrayList<>(numChunks);
      for (int c = 0; c < numChunks; c++) {
        int from = chunkStarts[c];
        int count = chunkStarts[c + 1] - from;
        HostBuffer keyWords =
            HostBuffer.acquireTransferable(KeyBatch.requiredBytes(count, numWords));
        held.add(keyWords);
        HostBuffer permutation = HostBuffer.acquireTransferable(4L * count);
        held.add(permutation);
        KeyBatch batch = new KeyBatch(keyWords, count, numWords, layout.keyBits());
        encodeChunk(rows, from, chunkStarts[c + 1], batch, rowMajorKeys);
        batches.add(batch);
        permutations.add(permutation);
      }
      sortAllOnEngine(batches, permutations);
      for (int c = 0; c < numChunks; c++) {
        finishChunk(rows, chunkStarts[c], chunkStarts[c + 1], order, batches.get(c),
            permutations.get(c));
      }
    } finally {
      for (HostBuffer buffer : held) {
        buffer.close();
      }
    }
  }

  /**
   * The row indices of {@code rows} in sorted order, for rows that arrive as a concatenation of
   * sorted runs (a shuffle of sorted map outputs). Runs are found from the keys themselves, so the
   * result is right whatever order the runs arrived in; when runs are short, it sorts instead.
   */
  int[] mergedOrder(RowBuffer rows) {
    long startNanos = System.nanoTime();
    int[] order = mergedOrderUntimed(rows);
    long elapsedNanos = System.nanoTime() - startNanos;
    SortMetrics.add(plan.metrics.sortTimeNanos, elapsedNanos);
    EngineStats.recordSortNanos(elapsedNanos);
    return order;
  }

  private int[] mergedOrderUntimed(RowBuffer rows) {
    int n = rows.numRows();
    if (n < 2) {
      return new int[n];
    }
    List<Integer> starts = new ArrayList<>();
    try (HostBuffer rowMajorKeys = HostBuffer.acquire(8L * n * numWords)) {
      UnsafeRow row = rows.newRow();
      long address = rowMajorKeys.address();
      for (int r = 0; r < n; r++) {
        rows.pointTo(row, r);
        encoder.encode(row, scratch);
        for (int w = 0; w < numWords; w++) {
          HostMemory.putLong(address + 8L * ((long) r * numWords + w), scratch[w]);
        }
      }
      IntComparator cmp = rowComparator(rows, rowMajorKeys);
      starts.add(0);
      for (int r = 1; r < n; r++) {
        if (cmp.compare(r - 1, r) > 0) {
          starts.add(r);
          if (starts.size() > n / MIN_ROWS_PER_RUN + 1) {
            break;
          }
        }
      }
      if (starts.size() <= n / MIN_ROWS_PER_RUN + 1) {
        int[] runStarts = new int[starts.size() + 1];
        for (int i = 0; i < starts.size(); i++) {
          runStarts[i] = starts.get(i);
        }
        runStarts[starts.size()] = n;
        int[] identity = new int[n];
        for (int r = 0; r < n; r++) {
          identity[r] = r;
        }
        return runStarts.length == 2 ? identity : LoserTree.merge(identity, runStarts, cmp);
      }
    }
    LOG.debug("{} rows arrived in more than {} runs; sorting them instead of merging", n,
        n / MIN_ROWS_PER_RUN);
    return sortedOrderUntimed(rows);
  }

  /** An iterator over {@code rows} in {@code order}, reusing one row object. */
  Iterator<InternalRow> iterate(RowBuffer rows, int[] order) {
    SortMetrics.add(plan.metrics.outputRows, order.length);
    UnsafeRow row = rows.newRow();
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < order.length;
      }

      @Override
      public InternalRow next() {
        if (next >= order.length) {
          throw new NoSuchElementException();
        }
        rows.pointTo(row, order[next++]);
        return row;
      }
    };
  }

  /** Splits the rows into chunks whose rows and keys fit the chunk budget; at least one row each. */
  private int[] chunkStarts(RowBuffer rows) {
    List<Integer> starts = new ArrayList<>();
    starts.add(0);
    long perRowOverhead = 8L * numWords + 8;
    long used = 0;
    for (int r = 0; r < rows.numRows(); r++) {
      long bytes = rows.rowSizeBytes(r) + perRowOverhead;
      if (used > 0 && used + bytes > plan.chunkBytes) {
        starts.add(r);
        used = 0;
      }
      used += bytes;
    }
    starts.add(rows.numRows());
    return starts.stream().mapToInt(Integer::intValue).toArray();
  }

  /** Copies a chunk's permutation into {@code order}, breaks prefix ties, makes indices global. */
  private void finishChunk(RowBuffer rows, int from, int to, int[] order, KeyBatch batch,
      HostBuffer permutation) {
    HostMemory.copyToArray(permutation.address(), order, from, to - from);
    if (layout.needsTieBreak()) {
      breakTies(rows, batch, order, from, to);
    }
    for (int i = from; i < to; i++) {
      order[i] += from;
    }
  }

  private void encodeChunk(RowBuffer rows, int from, int to, KeyBatch batch,
      HostBuffer rowMajorKeys) {
    UnsafeRow row = rows.newRow();
    long base = batch.words().address();
    long n = to - from;
    long rowMajor = rowMajorKeys == null ? 0 : rowMajorKeys.address();
    for (int r = from; r < to; r++) {
      rows.pointTo(row, r);
      encoder.encode(row, scratch);
      long local = r - from;
      for (int w = 0; w < numWords; w++) {
        HostMemory.putLong(base + 8L * (w * n + local), scratch[w]);
        if (rowMajorKeys != null) {
          HostMemory.putLong(rowMajor + 8L * ((long) r * numWords + w), scratch[w]);
        }
      }
    }
  }

  private void sortAllOnEngine(List<KeyBatch> batches, List<HostBuffer> permutations) {
    SortEngine engine = engines.apply(plan.engineOptions.withCudaDevice(taskGpu()));
    try {
      engine.sortAll(batches, permutations);
      SortMetrics.add(plan.metrics.engineChunks, batches.size());
      recordCall(engine, batches);
    } catch (EngineException e) {
      SortEngine cpu = Engines.cpu();
      if (engine == cpu) {
        throw e;
      }
      long rows = batches.stream().mapToLong(KeyBatch::numRows).sum();
      LOG.warn("The {} engine failed on {} rows; sorting this partition on the CPU engine",
          engine.name(), rows, e);
      cpu.sortAll(batches, permutations);
      SortMetrics.add(plan.metrics.engineChunks, batches.size());
      SortMetrics.add(plan.metrics.engineFallbacks, 1);
      EngineStats.recordFallback();
      recordCall(cpu, batches);
    }
  }

  /** The SQL node's and the process's counts of one engine call. */
  private void recordCall(SortEngine engine, List<KeyBatch> batches) {
    long rows = 0;
    long keyBytes = 0;
    for (KeyBatch b : batches) {
      rows += b.numRows();
      keyBytes += 8L * b.numRows() * b.numWords();
    }
    SortMetrics.add(plan.metrics.rowsOn(engine.name()), rows);
    if (EngineStats.isGpu(engine)) {
      SortMetrics.add(plan.metrics.bytesToDevice, keyBytes);
      SortMetrics.add(plan.metrics.bytesFromDevice, 4L * rows);
    }
    EngineStats.recordCall(engine, batches.size(), rows, keyBytes);
  }

  /**
   * The CUDA device of this task: the first GPU address Spark assigned it (spark.task.resource.gpu
   * .amount), else the configured device.
   */
  private int taskGpu() {
    TaskContext task = TaskContext.get();
    if (task != null) {
      scala.Option<ResourceInformation> assigned = task.resources().get("gpu");
      ResourceInformation gpu = assigned.isDefined() ? assigned.get() : null;
      if (gpu != null && gpu.addresses().length > 0) {
        try {
          return Integer.parseInt(gpu.addresses()[0].trim());
        } catch (NumberFormatException e) {
          LOG.warn("GPU address {} is not a device ordinal; using the configured device",
              gpu.addresses()[0]);
        }
      }
    }
    return plan.engineOptions.cudaDevice();
  }

  /**
   * Orders each group of rows whose truncated keys tie by Spark's exact comparison. {@code order}
   * holds chunk-local indices into {@code batch} here.
   */
  private void breakTies(RowBuffer rows, KeyBatch batch, int[] order, int from, int to) {
    IntComparator exact = (a, b) -> {
      rows.pointTo(left, a + from);
      rows.pointTo(right, b + from);
      return ordering.compare(left, right);
    };
    int start = from;
    while (start < to) {
      int end = start + 1;
      while (end < to && sameKey(batch, order[start], order[end])) {
        end++;
      }
      if (end - start > 1) {
        IntSorts.sort(order, start, end, exact);
        SortMetrics.add(plan.metrics.tieBrokenRows, end - start);
      }
      start = end;
    }
  }

  private boolean sameKey(KeyBatch batch, int a, int b) {
    for (int w = 0; w < numWords; w++) {
      if (batch.word(a, w) != batch.word(b, w)) {
        return false;
      }
    }
    return true;
  }

  /** Compares rows by their row-major keys, then exactly when truncated keys tie. */
  private IntComparator rowComparator(RowBuffer rows, HostBuffer rowMajorKeys) {
    long base = rowMajorKeys.address();
    boolean exact = layout.needsTieBreak();
    return (a, b) -> {
      long ka = base + 8L * a * numWords;
      long kb = base + 8L * b * numWords;
      for (int w = 0; w < numWords; w++) {
        long x = HostMemory.getLong(ka + 8L * w);
        long y = HostMemory.getLong(kb + 8L * w);
        if (x != y) {
          return Long.compareUnsigned(x, y);
        }
      }
      if (!exact) {
        return 0;
      }
      rows.pointTo(left, a);
      rows.pointTo(right, b);
      return ordering.compare(left, right);
    };
  }
}
