package io.gpusort.engine.cpu;

import io.gpusort.engine.EngineException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Runs one step of a sort over every range of a {@link RowRanges}: range 0 on the calling thread,
 * the others on the engine's pool, and returns only when all of them have finished, failed or not.
 * Waiting for every range before reporting a failure matters: a range still running may read the
 * caller's off-heap keys, which the caller frees as soon as {@code sort} returns.
 */
final class RangeRunner {
  /** The work of one step on rows {@code [startRow, endRow)}, which form range {@code range}. */
  @FunctionalInterface
  interface RangeTask {
    void run(int range, int startRow, int endRow);
  }

  private final ExecutorService pool;
  private final RowRanges ranges;

  /** {@code pool} may be null when {@code ranges} has a single range. */
  RangeRunner(ExecutorService pool, RowRanges ranges) {
    if (pool == null && ranges.count() > 1) {
      throw new IllegalArgumentException("no pool for " + ranges.count() + " ranges");
    }
    this.pool = pool;
    this.ranges = ranges;
  }

  RowRanges ranges() {
    return ranges;
  }

  /**
   * Runs {@code task} on every range and waits for all of them.
   *
   * @param stepName names the step in the exception if a range fails
   * @throws EngineException if any range failed (the first failure is the cause)
   */
  void forEachRange(String stepName, RangeTask task) {
    int numRanges = ranges.count();
    if (numRanges == 1) {
      task.run(0, 0, ranges.numRows());
      return;
    }
    Future<?>[] futures = new Future<?>[numRanges - 1];
    Throwable failure = null;
    try {
      for (int r = 1; r < numRanges; r++) {
        final int range = r;
        futures[r - 1] = pool.submit(() -> task.run(range, ranges.start(range), ranges.end(range)));
      }
      task.run(0, 0, ranges.end(0));
    } catch (RuntimeException | Error e) {
      failure = e;
    }
    failure = awaitAll(futures, failure);
    if (failure instanceof Error) {
      throw (Error) failure;
    }
    if (failure != null) {
      throw new EngineException("cpu sort step '" + stepName + "' failed on " + ranges.numRows()
          + " rows in " + numRanges + " ranges", failure);
    }
  }

  /**
   * Waits for every submitted range, even when interrupted (the interrupt is re-asserted after), and
   * returns the first failure seen.
   */
  private static Throwable awaitAll(Future<?>[] futures, Throwable firstFailure) {
    Throwable failure = firstFailure;
    boolean interrupted = false;
    for (Future<?> future : futures) {
      if (future == null) {
        continue;
      }
      while (true) {
        try {
          future.get();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          failure = failure == null ? e.getCause() : failure;
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return failure;
  }
}
