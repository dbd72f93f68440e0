package io.gpusort.sql;

import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.Engines;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import io.gpusort.merge.MergeTree;
import io.gpusort.spill.RunWriter;
import io.gpusort.spill.SpillFile;
import io.gpusort.spill.SpillStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskContext$;
import org.apache.spark.memory.SparkOutOfMemoryError;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.util.TaskCompletionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Sorts the rows of one partition inside one task, in bounded memory: rows are taken in
 * ({@link RunBuilder}), sorted in runs on the engine ({@link EngineStage}), which on a GPU also
 * puts the rows themselves in order, kept in memory while Spark grants it, written to local disk
 * when it does not or when another consumer of the task asks, and merged by key as the output is
 * read ({@link SortOutput}). A run ends when memory runs out or at {@code spark.gpusort.run
 * .maxBytes}: a partition that fits is sorted by one engine call and read straight through.
 *
 * <p>Every byte it holds is the task's execution memory ({@link SortMemory}); everything is
 * released when the output is exhausted, and in any case when the task ends (success, failure or
 * kill), spill files included. Loops over rows check for a killed task every few thousand rows.
 */
final class ExternalRowSorter implements SortMemory.Spiller, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExternalRowSorter.class);
  /** Rows between two checks for a killed task. */
  private static final int KILL_CHECK_ROWS = 4096;
  /** Rows gathered from a run at once when it is written to disk. */
  private static final int WRITE_BATCH_ROWS = 1024;
  /** The most spilled runs read at once; more are merged into fewer files first. */
  static final int MAX_MERGE_WIDTH = 64;

  private static final AtomicInteger OPEN_SORTS = new AtomicInteger();
  private static final AtomicLong ROWS_TAKEN_IN = new AtomicLong();
  private static final AtomicLong SPILLS = new AtomicLong();
  private static final AtomicLong COLUMNAR_ROWS = new AtomicLong();

  static {
    // The host arena's background pinning holds back the device calls of sorts running beside
    // it: it waits while a task's sort is open (the warm-up's are not counted). No sort can be
    // open before this class is loaded, so registering here covers every arena of the process.
    HostBuffer.pausePinningWhile(() -> OPEN_SORTS.get() > 0);
  }

  private enum Phase { INTAKE, OUTPUT, DONE }

  /** The engines of tasks' sorts: {@link Engines#create}, but in tests that make them fail. */
  private static volatile Function<EngineOptions, SortEngine> taskEngines = Engines::create;

  private final SortPlan plan;
  /** The task sorted in; null outside one (the warm-up). */
  private final TaskContext task;
  /** Whether the sort counts in the process's figures (every sort but the warm-up's). */
  private final boolean counted;
  private final RowKeys keys;
  private final SortMemory memory;
  private final EngineStage engine;
  private final SpillStore store;
  private RunBuilder.Input runInput;
  private final Runnable killCheck;
  private final int numFields;
  private final RunBuilder builder;
  private final List<SortedRun> memoryRuns = new ArrayList<>();
  private final List<FileRun> fileRuns = new ArrayList<>();
  /** Every spill file created, so that each is deleted whatever happens. */
  private final List<SpillFile> files = new ArrayList<>();
  private SortOutput output;
  private Phase phase = Phase.INTAKE;
  private boolean spilling;
  private long spillDiskBytes;
  /** Rows of the sorted runs held in memory (not counting the run being filled). */
  private long memoryRunRows;
  /** Nanoseconds of sorting so far (runs sealed, spilled runs merged), to keep out of intake. */
  private long sealNanosSoFar;
  /** Whether a run sealed so far had a truncated key (a string longer than its prefix). */
  private boolean anyKeyInexact;
  /** The keys of the run sealed last, where they are exact ({@link RowKeyEncoder#span}). */
  private RowKeyEncoder.KeySpan lastRunSpan;

  /**
   * A sorter for one partition of {@code plan} in {@code task}. {@code presortedRuns}: the input is
   * a concatenation of sorted runs (a shuffle of sorted map outputs), merged instead of sorted.
   */
  ExternalRowSorter(SortPlan plan, TaskContext task, Function<EngineOptions, SortEngine> engines,
      SpillStore store, boolean presortedRuns) {
    this(plan, task, new SortMemory(task.taskMemoryManager()), killCheck(task), engines, store,
        presortedRuns, true);
    task.addTaskCompletionListener((TaskCompletionListener) context -> close());
  }

  /**
   * A sorter outside a task, in {@code memory}, which the caller closes: the row path's warm-up
   * ({@link RowPathWarmup}). It is not counted among the process's sorts, rows or spills.
   */
  static ExternalRowSorter outsideTask(SortPlan plan, SortMemory memory, SortEngine engine,
      SpillStore store) {
    // A task context of its own, never killed: the same kill check as a task's.
    return new ExternalRowSorter(plan, null, memory, killCheck(TaskContext$.MODULE$.empty()),
        options -> engine, store, false, false);
  }

  /**
   * {@code task}'s check for being killed, of one class for every sorter: the per-row code that
   * calls it (the output, the intake) is compiled for that one class, by the warm-up and the tasks
   * alike (with a class of its own, the warm-up's compiled output was thrown away in the first
   * query on the H200 host, "class_check", and compiled again while the tasks ran).
   */
  private static Runnable killCheck(TaskContext task) {
    return task::killTaskIfInterrupted;
  }

  private ExternalRowSorter(SortPlan plan, TaskContext task, SortMemory memory,
      Runnable killCheck, Function<EngineOptions, SortEngine> engines, SpillStore store,
      boolean presortedRuns, boolean counted) {
    this.plan = plan;
    this.task = task;
    this.counted = counted;
    this.keys = new RowKeys(plan);
    this.memory = memory;
    this.killCheck = killCheck;
    this.engine = new EngineStage(plan, engines, killCheck);
    this.store = store;
    this.runInput = presortedRuns ? RunBuilder.Input.SORTED_RUNS_HOST_MERGE
        : RunBuilder.Input.UNSORTED;
    this.numFields = plan.numFields();
    this.builder = new RunBuilder(keys, memory, plan.chunkBytes, plan.gatherRowsOnHost,
        numFields, engine::openRowUpload,
        RunBuilder.firstCapacity(plan.expectedPartitionRows, plan.runBytes, keys.numWords),
        plan.stagingBytes);
    HostBuffer.configurePools(plan.poolMaxIdleBytes, plan.poolIdleTimeoutMillis);
    // The arena is made once, when the GPU engine opens: settings matter only until then.
    if (!HostBuffer.arenaStarted()) {
      SparkEnv env = SparkEnv.get();
      HostBuffer.configureArena(plan.arena.settings(env == null ? null : env.conf()));
    }
    memory.setSpiller(this);
    if (counted) {
      OPEN_SORTS.incrementAndGet();
    }
  }

  /** Sorts the rows of {@code input} in the current task; presorted runs are merged instead. */
  static Iterator<InternalRow> sortInTask(SortPlan plan, Iterator<InternalRow> input,
      boolean presortedRuns) {
    return inTask(plan, presortedRuns).sort(input);
  }

  /**
   * The map side of a global sort's exchange: sorts the rows of {@code input} (input partition
   * {@code partition}) in the current task, then cuts them at {@code bounds} into chunks, each
   * with its output partition, in sorted order ({@link ChunkCutter}).
   */
  static Iterator<Tuple2<Integer, RowChunk>> sortIntoChunksInTask(SortPlan plan,
      Iterator<InternalRow> input, RangeBounds bounds, int partition) {
    ExternalRowSorter sorter = inTask(plan, false);
    return sorter.sortIntoChunks(() -> sorter.takeInRows(input), bounds, partition);
  }

  /** As {@link #sortIntoChunksInTask}, the rows written from columnar {@code batches}. */
  static Iterator<Tuple2<Integer, RowChunk>> sortBatchesIntoChunksInTask(SortPlan plan,
      Iterator<ColumnarBatch> batches, ColumnarRowWriter writer, RangeBounds bounds,
      int partition) {
    return inTask(plan, false).sortBatchesIntoChunks(batches, writer, bounds, partition);
  }

  /** As {@link #sortBatchesIntoChunksInTask}, in this sorter. */
  Iterator<Tuple2<Integer, RowChunk>> sortBatchesIntoChunks(Iterator<ColumnarBatch> batches,
      ColumnarRowWriter writer, RangeBounds bounds, int partition) {
    return sortIntoChunks(() -> takeInBatches(batches, writer), bounds, partition);
  }

  /**
   * The reduce side of a global sort's exchange: takes in the rows of the map sides' chunks with
   * their keys as encoded there, then returns them in order: sorted on a GPU engine, merged on the
   * host by their keys (each map side's block is sorted) otherwise.
   */
  static Iterator<InternalRow> sortChunksInTask(SortPlan plan, Iterator<RowChunk> chunks) {
    return sortChunksInTask(plan, chunks, 0);
  }

  /**
   * As above, the first run's index sized for {@code expectedRows} (the rows the map side wrote
   * for the partitions this task reads, as far as known; 0 where not).
   */
  static Iterator<InternalRow> sortChunksInTask(SortPlan plan, Iterator<RowChunk> chunks,
      long expectedRows) {
    return inTask(plan, false).sortChunksAsReducer(chunks, expectedRows);
  }

  /** As {@link #sortChunksInTask(SortPlan, Iterator, long)}, in this sorter. */
  Iterator<InternalRow> sortChunksAsReducer(Iterator<RowChunk> chunks, long expectedRows) {
    if (expectedRows > 0) {
      builder.expectCapacity(RunBuilder.firstCapacity(expectedRows, plan.runBytes, keys.numWords));
    }
    // On the CPU engine, a loser tree over the encoded keys of the blocks; on a GPU, the blocks'
    // runs merged on the device (keys of one word) or their concatenation sorted there.
    if (!engine.sortsOnGpu()) {
      runInput = RunBuilder.Input.SORTED_RUNS_HOST_MERGE;
    } else {
      runInput = plan.deviceMerge ? RunBuilder.Input.SORTED_RUNS_ENGINE_MERGE
          : RunBuilder.Input.UNSORTED;
    }
    return sortChunks(chunks);
  }

  /** As above, merged on the host ({@code presortedRuns}) or sorted on the engine, as told. */
  static Iterator<InternalRow> sortChunksInTask(SortPlan plan, Iterator<RowChunk> chunks,
      boolean presortedRuns) {
    return inTask(plan, presortedRuns).sortChunks(chunks);
  }

  /** Sorts the rows of columnar {@code batches} in the current task (the columnar intake). */
  static Iterator<InternalRow> sortBatchesInTask(SortPlan plan, Iterator<ColumnarBatch> batches,
      ColumnarRowWriter writer) {
    return inTask(plan, false).sortBatches(batches, writer);
  }

  /** A sorter in the current task, on the configured engines, spilling to the executor's disks. */
  private static ExternalRowSorter inTask(SortPlan plan, boolean presortedRuns) {
    TaskContext task = TaskContext.get();
    if (task == null) {
      throw new IllegalStateException("GpuSort sorts rows inside a Spark task");
    }
    return new ExternalRowSorter(plan, task, taskEngines, SparkSpillStore.ofExecutor(),
        presortedRuns);
  }

  /** Makes the sorts of tasks in this JVM run on {@code engines}; null: the configured ones. */
  static void setTaskEnginesForTests(Function<EngineOptions, SortEngine> engines) {
    taskEngines = engines == null ? Engines::create : engines;
  }

  /** Sorters of this process not yet closed. */
  static int openSorts() {
    return OPEN_SORTS.get();
  }

  /** Rows taken in by the sorters of this process, counted every few thousand. */
  static long rowsTakenIn() {
    return ROWS_TAKEN_IN.get();
  }

  /** Rows the sorters of this process took in straight from columnar batches. */
  static long columnarRowsTakenIn() {
    return COLUMNAR_ROWS.get();
  }

  /** Adds {@code n} to one of the process's figures, where this sort counts in them. */
  private void countIn(AtomicLong figure, long n) {
    if (counted) {
      figure.addAndGet(n);
    }
  }

  /** Spills of the sorters of this process so far. */
  static long spills() {
    return SPILLS.get();
  }

  /**
   * Takes in every row of {@code batches}, written by {@code writer} straight into the run's
   * pages, then returns the rows in order.
   */
  Iterator<InternalRow> sortBatches(Iterator<ColumnarBatch> batches, ColumnarRowWriter writer) {
    return sortAfter(() -> takeInBatches(batches, writer));
  }

  private void takeInBatches(Iterator<ColumnarBatch> batches, ColumnarRowWriter writer)
      throws IOException {
    long count = 0;
    long inputStart = System.nanoTime();
    while (batches.hasNext()) {
      ColumnarBatch batch = batches.next();
      long batchStart = System.nanoTime();
      // The child's own time making the batch (the scan): outside the node, reported apart.
      SortMetrics.add(plan.metrics.inputTime, batchStart - inputStart);
      long sealsBefore = sealNanosSoFar;
      writer.bind(batch);
      int n = batch.numRows();
      for (int r = 0; r < n; ) {
        killCheck.run();
        makeRoom(writer.rowBytes(r));
        // As many rows as fit the page and the index, and keep within the limits that end a run.
        int take = builder.rowsThatFit(writer, r, n - r);
        take = (int) Math.min(take, plan.forceSpillRows - (builder.numRows() + memoryRunRows));
        take = Math.max(1, writer.rowsWithin(r, take,
            plan.runBytes - runBytes(builder.numRows()), 8L * keys.numWords));
        builder.append(writer, r, take);
        r += take;
        count += take;
      }
      countIn(ROWS_TAKEN_IN, n);
      // The intake of a batch is timed whole: no clock per row, the batch's own seals taken off.
      inputStart = System.nanoTime();
      SortMetrics.add(plan.metrics.intakeTime,
          inputStart - batchStart - (sealNanosSoFar - sealsBefore));
    }
    SortMetrics.add(plan.metrics.inputTime, System.nanoTime() - inputStart);
    SortMetrics.add(plan.metrics.columnarRows, count);
    countIn(COLUMNAR_ROWS, count);
  }

  /** Takes in the rows by {@code intake}, then cuts them into chunks as above. */
  private Iterator<Tuple2<Integer, RowChunk>> sortIntoChunks(Intake intake, RangeBounds bounds,
      int partition) {
    return closingOnFailure(() -> {
      intake.takeIn();
      if (builder.numRows() > 0) {
        sealRun();
      }
      int[] cuts = null;
      // Keys truncated by their layout may still all be exact in this partition (fixed-length
      // strings or binaries within the prefix): then their words order the rows, and the cuts
      // hold where a bound's words tie with a row's only if the two keys are equal (else cutSorted
      // gives null: each row is compared).
      RowKeyEncoder.KeySpan span = lastRunSpan;
      if ((!keys.exact || span != null) && fileRuns.isEmpty() && memoryRuns.size() == 1) {
        SortedRun run = memoryRuns.get(0);
        cuts = bounds.cutSorted(run.numRows, partition,
            (position, out) -> run.gatherKeys(position, 1, out), keys.numWords,
            keys.exact ? bound -> keys.encoder.tiesAreEqual(span, bound) : null);
      }
      // Keys are read where they go with the rows, or where each row is compared with a bound.
      // These rows go on to the shuffle, not out of the node: the reduce side counts its output.
      Iterator<InternalRow> sorted = startOutput(keys.shipsKeys || cuts == null, false);
      return new ChunkCutter(sorted instanceof SortOutput out ? out : null, bounds, partition,
          keys, cuts, !anyKeyInexact && keys.encoder.keysExact());
    });
  }

  /** As {@link #sortChunksInTask}, in this sorter. */
  Iterator<InternalRow> sortChunks(Iterator<RowChunk> chunks) {
    return sortAfter(() -> takeInChunks(chunks));
  }

  /**
   * Takes in every row of {@code chunks}: each row's bytes copied into the run's pages, its key
   * words, where the chunk carries them, into the key columns as they are (no encoding), else its
   * key encoded from the row as the row intake does. A chunk that does not add up (a size past its
   * end, another key width) fails the task rather than be read past its end.
   */
  private void takeInChunks(Iterator<RowChunk> chunks) throws IOException {
    long count = 0;
    long sealsBefore = sealNanosSoFar;
    long childNanos = 0;
    long start = System.nanoTime();
    UnsafeRow unkeyed = new UnsafeRow(numFields);
    while (true) {
      long chunkStart = System.nanoTime();
      if (!chunks.hasNext()) {
        childNanos += System.nanoTime() - chunkStart;
        break;
      }
      RowChunk chunk = chunks.next();
      childNanos += System.nanoTime() - chunkStart;
      if (chunk.numWords() != keys.numWords && chunk.numWords() != 0) {
        throw new IllegalStateException("a chunk of keys of " + chunk.numWords()
            + " words for a sort whose keys have " + keys.numWords);
      }
      long keyBytes = 8L * chunk.numWords();
      byte[] bytes = chunk.bytes();
      long at = Platform.BYTE_ARRAY_OFFSET;
      long end = at + chunk.usedBytes();
      boolean exact = chunk.keysExact();
      for (int j = 0; j < chunk.numRows(); j++) {
        if (at + keyBytes + RowChunk.SIZE_BYTES > end) {
          throw new IllegalStateException("a chunk of " + chunk.numRows() + " rows ends at row "
              + j);
        }
        long size = Platform.getInt(bytes, at + keyBytes);
        long row = at + keyBytes + RowChunk.SIZE_BYTES;
        if (size < 0 || size > end - row || (size & 7) != 0) {
          throw new IllegalStateException("a row of " + size + " bytes in a chunk of "
              + chunk.usedBytes());
        }
        if ((++count & (KILL_CHECK_ROWS - 1)) == 0) {
          killCheck.run();
          countIn(ROWS_TAKEN_IN, KILL_CHECK_ROWS);
        }
        makeRoom((int) size);
        if (keyBytes == 0) {
          unkeyed.pointTo(bytes, row, (int) size);
          builder.append(unkeyed);
        } else {
          builder.appendEncoded(bytes, at, row, (int) size, exact);
        }
        at = row + size;
      }
      if (at != end) {
        throw new IllegalStateException("a chunk of " + chunk.numRows() + " rows holds "
            + (end - at) + " bytes more");
      }
    }
    long wall = System.nanoTime() - start;
    SortMetrics.add(plan.metrics.inputTime, Math.min(wall, childNanos));
    SortMetrics.add(plan.metrics.intakeTime,
        Math.max(0, wall - childNanos - (sealNanosSoFar - sealsBefore)));
  }

  /** Takes in every row of {@code input}, then returns the rows in order. */
  Iterator<InternalRow> sort(Iterator<InternalRow> input) {
    return sortAfter(() -> takeInRows(input));
  }

  /** The intake of one kind of input: every row of it into runs. */
  @FunctionalInterface
  private interface Intake {
    void takeIn() throws IOException;
  }

  /**
   * Runs {@code intake}, then returns the rows in order; releases everything when either fails.
   */
  private Iterator<InternalRow> sortAfter(Intake intake) {
    return closingOnFailure(() -> {
      intake.takeIn();
      return startOutput(false, true);
    });
  }

  /** A step of the sort that may spill to disk. */
  @FunctionalInterface
  private interface Step<T> {
    T run() throws IOException;
  }

  /** Runs {@code step}; releases everything the sorter holds when it fails. */
  private <T> T closingOnFailure(Step<T> step) {
    try {
      return step.run();
    } catch (IOException e) {
      close();
      throw new UncheckedIOException("GpuSort could not spill to local disk", e);
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  private void takeInRows(Iterator<InternalRow> input) throws IOException {
    long count = 0;
    // The loop is timed whole. The child's part (making each row) is estimated from a sample of
    // the rows (SampledTimer), since reading the clock for each would cost more than the row; the
    // node's own intake is the rest, the seals the intake caused taken off (the sort's own time
    // counts them).
    SampledTimer child = new SampledTimer();
    long sealsBefore = sealNanosSoFar;
    long start = System.nanoTime();
    while (true) {
      boolean timed = SampledTimer.sampled(count + 1);
      long rowStart = timed ? System.nanoTime() : 0L;
      if (!input.hasNext()) {
        break;
      }
      UnsafeRow row = keys.asUnsafe(input.next());
      if (timed) {
        child.add(rowStart, count + 1);
      }
      if ((++count & (KILL_CHECK_ROWS - 1)) == 0) {
        killCheck.run();
        countIn(ROWS_TAKEN_IN, KILL_CHECK_ROWS);
      }
      makeRoom(row.getSizeInBytes());
      builder.append(row);
    }
    long wall = System.nanoTime() - start;
    long childNanos = Math.min(wall, child.estimateNanos());
    SortMetrics.add(plan.metrics.inputTime, childNanos);
    SortMetrics.add(plan.metrics.intakeTime,
        Math.max(0, wall - childNanos - (sealNanosSoFar - sealsBefore)));
  }

  /** Seals or spills as the limits say, then makes room for a row of {@code size} bytes. */
  private void makeRoom(int size) throws IOException {
    int n = builder.numRows();
    if (n + memoryRunRows >= plan.forceSpillRows) {
      spill();
    } else if (n > 0 && runBytes(n) + RowStore.recordBytes(size) + 8L * keys.numWords
        > plan.runBytes) {
      sealRun();
    }
    while (!builder.tryMakeRoom(size)) {
      if (builder.numRows() == 0 && memoryRuns.isEmpty()) {
        long wanted = RowStore.recordBytes(size) + builder.heldBytes();
        throw new SparkOutOfMemoryError("UNABLE_TO_ACQUIRE_MEMORY",
            Map.of("requestedBytes", Long.toString(wanted),
                "receivedBytes", Long.toString(memory.getUsed())));
      }
      spill();
    }
  }

  /**
   * Bytes of the current run's rows, keys and row pointers (8 bytes a row, for the size the
   * pages keep before each row): what {@code run.maxBytes} bounds.
   */
  private long runBytes(int n) {
    return builder.heldRowBytes() + 8L * n * keys.numWords;
  }

  private void sealRun() {
    long start = System.nanoTime();
    anyKeyInexact |= keys.exact && !keys.encoder.keysExact();
    lastRunSpan = keys.encoder.span();
    SortedRun run = builder.seal(engine, runInput, plan.metrics, killCheck);
    // Earlier runs' rows are back from the device by now: their device memory goes back.
    memoryRuns.forEach(SortedRun::pollArrival);
    memoryRuns.add(run);
    memoryRunRows += run.numRows;
    recordSortTime(System.nanoTime() - start);
  }

  /**
   * Sorts the current run and writes every run held in memory to disk, freeing their memory;
   * returns the bytes freed.
   */
  private long spill() throws IOException {
    long before = memory.getUsed();
    spilling = true;
    try {
      if (builder.numRows() > 0) {
        sealRun();
      }
      builder.close();
      long memoryBytes = 0;
      long diskBefore = spillDiskBytes;
      for (SortedRun run : memoryRuns) {
        memoryBytes += run.heldBytes();
        fileRuns.add(writeRun(run, 0));
        run.close();
      }
      memoryRuns.clear();
      memoryRunRows = 0;
      recordSpill(memoryBytes, spillDiskBytes - diskBefore);
    } finally {
      spilling = false;
    }
    return before - memory.getUsed();
  }

  /** Writes positions {@code [from, run.numRows)} of {@code run} to a new spill file. */
  private FileRun writeRun(SortedRun run, int from) throws IOException {
    SpillFile file = store.create();
    files.add(file);
    int numWords = keys.numWords;
    long[] pointers = new long[WRITE_BATCH_ROWS];
    int[] sizes = new int[WRITE_BATCH_ROWS];
    long[] keyWords = new long[WRITE_BATCH_ROWS * numWords];
    RowStore rows = run.rows();
    SortedStream stream = run.ordered ? run.stream(from) : null;
    UnsafeRow row = new UnsafeRow(numFields);
    try (RunWriter writer = new RunWriter(file.openForWrite(), numWords)) {
      for (int start = from; start < run.numRows; start += WRITE_BATCH_ROWS) {
        killCheck.run();
        int count = Math.min(WRITE_BATCH_ROWS, run.numRows - start);
        if (stream != null) {
          run.gatherKeys(start, count, keyWords);
        } else {
          run.gather(start, count, pointers, sizes, keyWords);
        }
        for (int j = 0; j < count; j++) {
          if (stream != null) {
            stream.next(row);
          } else {
            rows.pointTo(row, pointers[j], sizes[j]);
          }
          writer.write(keyWords, j * numWords, row.getBaseObject(), row.getBaseOffset(),
              row.getSizeInBytes());
        }
      }
    }
    spillDiskBytes += file.sizeOnDiskBytes();
    return new FileRun(file, run.numRows - from, keys.numWords);
  }

  /**
   * Seals the last run and starts the output; {@code readKeys}: it hands on the rows' keys;
   * {@code nodeOutput}: its rows are the node's output, counted in {@code numOutputRows}.
   */
  private Iterator<InternalRow> startOutput(boolean readKeys, boolean nodeOutput)
      throws IOException {
    if (builder.numRows() > 0) {
      sealRun();
    }
    builder.close();
    mergeFileRunsDownTo(MAX_MERGE_WIDTH);
    boolean merging = fileRuns.size() + memoryRuns.size() > 1;
    List<RowCursor> cursors = new ArrayList<>();
    for (FileRun run : fileRuns) {
      cursors.add(new FileRunCursor(run, numFields));
    }
    for (SortedRun run : memoryRuns) {
      cursors.add(new MemoryRunCursor(run, memory, numFields, keys.numWords,
          merging || readKeys));
    }
    fileRuns.clear();
    memoryRuns.clear();
    phase = Phase.OUTPUT;
    if (cursors.isEmpty()) {
      close();
      return Collections.emptyIterator();
    }
    long start = System.nanoTime();
    output = new SortOutput(cursors, keys, killCheck, this::close, plan.metrics.outputTime,
        plan.metrics.outputWaitTime, readKeys);
    recordSortTime(System.nanoTime() - start);
    if (nodeOutput) {
      SortMetrics.add(plan.metrics.outputRows, output.numRows());
    }
    return output;
  }

  /** Merges spilled runs, consecutive ones together, until at most {@code width} are left. */
  private void mergeFileRunsDownTo(int width) throws IOException {
    while (fileRuns.size() > width) {
      long start = System.nanoTime();
      List<FileRun> merged = new ArrayList<>();
      for (int from = 0; from < fileRuns.size(); from += width) {
        List<FileRun> group = fileRuns.subList(from, Math.min(fileRuns.size(), from + width));
        merged.add(group.size() == 1 ? group.get(0) : mergeToFile(group));
      }
      fileRuns.clear();
      fileRuns.addAll(merged);
      recordSortTime(System.nanoTime() - start);
    }
  }

  private FileRun mergeToFile(List<FileRun> group) throws IOException {
    List<FileRunCursor> cursors = new ArrayList<>();
    for (FileRun run : group) {
      cursors.add(new FileRunCursor(run, numFields));
    }
    SpillFile file = store.create();
    files.add(file);
    long rows = 0;
    try (RunWriter writer = new RunWriter(file.openForWrite(), keys.numWords)) {
      MergeTree tree = new CursorMerge(cursors, keys).tree();
      for (int s = tree.next(); s >= 0; s = tree.next()) {
        if ((++rows & (KILL_CHECK_ROWS - 1)) == 0) {
          killCheck.run();
        }
        FileRunCursor c = cursors.get(s);
        UnsafeRow row = c.row();
        writer.write(c.key(), row.getBaseObject(), row.getBaseOffset(), row.getSizeInBytes());
      }
    } finally {
      for (FileRunCursor c : cursors) {
        c.close();
      }
    }
    return new FileRun(file, rows, keys.numWords);
  }

  /** Spark asks for memory for another consumer of the task: write what can be written. */
  @Override
  public long spillForOthers() throws IOException {
    if (spilling) {
      return 0;
    }
    if (phase == Phase.INTAKE && (builder.numRows() > 0 || !memoryRuns.isEmpty())) {
      return spill();
    }
    if (phase == Phase.OUTPUT && output != null) {
      spilling = true;
      try {
        long diskBefore = spillDiskBytes;
        long freed = output.spillInMemoryRuns(this::writeRun);
        if (freed > 0) {
          recordSpill(freed, spillDiskBytes - diskBefore);
        }
        return freed;
      } finally {
        spilling = false;
      }
    }
    return 0;
  }

  private void recordSpill(long memoryBytes, long diskBytes) {
    countIn(SPILLS, 1);
    SortMetrics.add(plan.metrics.spillSize, memoryBytes);
    SortMetrics.add(plan.metrics.numSpills, 1);
    if (task != null) {
      task.taskMetrics().incMemoryBytesSpilled(memoryBytes);
      task.taskMetrics().incDiskBytesSpilled(diskBytes);
    }
  }

  private void recordSortTime(long nanos) {
    sealNanosSoFar += nanos;
    SortMetrics.add(plan.metrics.sortTimeNanos, nanos);
    EngineStats.recordSortNanos(nanos);
  }

  /**
   * The most execution memory the sort held, in the node's metric and, as Spark's own sorts report
   * it, in the task's {@code peakExecutionMemory} (the UI's "Peak Execution Memory", event logs):
   * Spark counts there only what operators add, not what their consumers took.
   */
  private void recordPeakMemory() {
    long peakBytes = memory.peakBytes();
    SortMetrics.add(plan.metrics.peakMemory, peakBytes);
    if (task != null) {
      task.taskMetrics().incPeakExecutionMemory(peakBytes);
    }
  }

  /** Runs every one of {@code closers}; then throws the first failure, the others suppressed. */
  private static void closeAll(List<Runnable> closers) {
    RuntimeException failure = null;
    for (Runnable closer : closers) {
      try {
        closer.run();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Releases all memory and deletes every spill file; idempotent. */
  @Override
  public void close() {
    if (phase == Phase.DONE) {
      return;
    }
    phase = Phase.DONE;
    try {
      // Each in its own try: a run that fails to close (a device error while its rows come back)
      // must not keep the others' memory.
      closeAll(output == null ? List.of() : List.of(output::close));
      closeAll(memoryRuns.stream().<Runnable>map(run -> run::close).toList());
      memoryRuns.clear();
      builder.close();
    } finally {
      for (SpillFile file : files) {
        file.delete();
      }
      files.clear();
      fileRuns.clear();
      memory.setSpiller(null);
      long leaked = memory.getUsed();
      if (leaked != 0) {
        LOG.error("GpuSort still counted {} bytes of task memory when it closed", leaked);
        memory.unreserve(leaked);
      }
      recordPeakMemory();
      if (counted) {
        OPEN_SORTS.decrementAndGet();
      }
    }
  }
}
