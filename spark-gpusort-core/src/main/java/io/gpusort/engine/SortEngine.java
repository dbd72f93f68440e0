package io.gpusort.engine;

import io.gpusort.memory.HostBuffer;
import java.util.List;

/**
 * Sorts encoded keys. The one operation every engine (CPU, CUDA, Vulkan) implements, and the one
 * every test runs against each of them.
 */
public interface SortEngine extends AutoCloseable {
  /** A short name for logs and metrics: {@code cpu}, {@code cuda}, {@code vulkan}. */
  String name();

  /**
   * Writes into {@code permutation} (at least {@code 4 * keys.numRows()} bytes, one 32-bit int per
   * row) the row indices of {@code keys} in ascending key order, comparing keys as unsigned
   * big-endian numbers. The sort is stable: rows with equal keys keep ascending index order.
   *
   * @throws EngineException if the engine fails; the caller may retry on another engine
   */
  void sort(KeyBatch keys, HostBuffer permutation);

  /**
   * As {@link #sort}, for keys that arrive as sorted runs: the rows in {@code [runStarts[i],
   * runStarts[i + 1])}, the last run ending at {@code keys.numRows()}, are each already in
   * ascending key order (unsigned, as {@link #sort} compares), as a reducer's blocks are. The
   * result equals {@code sort(keys, permutation)} exactly: a stable merge of sorted runs, ties
   * taken from the earlier run first, is the stable sort of their concatenation. Runs may be empty
   * ({@code runStarts} then repeats a start). A GPU engine merges the runs instead of sorting
   * (cheaper where they are long); the default sorts. Where a run is not in order, the result is
   * unspecified.
   *
   * @param runStarts the first row of each run: at least one, the first 0, none decreasing, none
   *     past {@code keys.numRows()} ({@link RunStarts#check})
   * @throws IllegalArgumentException when {@code runStarts} does not describe runs of the batch
   * @throws EngineException as {@link #sort}
   */
  default void sortRuns(KeyBatch keys, int[] runStarts, HostBuffer permutation) {
    RunStarts.check(runStarts, keys.numRows());
    sort(keys, permutation);
  }

  /**
   * Sorts each batch into the permutation at the same index, as {@link #sort} would. A GPU engine
   * overlaps the transfers of one batch with the sort of another (upload of batch i + 1, sort of
   * batch i and download of batch i - 1 at once); the default sorts them one after another.
   *
   * @throws EngineException if the engine fails on any batch; the caller may retry all of them
   */
  default void sortAll(List<KeyBatch> batches, List<HostBuffer> permutations) {
    if (batches.size() != permutations.size()) {
      throw new IllegalArgumentException(batches.size() + " batches but " + permutations.size()
          + " permutations");
    }
    for (int i = 0; i < batches.size(); i++) {
      sort(batches.get(i), permutations.get(i));
    }
  }

  /**
   * Whether {@link #gatherRows} runs on a device: there it costs the task a copy each way, while
   * reading rows through the permutation on the host costs a cache miss or two per row. Engines
   * that answer false leave the rows where they are and the caller reads them through the
   * permutation.
   */
  default boolean gathersRowsOnDevice() {
    return false;
  }

  /**
   * Puts {@code rows} in {@code permutation} order: afterwards their pages hold the sorted stream
   * {@link RowPages} describes. The default gathers on the host ({@link RowPages#gatherOnHost}),
   * the reference every engine's gather is checked against.
   *
   * @return false when the engine cannot take the rows at once (a device too small); the pages are
   *     then unchanged
   * @throws EngineException if the engine fails with the pages unchanged (the caller may read the
   *     rows through the permutation instead)
   * @throws IllegalStateException if it fails once it has started to overwrite them: the rows are
   *     lost, and the task must fail
   */
  default boolean gatherRows(RowPages rows, HostBuffer permutation) {
    long start = System.nanoTime();
    rows.gatherOnHost(permutation);
    EngineTimes.ofThread().gatherNanos += System.nanoTime() - start;
    return true;
  }

  /**
   * A channel for sending a run's row pages to the device while the run is taken in, for a later
   * {@link #gatherRows(RowPages, HostBuffer, RowUpload)}; null where the engine has no device
   * (the default) or none can be opened now.
   */
  default RowUpload openRowUpload() {
    return null;
  }

  /**
   * As {@link #gatherRows(RowPages, HostBuffer)}, but the pages {@code uploaded} already sent (may
   * be null) are not sent again, and the engine may return before the sorted stream is back in the
   * pages: the caller reads it through the returned arrival, and closes it before it frees or
   * writes the pages. The upload may be closed once this returns.
   *
   * @return the arriving stream, or null when the engine cannot take the rows (pages unchanged)
   * @throws EngineException as {@link #gatherRows(RowPages, HostBuffer)}, pages unchanged
   * @throws IllegalStateException as {@link #gatherRows(RowPages, HostBuffer)}
   */
  default RowArrival gatherRows(RowPages rows, HostBuffer permutation, RowUpload uploaded) {
    return gatherRows(rows, permutation) ? RowArrival.DONE : null;
  }

  @Override
  default void close() {}
}
