package io.gpusort.engine.cuda;

import io.gpusort.config.GpuSortConf.Algorithm;
import io.gpusort.engine.DevicePieces;
import io.gpusort.engine.EngineException;
import io.gpusort.engine.EngineOptions;
import io.gpusort.engine.EngineStats;
import io.gpusort.engine.EngineTimes;
import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowPages;
import io.gpusort.engine.RowUpload;
import io.gpusort.engine.RunStarts;
import io.gpusort.engine.SortEngine;
import io.gpusort.memory.HostBuffer;
import java.util.List;
import jcuda.driver.CUdeviceptr;

/**
 * The CUDA engine: uploads a batch's key columns, sorts (key, row) pairs on the device with the
 * radix or the odd-even kernels, and downloads the permutation.
 *
 * <p>Keys of at most 32 significant bits are sorted as 32-bit keys, others one 64-bit word at a
 * time, least significant word first, each word's sort stable and carrying the order so far. A
 * batch larger than the device memory budget is split into pieces sorted one after another on the
 * device and merged on the host (the Kochi paper's split, sort on the device, merge on the host).
 * Sorted runs of keys of one word ({@link #sortRuns}) are merged on the device instead.
 *
 * <p>Thread-safe: tasks share the engine, at most {@code concurrentGpuTasks} on the device at once.
 */
public final class CudaEngine implements SortEngine {
  /** Device bytes per row beyond the key columns: ping-pong keys, two value arrays, scratch. */
  private static final long EXTRA_DEVICE_BYTES_PER_ROW = 8 + 8 + 8 + 8;
  /**
   * Under {@code algorithm=auto}, batches of keys of at most 32 bits up to this many rows go to the
   * odd-even kernels, larger ones to the radix sort. Measured on the H200 (BENCHMARKS.md,
   * 2026-11-30): odd-even 0.040 ms against radix 0.068 ms at 1e4 32-bit keys, radix ahead at 1e6
   * (0.096 against 0.146 ms).
   */
  static final int AUTO_ODDEVEN_MAX_ROWS_32 = 100_000;
  /**
   * The same for one 64-bit word: odd-even ahead at 1e4 (0.051 against 0.106 ms), level at 1e6
   * (0.176 against 0.172 ms), radix ahead from 1e7. Wider keys always take the radix sort, which
   * skips constant words and digits.
   */
  static final int AUTO_ODDEVEN_MAX_ROWS_64 = 1_000_000;
  /** The smallest pieces a sort is tried again in after the device ran out of memory. */
  static final int MIN_RETRY_PIECE_ROWS = 1 << 16;
  /**
   * How long a task whose device allocation failed waits for memory that other tasks hold to be
   * given back (a sort's memory is held for milliseconds to a second on the H200), once a call.
   */
  static final long MEMORY_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

  private final EngineOptions options;
  private final CudaDevice device;
  private volatile boolean closed;

  /**
   * Opens the device {@code options.cudaDevice()} (0 when -1).
   *
   * @throws EngineException when the driver, the device or the kernels cannot be loaded
   */
  public CudaEngine(EngineOptions options) {
    if (!Cuda.available()) {
      throw new EngineException("no CUDA device: " + Cuda.unavailableReason());
    }
    this.options = options;
    int ordinal = Math.max(0, options.cudaDevice());
    if (ordinal >= Cuda.deviceCount()) {
      throw new EngineException("CUDA device " + ordinal + " asked for, but the driver reports "
          + Cuda.deviceCount());
    }
    try {
      device = CudaDevice.acquire(ordinal, options.deviceMemoryBudgetBytes(),
          options.concurrentGpuTasks());
    } catch (EngineException e) {
      throw e;
    } catch (RuntimeException | LinkageError e) {
      // A kernel binary missing from the classpath, JCuda's native library refusing to load, ...
      throw new EngineException("CUDA device " + ordinal + " could not be opened: " + e, e);
    }
  }

  /** Whether a CUDA device can be used in this process. */
  public static boolean available() {
    return Cuda.available();
  }

  /** Why {@link #available()} is false, or null. */
  public static String unavailableReason() {
    return Cuda.unavailableReason();
  }

  @Override
  public String name() {
    return "cuda";
  }

  /** The device's name and ordinal, for logs. */
  public String deviceDescription() {
    return device.name + " (device " + device.ordinal + ", sm_" + device.computeCapability + ")";
  }

  /** The device memory budget of this engine's device. */
  public long deviceBudgetBytes() {
    return device.memory.budgetBytes();
  }

  /** Waits until the device's workspaces, made in the background when it opened, are ready. */
  void awaitPrepared() throws InterruptedException {
    device.awaitPrepared();
  }

  /** Device memory held by sorts in progress, excluding idle workspaces and cached blocks. */
  public long deviceBytesInUse() {
    return device.memory.inUseBytes() - device.idleWorkspaceBytes();
  }

  /** Device memory allocated by this engine's device, cached blocks included. */
  public long deviceBytesAllocated() {
    return device.memory.allocatedBytes();
  }

  @Override
  public void sort(KeyBatch keys, HostBuffer permutation) {
    if (closed) {
      throw new IllegalStateException("engine closed");
    }
    if (DevicePieces.checkAndSortTrivial(keys, permutation)) {
      return;
    }
    int n = keys.numRows();
    int words = (keys.keyBits() + 63) / 64;
    Workspace ws = beginTask();
    boolean healthy = false;
    try {
      sortRetrying(ws, keys, words, permutation);
      healthy = true;
    } finally {
      device.done(ws, healthy);
    }
  }

  /**
   * Sorts in pieces as large as the device memory left allows (one piece where the batch fits),
   * merged on the host. Where an allocation fails nonetheless (rows sent ahead and rows coming
   * back hold memory without a task slot; another process may share the device), the task waits
   * once for memory other tasks hold to be given back and tries again, then tries pieces half the
   * size, down to {@link #MIN_RETRY_PIECE_ROWS} (tried twice); past that the failure goes to the
   * caller, which sorts on the CPU engine. An exhausted device leaves the stream usable: nothing was launched on
   * the memory that was not there.
   */
  private void sortRetrying(Workspace ws, KeyBatch keys, int words, HostBuffer permutation) {
    int n = keys.numRows();
    int pieceRows = (int) Math.min(n, rowsPerPiece(words));
    boolean waited = false;
    boolean smallestTried = false;
    while (true) {
      try {
        sortPieces(ws, keys, words, pieceRows, permutation);
        return;
      } catch (DeviceMemoryExhaustedException e) {
        if (!waited) {
          waited = true;
          if (awaitMemory()) {
            EngineStats.recordDeviceRetry();
            continue;
          }
        }
        if (pieceRows > MIN_RETRY_PIECE_ROWS) {
          pieceRows = Math.max(MIN_RETRY_PIECE_ROWS, pieceRows / 2);
        } else if (smallestTried) {
          throw e;
        } else {
          smallestTried = true;
        }
        EngineStats.recordDeviceRetry();
      }
    }
  }

  private void sortPieces(Workspace ws, KeyBatch keys, int words, int pieceRows,
      HostBuffer permutation) {
    int n = keys.numRows();
    if (n <= pieceRows) {
      sortPiece(ws, keys, words, 0, n, permutation);
    } else {
      DevicePieces.sortAndMerge(keys, pieceRows, permutation,
          (from, count) -> sortPiece(ws, keys, words, from, count, permutation));
    }
  }

  /**
   * Waits up to {@link #MEMORY_WAIT_NANOS} for other tasks to give device memory back; false at
   * once where they hold none that they will give back (idle workspaces keep theirs).
   */
  private boolean awaitMemory() {
    long inUse = device.memory.inUseBytes();
    if (inUse - device.idleWorkspaceBytes() <= 0) {
      return false;
    }
    long start = System.nanoTime();
    try {
      return device.memory.awaitRelease(inUse, MEMORY_WAIT_NANOS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EngineException("interrupted while waiting for device memory", e);
    } finally {
      EngineTimes.ofThread().waitNanos += System.nanoTime() - start;
    }
  }

  /**
   * Merges the runs on the device (kernels/cuda/merge.cu) where the keys have one significant
   * word, there are at least two non-empty runs and the batch fits the device at once: 2.5-6x
   * faster than the radix sort of their concatenation on the H200 (kernels/bench/merge_bench.cu,
   * 4 to 64 runs). Keys of at most 32 bits are merged as the 64-bit words they are held in. One
   * non-empty run is the input order; other batches are sorted ({@link #sort}).
   */
  @Override
  public void sortRuns(KeyBatch keys, int[] runStarts, HostBuffer permutation) {
    if (closed) {
      throw new IllegalStateException("engine closed");
    }
    int n = keys.numRows();
    RunStarts.check(runStarts, n);
    DevicePieces.checkPermutation(keys, permutation);
    int runs = RunStarts.nonEmpty(runStarts, n);
    if (runs <= 1) {
      DevicePieces.fillIdentity(permutation.address(), n);
      return;
    }
    if (keys.keyBits() == 0 || keys.keyBits() > 64 || n > rowsPerPiece(1)) {
      sort(keys, permutation);
      return;
    }
    Workspace ws = beginTask();
    boolean healthy = false;
    boolean merged = false;
    try {
      try (Stage stage = new Stage(ws, keys, 1, 0, n, permutation, runStarts)) {
        stage.start();
        stage.sortAndDownload();
        stage.complete();
      }
      merged = true;
      healthy = true;
    } catch (DeviceMemoryExhaustedException e) {
      // The merge needs the whole batch on the device; a sort can go in pieces (after the slot
      // is given back: it takes one of its own).
      EngineStats.recordDeviceRetry();
      healthy = true;
    } finally {
      device.done(ws, healthy);
    }
    if (merged) {
      EngineStats.recordMerge(n, runs);
    } else {
      sort(keys, permutation);
    }
  }

  @Override
  public boolean gathersRowsOnDevice() {
    return true;
  }

  /**
   * Gathers the rows on the device (kernels/cuda/rows.cu) and waits for them to be back; false,
   * with the pages unchanged, when they do not fit the device memory left.
   */
  @Override
  public boolean gatherRows(RowPages rows, HostBuffer permutation) {
    RowArrival arrival = gatherRows(rows, permutation, null);
    if (arrival == null) {
      return false;
    }
    arrival.close();
    EngineTimes.ofThread().fromDeviceNanos += arrival.fromDeviceNanos();
    return true;
  }

  @Override
  public RowUpload openRowUpload() {
    if (closed) {
      throw new IllegalStateException("engine closed");
    }
    return new CudaRowUpload(device);
  }

  /**
   * Gathers the rows on the device when the pages, twice over (once where {@code uploaded} holds
   * them already), and their index fit the device memory left; null, with the pages unchanged,
   * when they do not. Returns once the copies back are under way, holding the device slot only
   * until then.
   */
  @Override
  public RowArrival gatherRows(RowPages rows, HostBuffer permutation, RowUpload uploaded) {
    if (closed) {
      throw new IllegalStateException("engine closed");
    }
    rows.checkPermutation(permutation);
    if (rows.numRows() <= 1) {
      return RowArrival.DONE;
    }
    CudaRowUpload upload =
        uploaded instanceof CudaRowUpload u && u.device == device ? u : null;
    Workspace ws = beginTask();
    boolean healthy = false;
    try {
      RowArrival arrival = gatherWaitingOnce(ws, rows, permutation, upload);
      healthy = true;
      return arrival;
    } finally {
      device.done(ws, healthy);
    }
  }

  /**
   * The gather, where the memory it needs is free or, after one wait for other tasks to give
   * some back, has become free; null otherwise. A gather that runs out of memory part way leaves
   * the pages as they were (no copy back had started, rows the upload alone held are brought
   * back) and its upload stopped, so the second try sends every page itself.
   */
  private RowArrival gatherWaitingOnce(Workspace ws, RowPages rows, HostBuffer permutation,
      CudaRowUpload upload) {
    for (boolean waited = false; ; waited = true) {
      // Blocks under 256 MiB are rounded up to powers of two by the pool: leave room for that.
      long needed = DeviceRowGather.deviceBytes(rows) * 3 / 2
          - (upload == null ? 0 : upload.deviceBytes());
      if (needed <= device.memory.budgetBytes() - device.memory.inUseBytes()) {
        try (DeviceRowGather gather = new DeviceRowGather(ws, rows, permutation)) {
          return gather.run(upload);
        } catch (DeviceMemoryExhaustedException e) {
          // Taken meanwhile by uploads and streams still coming back, which wait for no slot.
          EngineStats.recordDeviceRetry();
        }
      }
      if (waited || needed > device.memory.budgetBytes() || !awaitMemory()) {
        return null;
      }
    }
  }

  /** Waits for a GPU-task slot and its workspace; give both back with {@code device.done}. */
  private Workspace beginTask() {
    long start = System.nanoTime();
    try {
      Workspace ws = device.begin();
      EngineTimes.ofThread().waitNanos += System.nanoTime() - start;
      return ws;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EngineException("interrupted while waiting for the GPU", e);
    }
  }

  /** Rows whose sort fits the device memory budget at once. */
  private long rowsPerPiece(int words) {
    // Blocks under 256 MiB are rounded up to powers of two by the pool: leave room for that.
    long bytesPerRow = (8L * words + EXTRA_DEVICE_BYTES_PER_ROW) * 3 / 2;
    long available = device.memory.budgetBytes() - device.memory.inUseBytes();
    return Math.max(1 << 20, available / bytesPerRow);
  }

  /**
   * Sorts rows {@code [from, from + count)} on the device into {@code permutation} at the same
   * rows, as indices relative to {@code from}.
   */
  private void sortPiece(Workspace ws, KeyBatch keys, int words, int from, int count,
      HostBuffer permutation) {
    try (Stage stage = new Stage(ws, keys, words, from, count, permutation)) {
      stage.start();
      stage.sortAndDownload();
      stage.complete();
    }
  }

  /**
   * Overlaps batches on two streams: while batch i sorts, batch i + 1 uploads and batch i - 1
   * downloads. Falls back to one batch after another when a batch needs the device to itself.
   */
  @Override
  public void sortAll(List<KeyBatch> batches, List<HostBuffer> permutations) {
    int k = batches.size();
    if (k != permutations.size()) {
      throw new IllegalArgumentException(k + " batches but " + permutations.size()
          + " permutations");
    }
    if (k < 2 || !fitTwoAtOnce(batches)) {
      SortEngine.super.sortAll(batches, permutations);
      return;
    }
    Workspace first = beginTask();
    Workspace second = null;
    Stage[] stages = new Stage[k];
    boolean healthy = false;
    boolean pipelined = false;
    try {
      second = device.beginExtra();
      Workspace[] ws = {first, second};
      for (int i = 0; i < 2; i++) {
        stages[i] = stage(ws[i], batches.get(i), permutations.get(i));
        stages[i].start();
      }
      stages[0].sortAndDownload();
      for (int i = 1; i < k; i++) {
        stages[i].sortAndDownload();
        stages[i - 1].complete();
        stages[i - 1].close();
        if (i + 1 < k) {
          stages[i + 1] = stage(ws[(i + 1) % 2], batches.get(i + 1), permutations.get(i + 1));
          stages[i + 1].start();
        }
      }
      stages[k - 1].complete();
      pipelined = true;
      healthy = true;
    } catch (DeviceMemoryExhaustedException e) {
      // Two batches at once did not fit after all: one after another, each retried alone.
      EngineStats.recordDeviceRetry();
      healthy = true;
    } finally {
      for (Stage stage : stages) {
        if (stage != null) {
          stage.close();
        }
      }
      if (second != null) {
        device.doneExtra(second, healthy);
      }
      device.done(first, healthy);
    }
    if (!pipelined) {
      SortEngine.super.sortAll(batches, permutations);
    }
  }

  private Stage stage(Workspace ws, KeyBatch keys, HostBuffer permutation) {
    DevicePieces.checkPermutation(keys, permutation);
    return new Stage(ws, keys, (keys.keyBits() + 63) / 64, 0, keys.numRows(), permutation);
  }

  private boolean fitTwoAtOnce(List<KeyBatch> batches) {
    for (KeyBatch b : batches) {
      int words = (b.keyBits() + 63) / 64;
      if (words > 0 && b.numRows() > rowsPerPiece(words) / 2) {
        return false;
      }
    }
    return true;
  }

  /**
   * One batch or piece on a workspace: upload ({@link #start}), sort and download ({@link
   * #sortAndDownload}), wait ({@link #complete}). Its device buffers go back to the pool on
   * {@link #close}, after the stream is done with them.
   */
  private final class Stage implements AutoCloseable {
    private final Workspace ws;
    private final KeyBatch keys;
    private final int words;
    private final int from;
    private final int count;
    private final HostBuffer permutation;
    private final Algorithm algorithm;
    /** The sorted runs to merge (one-word keys), or null to sort by {@link #algorithm}. */
    private final int[] runStarts;
    private DeviceBuffer columns;
    private DeviceSort sort;
    private boolean identity;
    /** Marks: before the upload, after it, after the sort, after the download. */
    private StageClock clock;

    Stage(Workspace ws, KeyBatch keys, int words, int from, int count, HostBuffer permutation) {
      this(ws, keys, words, from, count, permutation, null);
    }

    Stage(Workspace ws, KeyBatch keys, int words, int from, int count, HostBuffer permutation,
        int[] runStarts) {
      this.ws = ws;
      this.runStarts = runStarts;
      this.keys = keys;
      this.words = words;
      this.from = from;
      this.count = count;
      this.permutation = permutation;
      this.algorithm = chooseAlgorithm(keys.keyBits(), count);
    }

    void start() {
      if (count <= 1 || words == 0) {
        identity = true;
        return;
      }
      clock = new StageClock(4);
      clock.mark(0, ws.stream);
      columns = device.memory.allocate(8L * words * count, DeviceFaults.Phase.UPLOAD);
      for (int w = 0; w < words; w++) {
        Transfers.upload(ws, keys.words().address() + keys.columnOffset(w) + 8L * from,
            keys.words().isPinned(), columns.at(8L * w * count), 8L * count);
      }
      clock.mark(1, ws.stream);
      sort = new DeviceSort(ws, columns, words, count, keys.keyBits() <= 32);
      if (runStarts == null && algorithm == Algorithm.RADIX) {
        sort.enqueueFirstCounts();
      }
    }

    void sortAndDownload() {
      if (identity) {
        return;
      }
      CUdeviceptr result = runStarts != null ? sort.mergeRuns(runStarts)
          : algorithm == Algorithm.ODDEVEN ? sort.oddeven() : sort.radix();
      long target = permutation.address() + 4L * from;
      clock.mark(2, ws.stream);
      DeviceFaults.check(DeviceFaults.Phase.DOWNLOAD, 4L * count);
      if (result == null) {
        identity = true;
      } else if (permutation.isPinned()) {
        Transfers.enqueueDownload(ws, result, target, 4L * count);
      } else {
        Transfers.downloadStaged(ws, result, target, 4L * count);
      }
      clock.mark(3, ws.stream);
    }

    void complete() {
      if (sort != null) {
        ws.synchronize();
        EngineTimes times = EngineTimes.ofThread();
        times.toDeviceNanos += clock.nanosBetween(0, 1);
        times.sortNanos += clock.nanosBetween(1, 2);
        times.fromDeviceNanos += clock.nanosBetween(2, 3);
      }
      if (identity) {
        DevicePieces.fillIdentity(permutation.address() + 4L * from, count);
      }
    }

    @Override
    public void close() {
      if (clock != null) {
        clock.close();
        clock = null;
      }
      if (sort == null && columns == null) {
        return;
      }
      // Buffers go back to the pool only once the stream has finished with them; after a failure
      // the stream may report the same error again, which changes nothing here.
      jcuda.driver.JCudaDriver.cuStreamSynchronize(ws.stream);
      if (sort != null) {
        sort.close();
        sort = null;
      }
      if (columns != null) {
        columns.close();
        columns = null;
      }
    }
  }

  private Algorithm chooseAlgorithm(int keyBits, int n) {
    Algorithm chosen = options.algorithm();
    if (chosen != Algorithm.AUTO) {
      return chosen;
    }
    if (keyBits <= 32) {
      return n <= AUTO_ODDEVEN_MAX_ROWS_32 ? Algorithm.ODDEVEN : Algorithm.RADIX;
    }
    return keyBits <= 64 && n <= AUTO_ODDEVEN_MAX_ROWS_64 ? Algorithm.ODDEVEN : Algorithm.RADIX;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      device.release();
    }
  }
}
