package io.gpusort.sql;

import io.gpusort.engine.KeyBatch;
import io.gpusort.engine.RowArrival;
import io.gpusort.engine.RowUpload;
import io.gpusort.engine.RunStarts;
import io.gpusort.memory.HostBuffer;
import io.gpusort.memory.HostMemory;
import io.gpusort.memory.Tally;
import io.gpusort.merge.IntComparator;
import io.gpusort.merge.IntSorts;
import io.gpusort.merge.LoserTree;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * The intake stage of the row path: the run being filled. Each row is copied into the run's row
 * blocks and its key encoded, as it arrives, into the key columns the engine reads (page-locked
 * memory once a GPU engine runs); {@link #seal} sorts the run and hands its memory to a
 * {@link SortedRun}.
 *
 * <p>Memory: every byte is counted in the task's {@link SortMemory} before it is taken. Growing
 * the run's row index also reserves what sorting the run will need ({@link #SORT_BYTES_PER_ROW}),
 * so that sealing, and therefore spilling, never asks Spark for memory.
 */
final class RunBuilder implements AutoCloseable {
  /** What a run's rows are when they arrive, which says how {@link #seal} puts them in order. */
  enum Input {
    /** In no particular order (a partition's rows): sorted on the engine. */
    UNSORTED,
    /**
     * Sorted runs one after another (a reducer's blocks), merged on the host by a loser tree over
     * their keys; sorted on the engine where the runs are too short.
     */
    SORTED_RUNS_HOST_MERGE,
    /**
     * Sorted runs one after another, given to the engine as runs ({@code SortEngine.sortRuns}),
     * which a GPU merges on its device where the keys have one word: the runs are the maximal
     * non-decreasing stretches of the keys ({@link RunStarts#ascending}), at most
     * {@link #MAX_ENGINE_RUNS}; the engine sorts otherwise.
     */
    SORTED_RUNS_ENGINE_MERGE
  }

  /**
   * The most runs a batch is handed to the engine as (about a reducer's blocks); more, and the
   * batch is sorted: the merge tree's levels grow with the runs, the radix sort's passes do not.
   */
  static final int MAX_ENGINE_RUNS = 1024;
  /** Rows of the first row index where no estimate sizes it; it doubles from there. */
  static final int INITIAL_ROWS = 1024;
  /** The estimate's headroom: partitions of one input differ, an eighth more is asked for. */
  private static final int HEADROOM_SHIFT = 3;
  /**
   * Memory per row reserved for sorting a run: its permutation (4 bytes, up to 5 after the
   * pool's rounding) and the CPU engine's working arrays (24 bytes, {@code
   * CpuRadixEngine.workingBytes}), which also cover the host merge of presorted runs (8 bytes)
   * and the tie-break's scratch (4 bytes at most).
   */
  static final long SORT_BYTES_PER_ROW = 32;
  /** The smallest pooled buffer, which a small run's permutation may round up to. */
  static final long SORT_BYTES_SLACK = HostBuffer.sizeClassBytes(1);
  /** Above this many runs per row, merging presorted runs costs more than sorting again. */
  private static final int MIN_ROWS_PER_PRESORTED_RUN = 32;
  /** Rows between two checks for a killed task in the host loops of a seal. */
  private static final int KILL_CHECK_ROWS = 1 << 16;

  /** Keys the intakes of this process encoded straight from a column vector. */
  private static final Tally KEYS_FROM_COLUMNS = new Tally();
  /** Times a run's index of this process grew with rows in it, copying them. */
  private static final Tally INDEX_COPIES = new Tally();

  private final RowKeys keys;
  private final SortMemory memory;
  private final long pageBytes;
  private final boolean gatherOnHost;
  private final int numFields;
  private final long[] scratch;
  /** Points at the row just written by the columnar intake, to encode its key. */
  private final UnsafeRow written;
  private RowStore rows;
  /** Row index: the pointer of each row in {@link #rows}, 8 bytes a row of capacity. */
  private HostBuffer pointers;
  /** Key words, column-major with a stride of {@link #capacity}. */
  private HostBuffer keyWords;
  private int capacity;
  private int numRows;
  /** Counted for the index, the key words and the sort of {@link #capacity} rows. */
  private long reservedBytes;
  private final Supplier<RowUpload> uploads;
  /**
   * Rows the first row index of a run is sized for: each doubling copies the index so far, as
   * many bytes again as the final one, so a run whose rows are known ahead starts at its size.
   * Dropped to {@link #INITIAL_ROWS} once the pages were refused memory that such an index held.
   */
  private int firstCapacity;
  /** Bytes of each run's staging ring; 0 for none. */
  private final long stagingBytes;
  /** The run's pages on their way to the device, or null. */
  private RowUpload upload;
  private boolean uploadOpened;

  /**
   * @param uploads opens a channel that sends the run's pages to the engine's device as they fill
   *     (null from it, or null itself, where there is none)
   */
  RunBuilder(RowKeys keys, SortMemory memory, long pageBytes, boolean gatherOnHost,
      int numFields, Supplier<RowUpload> uploads) {
    this(keys, memory, pageBytes, gatherOnHost, numFields, uploads, INITIAL_ROWS);
  }

  /**
   * @param firstCapacity rows the first row index of each run is sized for where Spark grants
   *     the memory, as {@link #firstCapacity(long, long, int)} gives it; else {@link
   *     #INITIAL_ROWS}
   */
  RunBuilder(RowKeys keys, SortMemory memory, long pageBytes, boolean gatherOnHost,
      int numFields, Supplier<RowUpload> uploads, int firstCapacity) {
    this(keys, memory, pageBytes, gatherOnHost, numFields, uploads, firstCapacity, 0);
  }

  /**
   * @param stagingBytes host memory through which each run's rows go to the device where its
   *     upload {@link RowUpload#takesStagedRows} (a {@link StagingRing}); 0: rows are written in
   *     their pages and the pages sent
   */
  RunBuilder(RowKeys keys, SortMemory memory, long pageBytes, boolean gatherOnHost,
      int numFields, Supplier<RowUpload> uploads, int firstCapacity, long stagingBytes) {
    this.stagingBytes = stagingBytes;
    this.firstCapacity = firstCapacity;
    this.uploads = uploads;
    this.gatherOnHost = gatherOnHost;
    this.keys = keys;
    this.memory = memory;
    this.pageBytes = pageBytes;
    this.numFields = numFields;
    this.scratch = new long[keys.numWords];
    this.written = new UnsafeRow(numFields);
    this.rows = new RowStore(memory, pageBytes);
  }

  /** Keys the intakes of this process encoded straight from a column vector (for tests). */
  static long keysEncodedFromColumns() {
    return KEYS_FROM_COLUMNS.sum();
  }

  int numRows() {
    return numRows;
  }

  /** Bytes this run holds in the task's memory: rows, index, keys and the sort's reservation. */
  long heldBytes() {
    return reservedBytes + rows.heldBytes();
  }

  /** Bytes of the rows taken in, with their record headers. */
  long heldRowBytes() {
    return rows.dataBytes();
  }

  /** Makes room for one more row of {@code rowSize} bytes; false when Spark refused memory. */
  boolean tryMakeRoom(int rowSize) {
    if (numRows == capacity && !tryGrow()) {
      return false;
    }
    if (!uploadOpened) {
      openUpload();
    }
    if (rows.tryMakeRoom(rowSize)) {
      return true;
    }
    if (capacity > INITIAL_ROWS && capacity > 2L * numRows) {
      // The estimate's index holds memory the rows need (the task was granted it while it ran
      // alone, say): later runs grow their index with their rows, and an empty one starts over.
      firstCapacity = INITIAL_ROWS;
      if (numRows == 0) {
        releaseIndex();
        capacity = 0;
        return tryGrow() && rows.tryMakeRoom(rowSize);
      }
    }
    return false;
  }

  /**
   * Opens the run's upload before its first page is taken (opening it may start the engine, which
   * makes pages page-locked from then on) and has each full page sent, or the rows staged where
   * the upload takes them so.
   */
  private void openUpload() {
    uploadOpened = true;
    upload = uploads == null ? null : uploads.get();
    if (upload != null) {
      rows.onPageFull(upload::add);
      if (stagingBytes > 0 && upload.takesStagedRows()) {
        rows.stageThrough(new StagingRing(memory, upload, stagingBytes));
      }
    }
  }

  /**
   * Has the pages hold every row taken in, bringing back from the device those only it holds:
   * before the host reads the rows of a run that has not been put in order on the device.
   */
  private void restoreRows() {
    if (upload != null) {
      upload.restorePages();
    }
  }

  private void closeUpload() {
    rows.onPageFull(null);
    if (upload != null) {
      upload.close();
      upload = null;
    }
    uploadOpened = false;
  }

  /** Takes in one row after {@link #tryMakeRoom}: its bytes and its encoded key. */
  void append(UnsafeRow row) {
    index(rows.append(row), row);
  }

  /**
   * How many rows from {@code from} of the batch bound to {@code writer}, at most {@code count},
   * fit the run as it is, after {@link #tryMakeRoom}: the room left in the current page and in the
   * row index.
   */
  int rowsThatFit(ColumnarRowWriter writer, int from, int count) {
    return rows.roomFor(writer, from, Math.min(count, capacity - numRows));
  }

  /**
   * Takes in rows {@code [from, from + count)} of the batch bound to {@code writer} (at most
   * {@link #rowsThatFit}): written straight into the run's page, their keys encoded from there.
   */
  void append(ColumnarRowWriter writer, int from, int count) {
    long pointer = rows.append(writer, from, count);
    int keyOrdinal = keys.encoder.columnOrdinal();
    ColumnVector keyColumn = keyOrdinal < 0 ? null : writer.keyColumn(keyOrdinal);
    if (keyColumn != null) {
      // The key is one column: encoded from its vector in one loop; the records lie one after
      // another in one page, so each pointer is the one before plus its record.
      long at = pointers.address() + 8L * numRows;
      for (int j = 0; j < count; j++) {
        HostMemory.putLong(at + 8L * j, pointer);
        pointer += RowStore.recordBytes(writer.rowBytes(from + j));
      }
      keys.encoder.encodeColumn(keyColumn, from, count, keyWords.address() + 8L * numRows,
          8L * capacity);
      numRows += count;
      KEYS_FROM_COLUMNS.add(count);
      return;
    }
    for (int j = 0; j < count; j++) {
      int size = writer.rowBytes(from + j);
      rows.pointToWritten(written, pointer, size);
      index(pointer, written);
      // The records lie one after another in one page: the next pointer is an offset further.
      pointer += RowStore.recordBytes(size);
    }
  }

  /**
   * Takes in one row already encoded, after {@link #tryMakeRoom}: its key words at {@code entry}
   * in {@code chunk} (one after another), its {@code size} bytes at {@code row}; {@code exact}:
   * whether its key is exact (not a truncated prefix).
   */
  void appendEncoded(byte[] chunk, long entry, long row, int size, boolean exact) {
    long pointer = rows.append(chunk, row, size);
    HostMemory.putLong(pointers.address() + 8L * numRows, pointer);
    long keyAt = keyWords.address() + 8L * numRows;
    for (int w = 0; w < keys.numWords; w++) {
      HostMemory.putLong(keyAt + 8L * w * capacity,
          Platform.getLong(chunk, entry + 8L * w));
    }
    if (!exact) {
      keys.encoder.markKeysInexact();
    }
    numRows++;
  }

  /** Records the row at {@code pointer} in the index and its key in the key columns. */
  private void index(long pointer, UnsafeRow row) {
    HostMemory.putLong(pointers.address() + 8L * numRows, pointer);
    keys.encoder.encodeTo(row, keyWords.address() + 8L * numRows, 8L * capacity, scratch);
    numRows++;
  }

  /**
   * The first index size for a partition of {@code expectedRows} (0: unknown) in runs of at most
   * {@code runBytes} of rows and keys of {@code numWords} words: the rows and an eighth more, no
   * more than the smallest rows (a length word and one of row) could fill a run with.
   */
  static int firstCapacity(long expectedRows, long runBytes, int numWords) {
    if (expectedRows <= INITIAL_ROWS) {
      return INITIAL_ROWS;
    }
    long wanted = expectedRows + (expectedRows >> HEADROOM_SHIFT);
    long runRows = runBytes / (RowStore.RECORD_HEADER_BYTES + 8 + 8L * numWords);
    return (int) Math.max(INITIAL_ROWS, Math.min(KeyBatch.MAX_ROWS, Math.min(wanted, runRows)));
  }

  /** Times an index of this process grew with rows in it, copying them (for tests). */
  static long indexCopies() {
    return INDEX_COPIES.sum();
  }

  /**
   * Sizes the first index of the runs to come for {@code firstCapacity} rows (as {@link
   * #firstCapacity(long, long, int)} gives it), where the rows a partition holds are known only
   * once its sort has begun (a reducer, from the rows the map side wrote).
   */
  void expectCapacity(int firstCapacity) {
    this.firstCapacity = firstCapacity;
  }

  /** Rows the run's index holds now (for tests). */
  int capacity() {
    return capacity;
  }

  private boolean tryGrow() {
    if (capacity >= KeyBatch.MAX_ROWS) {
      return false;
    }
    // A run's first index at the estimate where Spark grants it; else from INITIAL_ROWS up.
    if (capacity == 0 && firstCapacity > INITIAL_ROWS && growTo(firstCapacity)) {
      return true;
    }
    return growTo((int) Math.min(KeyBatch.MAX_ROWS, capacity == 0 ? INITIAL_ROWS : 2L * capacity));
  }

  /** Moves the index to one of {@code newCapacity} rows; false, nothing changed, if refused. */
  private boolean growTo(int newCapacity) {
    long keyBytes = 8L * keys.numWords * newCapacity;
    long total = HostBuffer.sizeClassBytes(8L * newCapacity) + HostBuffer.sizeClassBytes(keyBytes)
        + SORT_BYTES_PER_ROW * newCapacity + SORT_BYTES_SLACK;
    if (!memory.tryReserve(total)) {
      return false;
    }
    HostBuffer newPointers = null;
    HostBuffer newKeys = null;
    try {
      newPointers = HostBuffer.acquireTransferable(8L * newCapacity);
      newKeys = HostBuffer.acquireTransferable(keyBytes);
    } catch (OutOfMemoryError e) {
      // The OS refused native memory that Spark's accounting allowed: spill as if refused.
      if (newPointers != null) {
        newPointers.close();
      }
      memory.unreserve(total);
      return false;
    }
    if (numRows > 0) {
      INDEX_COPIES.increment();
      HostMemory.copy(pointers.address(), newPointers.address(), 8L * numRows);
      for (int w = 0; w < keys.numWords; w++) {
        HostMemory.copy(keyWords.address() + 8L * w * capacity,
            newKeys.address() + 8L * w * newCapacity, 8L * numRows);
      }
    }
    releaseIndex();
    pointers = newPointers;
    keyWords = newKeys;
    capacity = newCapacity;
    reservedBytes = total;
    return true;
  }

  /**
   * Sorts the run, on the engine or, for {@code presortedRuns} input (a concatenation of sorted
   * runs), by merging them on the host ({@link Input#SORTED_RUNS_HOST_MERGE}); puts the rows in
   * that order where the engine gathers them on its device; hands its rows and keys to the
   * returned run and starts empty again. Asks Spark for no memory.
   */
  SortedRun seal(EngineStage engine, boolean presortedRuns, SortMetrics metrics,
      Runnable killCheck) {
    return seal(engine, presortedRuns ? Input.SORTED_RUNS_HOST_MERGE : Input.UNSORTED, metrics,
        killCheck);
  }

  /** As above, the rows put in order as {@code input} says they arrived. */
  SortedRun seal(EngineStage engine, Input input, SortMetrics metrics, Runnable killCheck) {
    if (numRows == 0) {
      throw new IllegalStateException("sealing an empty run");
    }
    int n = numRows;
    rows.finishStaging();
    compactKeyColumns(n);
    KeyBatch batch = new KeyBatch(keyWords, n, keys.numWords, keys.layout.keyBits());
    HostBuffer permutation = HostBuffer.acquireTransferable(4L * n);
    try {
      order(engine, input, batch, permutation, killCheck);
      // Exact keys (every string within its prefix) tie only where Spark's order ties too.
      if (keys.exact && !keys.encoder.keysExact()) {
        restoreRows();
        breakTies(batch, permutation, metrics, killCheck);
      }
    } catch (RuntimeException | Error e) {
      permutation.close();
      throw e;
    }
    RowArrival arrival;
    try {
      arrival = engine.gatherRows(rows.asPages(pointers, n), permutation, upload);
      if (arrival == null) {
        // Read through the permutation (or gathered on the host): from the pages.
        restoreRows();
      }
    } catch (RuntimeException | Error e) {
      permutation.close();
      throw e;
    } finally {
      closeUpload();
    }
    if (arrival == null && gatherOnHost && gatherOnHost(n, permutation, metrics)) {
      arrival = RowArrival.DONE;
    }
    long indexBytes = pointers.sizeBytes() + keyWords.sizeBytes() + permutation.sizeBytes();
    memory.unreserve(reservedBytes - indexBytes);
    SortedRun run = new SortedRun(memory, rows, pointers, keyWords, permutation, n, keys.numWords,
        indexBytes, arrival);
    rows = new RowStore(memory, pageBytes);
    pointers = null;
    keyWords = null;
    capacity = 0;
    numRows = 0;
    reservedBytes = 0;
    keys.encoder.resetKeysExact();
    return run;
  }

  /** Writes the run's sorted order into {@code permutation}, as {@code input} says. */
  private void order(EngineStage engine, Input input, KeyBatch batch, HostBuffer permutation,
      Runnable killCheck) {
    switch (input) {
      case UNSORTED -> engine.sort(batch, permutation);
      case SORTED_RUNS_HOST_MERGE -> {
        // Merging compares rows where truncated keys tie: the host reads them.
        restoreRows();
        if (!mergePresorted(batch, permutation, killCheck)) {
          engine.sort(batch, permutation);
        }
      }
      case SORTED_RUNS_ENGINE_MERGE -> {
        int[] runStarts = RunStarts.ascending(batch, MAX_ENGINE_RUNS);
        if (runStarts == null) {
          engine.sort(batch, permutation);
        } else {
          engine.sortRuns(batch, runStarts, permutation);
        }
      }
    }
  }

  /**
   * Copies the rows into sorted order on the host, in memory counted for the copy, when Spark
   * grants it; false, having done nothing, when it does not.
   */
  private boolean gatherOnHost(int n, HostBuffer permutation, SortMetrics metrics) {
    long start = System.nanoTime();
    long bytes = HostBuffer.sizeClassBytes(Math.max(8, rows.dataBytes()));
    if (!memory.tryReserve(bytes)) {
      return false;
    }
    try {
      rows.asPages(pointers, n).gatherOnHost(permutation);
    } finally {
      memory.unreserve(bytes);
    }
    SortMetrics.add(metrics.gatherTime, System.nanoTime() - start);
    return true;
  }

  /** Moves key column w from stride {@link #capacity} to stride n, as a {@link KeyBatch} has them. */
  private void compactKeyColumns(int n) {
    if (n == capacity) {
      return;
    }
    long base = keyWords.address();
    for (int w = 1; w < keys.numWords; w++) {
      // Overlapping ranges, copied downwards: Unsafe.copyMemory moves like memmove.
      HostMemory.copy(base + 8L * w * capacity, base + 8L * w * n, 8L * n);
    }
  }

  /**
   * Orders presorted runs (found from the keys themselves, so the order in which they arrived does
   * not matter) by a loser-tree merge; false, having done nothing, when they are so short that
   * sorting is cheaper.
   */
  private boolean mergePresorted(KeyBatch batch, HostBuffer permutation, Runnable killCheck) {
    int n = batch.numRows();
    IntComparator cmp = checked(rowComparator(batch), killCheck);
    int maxRuns = n / MIN_ROWS_PER_PRESORTED_RUN + 1;
    List<Integer> starts = new ArrayList<>();
    starts.add(0);
    for (int r = 1; r < n; r++) {
      if (cmp.compare(r - 1, r) > 0) {
        starts.add(r);
        if (starts.size() > maxRuns) {
          return false;
        }
      }
    }
    int[] runStarts = new int[starts.size() + 1];
    for (int i = 0; i < starts.size(); i++) {
      runStarts[i] = starts.get(i);
    }
    runStarts[starts.size()] = n;
    int[] identity = new int[n];
    for (int r = 0; r < n; r++) {
      identity[r] = r;
    }
    int[] merged = runStarts.length == 2 ? identity : LoserTree.merge(identity, runStarts, cmp);
    HostMemory.copyFromArray(merged, 0, permutation.address(), n);
    return true;
  }

  /**
   * Orders each group of rows whose truncated keys tie by Spark's exact comparison, in place in
   * {@code permutation}.
   */
  private void breakTies(KeyBatch batch, HostBuffer permutation, SortMetrics metrics,
      Runnable killCheck) {
    int n = batch.numRows();
    IntComparator exact = checked(exactComparator(), killCheck);
    long address = permutation.address();
    int start = 0;
    int checked = 0;
    while (start < n) {
      int first = HostMemory.getInt(address + 4L * start);
      int end = start + 1;
      while (end < n && sameKey(batch, first, HostMemory.getInt(address + 4L * end))) {
        end++;
      }
      int size = end - start;
      if (size > 1) {
        int[] group = new int[size];
        HostMemory.copyToArray(address + 4L * start, group, 0, size);
        IntSorts.sort(group, 0, size, exact);
        HostMemory.copyFromArray(group, 0, address + 4L * start, size);
        SortMetrics.add(metrics.tieBrokenRows, size);
      }
      if (end - checked >= KILL_CHECK_ROWS) {
        killCheck.run();
        checked = end;
      }
      start = end;
    }
  }

  private static boolean sameKey(KeyBatch batch, int a, int b) {
    for (int w = 0; w < batch.numWords(); w++) {
      if (batch.word(a, w) != batch.word(b, w)) {
        return false;
      }
    }
    return true;
  }

  /** Row indices compared by key words, then exactly when truncated keys tie. */
  private IntComparator rowComparator(KeyBatch batch) {
    IntComparator exact = keys.exact ? exactComparator() : null;
    return (a, b) -> {
      for (int w = 0; w < batch.numWords(); w++) {
        int c = Long.compareUnsigned(batch.word(a, w), batch.word(b, w));
        if (c != 0) {
          return c;
        }
      }
      return exact == null ? 0 : exact.compare(a, b);
    };
  }

  /** Row indices compared by Spark's ordering of their rows. */
  private IntComparator exactComparator() {
    UnsafeRow left = new UnsafeRow(numFields);
    UnsafeRow right = new UnsafeRow(numFields);
    return (a, b) -> {
      rows.pointTo(left, pointer(a));
      rows.pointTo(right, pointer(b));
      return keys.ordering.compare(left, right);
    };
  }

  private long pointer(int row) {
    return HostMemory.getLong(pointers.address() + 8L * row);
  }

  /** {@code cmp}, checking for a killed task every 65536 comparisons. */
  private static IntComparator checked(IntComparator cmp, Runnable killCheck) {
    int[] count = {0};
    return (a, b) -> {
      if ((++count[0] & (KILL_CHECK_ROWS - 1)) == 0) {
        killCheck.run();
      }
      return cmp.compare(a, b);
    };
  }

  private void releaseIndex() {
    if (pointers != null) {
      pointers.close();
      pointers = null;
    }
    if (keyWords != null) {
      keyWords.close();
      keyWords = null;
    }
    memory.unreserve(reservedBytes);
    reservedBytes = 0;
  }

  /** Frees everything the run holds; idempotent. */
  @Override
  public void close() {
    // Copies to the device may still read the pages.
    closeUpload();
    releaseIndex();
    rows.freeAllBut(-1);
    capacity = 0;
    numRows = 0;
    keys.encoder.resetKeysExact();
  }
}
